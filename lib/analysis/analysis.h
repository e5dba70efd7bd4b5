// The result of analysing a trace (the paper's operational
// analysis), as plain data: what it was computed from (the
// trace's header, its program graph and the machine as planned for), the
// per-node model (rates, visit ratios, storage bytes, sizes, cacheability),
// the bounds and the prediction, the ranking, the cache candidate, the
// plan of what a rewrite could reach (when asked for), and the findings and
// warnings in plain language. lib/report turns it into text, markdown,
// JSON, dot and HTML; lib/rewrite turns it into a pipeline.
//
// Unbounded and unknown quantities are std::nullopt, never Inf or NaN.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/dataloader_model.h"
#include "analysis/epoch_restart.h"
#include "analysis/plan.h"
#include "analysis/window.h"
#include "lp/linear_program.h"
#include "pipeline/cardinality.h"
#include "pipeline/program_graph.h"
#include "trace.pb.h"

namespace plumber::analysis {

struct AnalysisOptions {
  WindowSpec window;
  // What-if overrides of the machine the trace recorded.
  std::optional<int> cores;
  std::optional<uint64_t> memory_bytes;
  std::optional<double> disk_bandwidth_bytes_per_s;
  // Share of the free memory a cache may take: the rest is headroom for
  // allocator slack and the process itself.
  double cache_memory_fraction = 0.9;
  // Ceiling on the memory reading the trace may take (`--max-memory`). A
  // binary trace is streamed, so only its largest record counts; a JSON
  // trace is parsed whole. Input over it is refused with ResourceExhausted
  // before the allocation, naming the file and what to do instead.
  uint64_t max_memory_bytes = kDefaultMaxMemoryBytes;
  static constexpr uint64_t kDefaultMaxMemoryBytes = uint64_t{4} << 30;
  // Also solve the GLPK programs: the as-traced prediction from the
  // throughput LP (reconciled with the closed form, see prediction.h) and
  // the plan of what a rewrite could reach. analyze, rewrite, provision and
  // optimize ask for it; rank, check and diff use the closed form alone.
  bool solve_programs = false;
  // What the plan may do (a cache, a file cache and its room) and GLPK's
  // options. The plan is made here once: the rewrite applies the
  // Analysis' plan instead of solving again with options of its own.
  PlanOptions plan;
};

// What holds a node back in the ranking.
enum class Limit {
  kCpu,         // CPU at its current parallelism, which may grow
  kWait,        // its service (CPU and waiting) on the threads it has now
  kSequential,  // already at the most cores it can use
  kStorage,     // the storage bandwidth share it needs is the lower rate
  kNone,        // costs no CPU and reads nothing: unbounded
  kCached,      // under a cache and idle in the window: no steady-state cost
};
const char* LimitName(Limit limit);

// Where the cores planned for come from.
enum class CoresFrom {
  kGiven,    // --cores
  kRun,      // what the run had: clearly fewer than the machine's, since
             // other processes used the rest
  kMachine,  // the machine's (the trace's Machine.cores)
  kAssumed,  // 1: neither --cores nor the trace says
};
// "given", "run", "machine", "assumed": the JSON report's machine.cores_from.
const char* CoresFromName(CoresFrom from);

struct NodeModel {
  std::string name;
  std::string op;
  // The source's type of an imported node (Node.imported_type), else empty.
  std::string imported_type;
  // Enclosing interleave when the node belongs to an interleave function.
  std::string interleave;
  int parallelism = 1;
  // Window deltas.
  int64_t elements = 0;
  int64_t bytes = 0;
  double cpu_seconds = 0;
  // Of cpu_seconds, the process's CPU that tracing charged to no node and
  // the model charges to this pooled stage for its hand-offs
  // (UnchargedHandoffCpu, window.h); 0 for every other node.
  double handoff_cpu_seconds = 0;
  int64_t storage_bytes = 0;
  // Time the node's own work waited without CPU (storage requests, sleeps,
  // remote calls); 0 in traces that do not record it.
  double wait_seconds = 0;
  int64_t storage_requests = 0;
  // Mean latency of its storage requests; nullopt when it issued none.
  std::optional<double> request_latency_seconds;

  double visit_ratio = 0;
  double cpu_seconds_per_minibatch = 0;
  // w_i and s_i = c_i + w_i: the time the node holds a thread per
  // minibatch, which a thread group adds up.
  double wait_seconds_per_minibatch = 0;
  double service_seconds_per_minibatch = 0;
  // The thread group its own work runs in (index into
  // Analysis::thread_groups) and that group's threads.
  int group = -1;
  int threads = 1;
  // Most threads a rewrite may give it: 1 for a sequential op; for a
  // parallel one kMaxThreadsPerCore per core (waiting needs threads, not
  // cores), fewer when their buffers would not fit in memory.
  double max_threads = 1;
  std::optional<double> rate_per_core;  // nullopt: unbounded (no CPU cost)
  // CPU over the window's wall time; nullopt when that time is unknown.
  std::optional<double> cores_used;
  std::optional<double> bytes_per_element;
  double disk_bytes_per_minibatch = 0;
  double cores_now = 1;
  double max_cores = 1;
  // What caps max_cores, for the reader ("sequential op", "cycle_length 2
  // of shards", "8 cores").
  std::string cap_reason;
  std::optional<double> scaled_rate;  // nullopt: unbounded
  Limit limit = Limit::kNone;
  std::string limit_text;
  // A stage limited by waiting: the threads that lift its rate to the next
  // limit (the next-ranked stage as it runs, or the machine's CPU or
  // storage bound), at most max_threads; nullopt for every other stage.
  // More threads move the bottleneck elsewhere, so they gain nothing now.
  std::optional<double> threads_to_pass;

  Cardinality cardinality;
  std::optional<double> materialized_bytes;
  std::optional<double> materialized_lo;
  std::optional<double> materialized_hi;
  bool random = false;
  bool cacheable = false;
  // A random node at or below this one (empty if none): why it is not
  // cacheable.
  std::string random_below;
  bool steady_state_cost = true;
  bool reliable = true;  // counters did not go backwards in the window
  int depth = 0;         // hops from the output node
};

// Size of the data a reader reads, estimated from the files it completed.
struct SourceEstimate {
  std::string node;
  std::optional<int64_t> files;  // nullopt: unknown (unresolved glob)
  int64_t files_completed = 0;
  double mean_file_bytes = 0;
  double mean_records_per_file = 0;
  std::optional<double> dataset_bytes;
  double dataset_bytes_stderr = 0;
  // The 95% interval is +- this many standard errors (Student's t with
  // files_completed - 1 degrees of freedom).
  double interval_multiplier = 0;
  // False with a single completed file (no spread to measure).
  bool interval_known = true;
  double dataset_bytes_lo = 0;
  double dataset_bytes_hi = 0;
  bool exact = false;
};

// Threads shared by nodes, as traced (thread_groups.h), with their service.
struct GroupModel {
  std::string name;
  std::string owner;  // the node that starts the threads; empty: the consumer
  int threads = 1;
  bool serialized = false;
  std::vector<std::string> members;
  // Sum of the members' s_i, plus the consumer's model step for the
  // consumer's group.
  double service_seconds_per_minibatch = 0;
  std::optional<double> bound;  // threads / service; nullopt: no service
};

// The prediction for the pipeline exactly as configured (threads, caps and
// cache as traced): what it should measure now.
struct AsTraced {
  // Over whole epochs: the steady state below with the epoch restart's
  // fill and drain (epoch_restart.h) added to every epoch.
  std::optional<double> throughput;
  // The thread groups, the cores and storage alone.
  std::optional<double> steady_throughput;
  // The repeat whose input restarts each epoch, when its epoch is known.
  std::optional<EpochRestart> restart;
  // The node (or thread group) that holds it.
  std::string bottleneck;
  // "threads" (a thread group's service), "cpu" (the cores) or "storage".
  std::string limit;
};

// Ceiling on the threads a rewrite gives one stage, per core of the
// machine: enough for stages that mostly wait, bounded so that a pipeline
// never starts thousands of threads.
inline constexpr int kMaxThreadsPerCore = 64;

struct Analysis {
  std::string source;  // the trace file
  // The trace's header as recorded (machine, run options); its program is
  // in `graph`, validated and indexed.
  schema::TraceHeader header;
  std::shared_ptr<const ProgramGraph> graph;

  double window_start_seconds = 0;
  double window_end_seconds = 0;
  double window_seconds = 0;
  int64_t minibatches = 0;
  int snapshots = 0;
  // Minibatches/s over the window; nullopt when the time the counters cover
  // is unknown (an imported dump without --window: ImportInfo.window_known).
  std::optional<double> observed_throughput;
  // Mean wait of the consumer per Next call on the output, and the share of
  // the window spent waiting; nullopt when the trace has no root stats.
  std::optional<double> consumer_wait_seconds;
  std::optional<double> consumer_wait_fraction;

  // The machine planned for: the trace's, with the what-if overrides.
  // The cores are --cores when given, else the cores the run had when
  // clearly fewer than the machine's, else the machine's (model.cc).
  int cores = 0;
  CoresFrom cores_from = CoresFrom::kMachine;
  // Which cores and why, in plain language, for every report: "given by
  // --cores", "the run had 1.2 of the machine's 2 cores; other processes
  // used the rest", "the machine's 2 cores". No parentheses, so that a
  // report can put it in its own.
  std::string cores_source;
  // The machine's cores as the trace records them (0: not recorded).
  int machine_cores = 0;
  // The cores the run really had over the window: its own CPU time plus
  // the time the machine's CPUs sat idle, over the window's wall time, at
  // most machine_cores. Nullopt when the trace does not record the
  // machine's CPU time (older traces, imported dumps).
  std::optional<double> effective_cores;
  uint64_t memory_bytes = 0;  // memory a cache may use before the fraction
  uint64_t total_memory_bytes = 0;
  std::optional<double> disk_bandwidth;
  std::string disk_bandwidth_from;  // "--disk-bandwidth", "the trace's read throttle", ...
  // The bandwidth above was read off the calibrated curve at the traced read
  // parallelism (not a throttle or --disk-bandwidth), so more readers could
  // get more of it.
  bool disk_bandwidth_from_curve = false;

  double cpu_seconds_per_minibatch = 0;
  double disk_bytes_per_minibatch = 0;
  // The trace records waiting (TraceHeader.wait_traced); without it every
  // node's waiting reads 0 and the model is CPU-only.
  bool wait_traced = false;
  double wait_seconds_per_minibatch = 0;
  std::vector<GroupModel> thread_groups;
  // The tightest thread group at its current threads (bounds.wait) and
  // which; nullopt when no group has service.
  std::optional<double> wait_bound;
  std::string wait_bound_group;
  AsTraced as_traced;
  // CPU only: cores and per-stage caps, no storage rows.
  std::optional<double> cpu_bound;
  std::optional<double> cpu_bound_uncapped;
  std::string cpu_bound_limit;  // "cores" or the node whose cap binds
  std::optional<double> disk_bound;
  // The best parallelism's bound, over whole epochs (AsTraced::restart).
  std::optional<double> predicted_throughput;
  std::string predicted_limit;  // "cpu", "disk" or "wait"

  std::string bottleneck;  // empty when nothing is bounded
  std::vector<std::string> ranking;

  double cache_budget_bytes = 0;
  uint64_t buffered_bytes = 0;
  std::string cache_node;  // empty: none fits
  double cache_bytes = 0;

  std::vector<NodeModel> nodes;  // program order
  std::vector<SourceEstimate> sources;
  // With solve_programs, when anything is bounded: what a rewrite could
  // reach (structural caps, the cache MILP).
  std::optional<Plan> plan;
  std::vector<std::string> findings;
  std::vector<std::string> warnings;
  // An imported trace (TraceHeader.imported): what it came from, and what
  // that source could not tell, in plain language; every report states
  // them. Empty for plumber's own traces.
  std::string imported_from;
  // A PyTorch DataLoader's trace: its setting and what it measured beyond
  // the nodes (dataloader_model.h); nullopt for every other trace.
  std::optional<DataLoaderMeasured> dataloader;
  std::vector<std::string> source_limits;
  // Imported from a source that records wall time, not thread CPU: each
  // node's CPU figures are its service, an upper bound on its CPU.
  bool cpu_is_wall_time = false;

  // The program graph it was computed from; an Analysis that came from
  // Analyze always has one.
  const ProgramGraph& program_graph() const { return *graph; }
  const std::string& program_name() const { return graph->program().name(); }

  // The node named `name`, or null. Constant time: reports of 100,000-node
  // programs are looked up once per node. Not safe to call from two
  // threads at once on one Analysis (it keeps a lazily built index).
  const NodeModel* Find(const std::string& name) const;

 private:
  // Name -> position in `nodes`; rebuilt whenever it disagrees with them,
  // since `nodes` is public and may change after a lookup.
  mutable std::unordered_map<std::string, size_t> index_;
};

}  // namespace plumber::analysis
