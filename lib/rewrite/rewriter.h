// The rewrite: apply a plan to the traced program and say why each change
// was made. Integer parallelism per stage from the plan's cores (rounded
// up, at least 1, never more than the core budget in total, spare cores to
// the stage that can sustain least; the budget counts the threads of
// multi-threaded stages), the cache at the chosen node, the interleave widened
// to the read parallelism the bandwidth curve asks for, and a prefetch at
// the output sized from how long the consumer waited. The output is a valid
// pipeline with the same node names; new nodes are named after the node
// they serve ("decode_cache", "batch_prefetch"). The whole dataset is kept:
// nothing is truncated to make a cache fit.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/plan.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "rewrite/measured_costs.h"
#include "rewrite/reshape.h"

namespace plumber::rewrite {

struct Change {
  std::string node;    // node changed or added
  std::string what;    // "parallelism", "cache", "cycle_length", "prefetch", ...
  std::string before;  // "" for an added node
  std::string after;
  std::string why;
  // The model's throughput for the pipeline with this change and every one
  // listed before it (the changes are listed in the order they apply), so a
  // reader can see what each buys. On programs of over 256 nodes the
  // parallelism changes share one value, taken after all of them.
  double predicted_after = 0;
};

// The plan the rewrite applies is the Analysis' own (AnalysisOptions::plan
// says what it may do): the analysis is solved once, and the rewrite does
// not climb back up to solve it again.
struct RewriteOptions {
  bool allow_prefetch = true;
  // Costs measured in earlier runs of this pipeline (the optimize loop's
  // steps; may be null, must outlive the call): the model prices a stage
  // at a parallelism it was measured at with that measurement, not with
  // the traced cost (emitted_model.h).
  const MeasuredCosts* learned = nullptr;
};

// A stage whose learned cost at a parallelism the model used while
// searching: it priced at least one configuration the rewrite considered.
struct LearnedCost {
  std::string stage;
  int parallelism = 1;
};

struct RewriteResult {
  schema::Pipeline pipeline;
  analysis::Plan plan;
  std::vector<Change> changes;
  // Throughput the model predicts for the traced configuration, and for the
  // rewritten one (integer parallelism, the cache, the storage limits).
  double predicted_before = 0;
  double predicted_after = 0;
  // The model found nothing below the plan's ceiling for the rewritten
  // pipeline: every costed stage is under a cache the LP prices nothing
  // for, and predicted_after is only that ceiling. A cache the model
  // prices (its replay's copy) leaves a finite prediction, which the
  // reports show even when the LP's plan is unbounded.
  bool predicted_unbounded = false;
  // Cores held against the budget: the threads of multi-threaded stages,
  // never above the budget (single-threaded stages run one thread each,
  // as sequential stages do, and the LP accounts for their CPU). Plus
  // I/O-only readers added beyond them for latency-bound storage.
  int parallel_cores = 0;
  int io_readers = 0;
  // Bytes the rewritten pipeline is expected to hold in memory: the cache
  // plus the buffers already measured plus the added prefetch.
  double memory_bytes = 0;
  // What the plan proposed that the rewrite left out, and why (a cache or
  // a prefetch the model says gains nothing; the pipeline kept as given),
  // and the learned costs the model used.
  std::vector<std::string> notes;
  // Stages priced with costs measured in earlier runs (by stage, then
  // parallelism).
  std::vector<LearnedCost> learned;
  // The shape changes made before the knobs were tuned (shape_search.h);
  // empty when the search did not run.
  ShapeReport shape;
};

// The analysis gives the traced program, the model of the machine to plan
// for and the plan (made with AnalysisOptions::solve_programs; without it,
// FailedPrecondition).
StatusOr<RewriteResult> Rewrite(const analysis::Analysis& analysis, const RewriteOptions& options = {});

}  // namespace plumber::rewrite
