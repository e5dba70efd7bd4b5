// The optimize loop (`plumber optimize`): trace a pipeline, model
// it, rewrite it, run the rewrite, and repeat while the measured throughput
// still improves or the model's prediction and the measurement disagree.
// One rewrite from one trace can be wrong where the trace hid a cost (a
// stage that was starved looks cheap); the next trace of the rewritten
// pipeline shows it, so the loop converges where one shot may not.
// The loop also learns: each step's costs per stage and parallelism are
// kept (rewrite/measured_costs.h) and price every later rewrite, so a
// parallelism that measured costlier than the trace promised is not
// proposed again.
//
// The loop lives here, not in the CLI, so `plumber demo`, the tests and the
// benchmark drive the same code.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/legal_moves.h"
#include "pipeline/program_graph.h"
#include "rewrite/rewriter.h"
#include "runtime/run.h"

namespace plumber::optimize {

struct OptimizeOptions {
  // Machine to plan for; unset: the traced machine's (for the cores, what
  // each traced run had when other processes took some: analysis.h).
  std::optional<int> cores;
  std::optional<uint64_t> memory_bytes;
  std::optional<double> disk_bandwidth_bytes_per_s;
  // Length of each traced run, its warm-up (kept out of the measurement and
  // the model's window) and its snapshot period. A negative warm-up or
  // snapshot period means "derived from seconds_per_run".
  double seconds_per_run = 5;
  double warmup_seconds = -1;
  double snapshot_every_seconds = -1;
  // Runs in total, the first (the pipeline as given) included.
  int max_steps = 5;
  // A step counts as an improvement when it beats the best so far by more
  // than this fraction; measurement noise on a shared machine is a few
  // percent, so smaller gains are not worth another run.
  double min_improvement = 0.03;
  // The loop goes on while |predicted - measured| / measured exceeds this:
  // the model was wrong, and a new trace may correct it.
  double max_prediction_error = 0.15;
  // What each step's plan may do (a cache, GLPK's options) and how its
  // rewrite applies it.
  analysis::PlanOptions plan;
  rewrite::RewriteOptions rewrite;
  // Each step's rewrite first searches the pipeline's shape (moves and
  // fusions, rewrite/shape_search.h), as `plumber rewrite` does, each
  // change proven by running the step's pipeline and the reshaped one and
  // comparing their first `verify` outputs (0: unverified). Off: knobs only.
  bool reshape = true;
  LegalityOptions legality;
  int verify = 16;
  // Storage throttles for every run (they are recorded in each trace, so the
  // model sees the storage bound).
  runtime::StorageOptions storage;
  // Relative paths in the pipeline resolve against this directory.
  std::string base_dir;
  // The machine's hand-off price, recorded in every run's trace so that
  // each rewrite prices parallelism (runtime::CalibrateHandoff; measure it
  // once, so that every step is priced alike). Unmeasured (parallelism 0):
  // the traces leave it out and parallelism is free to the model.
  schema::HandoffCost handoff;
  // Existing directory that receives step-N.pb traces and step-N.json
  // pipelines.
  std::string trace_dir;
  // For the trace headers.
  std::vector<std::string> argv;
  std::string tool_version;
  // When it becomes true the current run ends and the loop stops, keeping
  // the best pipeline measured so far.
  const std::atomic<bool>* stop = nullptr;
};

// What the loop is doing, for a live progress line.
struct Progress {
  int step = 0;
  int max_steps = 0;
  std::string phase;  // "run", "analyze", "rewrite"
  runtime::RunProgress run;
  double run_seconds = 0;  // planned length of the run
};

struct Step {
  int index = 0;
  std::string trace_path;
  std::string pipeline_path;
  schema::Pipeline pipeline;
  std::string end_status;  // of the run: "ok", "end_of_data", "interrupted", "error"
  double measured = 0;     // minibatches/s after the warm-up
  // What the model predicted for this pipeline before it ran: for step 0
  // the model of its own trace (as traced), afterwards the previous
  // rewrite's prediction. nullopt when the model gave only a ceiling
  // (a cache that removes every known limit).
  std::optional<double> predicted;
  std::optional<double> prediction_error() const {
    if (!predicted || measured <= 0) return std::nullopt;
    return (*predicted - measured) / measured;
  }
  // From this step's trace.
  std::string bottleneck;
  std::string bottleneck_limit;  // "cpu", "sequential", "storage", ...
  // Changes that turned the previous step's pipeline into this one (empty
  // for step 0).
  std::vector<rewrite::Change> changes;
  // Stages whose costs measured in earlier steps priced the rewrite that
  // made this step's pipeline (empty for step 0; the rewrite planned from
  // this step lists its own in rewrite->learned).
  std::vector<rewrite::LearnedCost> learned;
  // The rewrite planned from this step's trace (the next step's pipeline,
  // whether or not it ran).
  std::optional<rewrite::RewriteResult> rewrite;
  // Eligible as the best: the run completed (not interrupted, no error).
  bool complete = false;
};

struct OptimizeResult {
  std::vector<Step> steps;
  int best_step = 0;
  bool interrupted = false;
  // Why the loop ended, in plain language.
  std::string stopped_because;
  // Why a rewritten pipeline failed, if one did.
  Status failure;

  const Step& best() const { return steps[static_cast<size_t>(best_step)]; }
  // Whether there is a best pipeline to keep: some run completed.
  bool has_best() const { return !steps.empty() && best().complete; }
  const schema::Pipeline& best_pipeline() const { return best().pipeline; }
  // Best measured throughput over the first step's (0 when step 0 measured
  // nothing).
  double speedup() const;
};

// Runs the loop on `program`. Fails only when the loop cannot work
// at all: the pipeline as given fails or cannot be traced, or its trace
// cannot be analysed. A rewritten pipeline that fails ends the loop with
// `failure` set and the best pipeline so far kept. When step 0 was
// interrupted, the result has that one step, incomplete, and best_step 0.
StatusOr<OptimizeResult> Optimize(Env* env, const ProgramGraph& program, const OptimizeOptions& options,
                                  const std::function<void(const Progress&)>& progress = {});

// The directory a loop (or the demo) works in: `keep`, created when
// missing, or else a new temporary directory named after `prefix`, which
// `*temp` then holds and removes when it goes away. Both through `env`.
StatusOr<std::string> WorkingDirectory(Env* env, const std::string& keep, const std::string& prefix,
                                       ScopedTempDir* temp);

// Where `plumber optimize` writes the best pipeline by default: beside
// `pipeline`, its name with ".optimized" before the extension (".json"
// unless it is ".pb"), so that the pipeline's relative paths still resolve.
std::string DefaultOutputPath(const std::string& pipeline);

// Whether the files `a` and `b` are in one directory (resolving "..",
// symlinks and relative paths). Relative paths in a pipeline resolve
// against its own directory, so a pipeline written elsewhere may no longer
// find its data.
bool SameDirectory(const std::string& a, const std::string& b);

}  // namespace plumber::optimize
