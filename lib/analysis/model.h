// The dataflow model of a traced pipeline (DESIGN.md section 4, the paper's
// operational analysis): per-node rates in minibatches per core-second,
// visit ratios, storage bytes per minibatch, dataset sizes and
// cacheability, the CPU and storage bounds on throughput, and the ranking of
// nodes by parallelism-scaled rate. Everything here is plain data; the
// report module turns it into text, markdown or JSON.
//
// Unbounded and unknown quantities are std::nullopt, never Inf or NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/window.h"
#include "base/env.h"
#include "base/status.h"
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
};

// Elements in one pass over a node.
struct Cardinality {
  enum class Kind { kFinite, kInfinite, kUnknown };
  Kind kind = Kind::kUnknown;
  double value = 0;
  // Interval when the value is estimated from a sample of files; equal to
  // value when exact.
  double lo = 0;
  double hi = 0;
  bool exact = false;
  // False when estimated from a single file: one file shows no spread, so
  // lo and hi mean nothing.
  bool interval_known = true;
  // Why it is unknown or infinite, in plain language.
  std::string why;

  bool finite() const { return kind == Kind::kFinite; }
};

// What holds a node back in the ranking.
enum class Limit {
  kCpu,         // CPU at its current parallelism, which may grow
  kSequential,  // already at the most cores it can use
  kStorage,     // the storage bandwidth share it needs is the lower rate
  kNone,        // costs no CPU and reads nothing: unbounded
  kCached,      // under a cache and idle in the window: no steady-state cost
};
const char* LimitName(Limit limit);

struct NodeModel {
  std::string name;
  std::string op;
  // Enclosing interleave when the node belongs to an interleave function.
  std::string interleave;
  int parallelism = 1;
  // Window deltas.
  int64_t elements = 0;
  int64_t bytes = 0;
  double cpu_seconds = 0;
  int64_t storage_bytes = 0;

  double visit_ratio = 0;
  double cpu_seconds_per_minibatch = 0;
  std::optional<double> rate_per_core;  // nullopt: unbounded (no CPU cost)
  double cores_used = 0;
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

struct Report {
  std::string source;  // the trace file
  std::string program;
  double window_start_seconds = 0;
  double window_end_seconds = 0;
  double window_seconds = 0;
  int64_t minibatches = 0;
  int snapshots = 0;
  double observed_throughput = 0;
  // Mean wait of the consumer per Next call on the output, and the share of
  // the window spent waiting; nullopt when the trace has no root stats.
  std::optional<double> consumer_wait_seconds;
  std::optional<double> consumer_wait_fraction;

  int cores = 0;
  uint64_t memory_bytes = 0;  // memory a cache may use before the fraction
  uint64_t total_memory_bytes = 0;
  std::optional<double> disk_bandwidth;
  std::string disk_bandwidth_from;
  // The bandwidth above was read off the calibrated curve at the traced read
  // parallelism (not a throttle or --disk-bandwidth), so more readers could
  // get more of it.
  bool disk_bandwidth_from_curve = false;  // "--disk-bandwidth", "trace throttle"

  double cpu_seconds_per_minibatch = 0;
  double disk_bytes_per_minibatch = 0;
  std::optional<double> cpu_bound;
  std::optional<double> cpu_bound_uncapped;
  std::string cpu_bound_limit;  // "cores" or the node whose cap binds
  std::optional<double> disk_bound;
  std::optional<double> predicted_throughput;
  std::string predicted_limit;  // "cpu" or "disk"

  std::string bottleneck;  // empty when nothing is bounded
  std::vector<std::string> ranking;

  double cache_budget_bytes = 0;
  uint64_t buffered_bytes = 0;
  std::string cache_node;  // empty: none fits
  double cache_bytes = 0;

  std::vector<NodeModel> nodes;  // program order
  std::vector<SourceEstimate> sources;
  std::vector<std::string> findings;
  std::vector<std::string> warnings;

  // The node named `name`, or null. Constant time: reports of 100,000-node
  // programs are looked up once per node. Not safe to call from two
  // threads at once on one Report (it keeps a lazily built index).
  const NodeModel* Find(const std::string& name) const;

 private:
  // Name -> position in `nodes`; rebuilt whenever it disagrees with them,
  // since `nodes` is public and may change after a lookup.
  mutable std::unordered_map<std::string, size_t> index_;
};

// The model of the trace's program over the window. `source` names the trace
// in messages.
StatusOr<Report> Analyze(const schema::TraceHeader& header, const SelectedWindow& window,
                         const AnalysisOptions& options, const std::string& source);

// Convenience over a whole trace in memory.
StatusOr<Report> AnalyzeTrace(const schema::Trace& trace, const AnalysisOptions& options, const std::string& source);

// Reads a trace file (binary: streamed record by record; JSON: parsed
// whole) and analyses it. A torn tail becomes a warning in the report.
StatusOr<Report> AnalyzeTraceFile(Env* env, const std::string& path, const AnalysisOptions& options);

}  // namespace plumber::analysis
