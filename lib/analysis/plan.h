// The plan: what the optimizer would do with a traced pipeline on a given
// machine, the bound the GLPK programs put on it. It turns the analysis
// model into the plain structs of lib/lp, solves the throughput LP (no
// cache) and the cache MILP, and says how many cores each stage should get,
// where to cache, and how wide to read. lib/rewrite applies it.
//
// A cache only pays when its elements are read again: a candidate must have
// a repeat (count -1 or > 1) somewhere between it and the output. The
// runtime reads a pipeline without one exactly once.
//
// Caps here are structural, not as configured: a map, batch or interleave
// may take every core; a reader inside an interleave function may too,
// since the rewrite can raise the interleave's cycle length; every other op
// gets one core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "lp/cache_choice.h"
#include "lp/linear_program.h"
#include "lp/provisioning.h"

namespace plumber::analysis {

struct Analysis;

struct PlanOptions {
  bool allow_cache = true;
  // Structural caps (what a rewrite may set: every parallel stage up to all
  // cores, readers up to all cores by widening the interleave) or the caps
  // of the program as traced (cycle_length bounds its readers), which is
  // what `plumber analyze` predicts for the program as it stands.
  bool structural_caps = true;
  // Where a file cache may go when memory is short, and the free space
  // there (bytes; 0: no file cache). The file must also be readable fast
  // enough: with a known storage bandwidth, reading the cache back shares it.
  std::string file_cache_dir;
  double file_cache_free_bytes = 0;
  lp::LinearProgram::Options lp;
};

struct StagePlan {
  std::string name;
  double cpu_seconds_per_minibatch = 0;
  double max_cores = 1;     // structural cap used by the programs
  double cores = 0;         // theta from the program (with the chosen cache)
  // CPU plus waiting per minibatch; the threads it may have, and those it
  // needs at the planned throughput (X s_i: Little's law), which exceed its
  // cores when it waits.
  double service_seconds_per_minibatch = 0;
  double max_threads = 1;
  double threads = 0;
  bool active = true;       // still works in steady state (not under the cache)
  bool parallelizable = false;
  std::string interleave;   // enclosing interleave for function nodes
};

struct Plan {
  int cores = 0;
  // Throughput LP without caching: what parallelism alone can reach.
  double throughput_without_cache = 0;
  std::string binding_without_cache;  // "cores", "stage:NAME", "storage", "bandwidth_curve"
  // The cache MILP: the best throughput with the chosen cache (if any).
  double throughput = 0;
  // True when the cache removes every limit the model knows: the pipeline
  // would replay from memory faster than anything measured, and `throughput`
  // is only the program's ceiling.
  bool unbounded = false;
  std::string cache_node;             // empty: no cache chosen
  // Set when the cache goes to a file (memory was short): its path.
  std::string cache_file;
  // Why no cache was considered at all, when that is the reason (e.g. the
  // pipeline reads its data once, so a cache would never be replayed).
  std::string cache_note;
  double cache_bytes = 0;
  double cache_budget_bytes = 0;
  // Storage the plan needs per minibatch and the bandwidth it assumes.
  double disk_bytes_per_minibatch = 0;
  std::optional<double> disk_bandwidth;
  // Read parallelism the bandwidth curve asks for to sustain `throughput`
  // (absent when the trace holds no curve or nothing is read).
  std::optional<int> read_parallelism;
  std::vector<StagePlan> stages;      // program order

  const StagePlan* Find(const std::string& name) const;
};

// The program as lib/lp sees it: one node per program node (program order)
// with its cost, its caps (structural or as traced), its consumers, and
// whether a cache may go after it (finite and deterministic, outside any
// interleave function, re-read by a repeat above it, and saving work: a
// cache of a subtree that costs next to nothing, like a list of file names,
// only takes memory).
struct PlanGraph {
  std::vector<StagePlan> stages;
  std::vector<lp::CacheNode> nodes;
  int root = 0;
  // Nodes that could be cached but are read only once.
  int read_once = 0;
  // The program's own cache, if it has one (the first in node order).
  std::string traced_cache;
};
StatusOr<PlanGraph> BuildPlanGraph(const Analysis& analysis, bool structural_caps);

// The provisioning program for reaching `target` minibatches/s (see
// lp/provisioning.h), over the same graph as the plan.
StatusOr<lp::ProvisionProblem> MakeProvisionProblem(const Analysis& analysis, double target);

// The least-cost machine that reaches `target` at `prices`, and where it
// caches (empty: no cache pays off). FailedPrecondition, with the reason,
// when no machine reaches it.
struct Provisioning {
  double target = 0;
  lp::ResourcePrices prices;
  lp::ProvisionPlan machine;
  std::string cache_node;
  // Why the bandwidth is what it is when that is not plain: "" or, for a
  // plan that reads nothing, "the cache after shards replays ..." .
  std::string bandwidth_note;
  // What the reader should know of the flags given: what-ifs of the traced
  // machine that a plan choosing its own machine does not use.
  std::vector<std::string> notes;
  // The evaluator's check (rewrite/provision.h): the pipeline the rewrite
  // emits for this machine, as the evaluator predicts it there; nullopt
  // when not checked. The MILP gives stages fractional cores; whole threads
  // may need more, and `machine.cores` is then raised to what they need,
  // `lp_cores` keeping the MILP's answer.
  std::optional<double> rewritten_throughput;
  int lp_cores = 0;
};
StatusOr<Provisioning> PlanProvisioning(const Analysis& analysis, double target, const lp::ResourcePrices& prices);

// The analysis gives the program, the machine's bandwidth curve and the
// model (with any --cores/--mem/--disk-bandwidth what-ifs applied).
StatusOr<Plan> MakePlan(const Analysis& analysis, const PlanOptions& options = {});

}  // namespace plumber::analysis
