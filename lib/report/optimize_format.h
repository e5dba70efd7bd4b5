// What `plumber optimize` and `plumber demo` print about the loop: the step
// table for people and its JSON form for scripts, and the lines around the
// table.
#pragma once

#include <string>

#include "optimize/optimize_loop.h"

namespace plumber::report {

// One row per step (measured, predicted, error, bottleneck, changes and
// the stages the rewrite priced with costs learned in earlier steps), then
// the best step and why the loop stopped. Ends in a newline.
std::string StepTable(const optimize::OptimizeResult& result);
// The same as JSON (keys are a contract: add freely, never rename):
// {"steps": [{"step", "measured_throughput", "predicted_throughput",
//   "prediction_error", "bottleneck", "bottleneck_limit", "end_status",
//   "trace", "changes": [{"node","what","before","after","why"}],
//   "learned_costs": [{"stage","parallelism"}]}],
//  "best_step", "best_throughput", "initial_throughput", "speedup",
//  "interrupted", "stopped_because", "failure"}
std::string StepJson(const optimize::OptimizeResult& result, const std::string& output);

// `plumber optimize`'s text: a heading naming the pipeline and the length
// of each run, the step table, what was written (`output`, the best step's
// pipeline; empty: nothing, no run completed) and, unless empty, the
// directory the traces were kept in. Ends in a newline.
std::string OptimizeText(const std::string& pipeline, const optimize::OptimizeResult& result,
                         double seconds_per_run, const std::string& output, const std::string& kept_traces);

// `plumber demo`'s ending: throughput before and after (and the prediction),
// the bottleneck found, and every change that led to the best step with
// why. Ends in a newline.
std::string DemoSummary(const optimize::OptimizeResult& result);

}  // namespace plumber::report
