// The conditions of `plumber check`: thresholds a repository keeps beside its
// traces so that CI fails when a change makes the pipeline slower or moves
// its bottleneck. Conditions come from flags or from a JSON config file
// (format in man/plumber-check.1); both are parsed here, with the units of
// lib/base, so a config and a command line mean the same thing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analysis.h"
#include "base/env.h"
#include "base/status.h"

namespace plumber::report {

struct CheckConditions {
  std::optional<double> min_throughput;      // observed, minibatches/s
  std::optional<double> min_predicted;       // model's prediction, minibatches/s
  // The as-traced prediction (Analysis::as_traced: the pipeline exactly as
  // configured, what it should measure now), minibatches/s.
  std::optional<double> min_as_traced;
  std::optional<double> max_cpu_per_batch;   // seconds of CPU per minibatch, all nodes
  std::optional<std::string> expect_bottleneck;
  std::optional<std::string> baseline;       // trace to compare with, node by node
  std::optional<double> tolerance;           // share; kDefaultTolerance when unset

  bool empty() const;
  // Every condition `over` states replaces the one here.
  void MergeFrom(const CheckConditions& over);
};

inline constexpr double kDefaultTolerance = 0.10;

// "30", "30/s", "1.5K/s": minibatches per second, via units::ParseRate.
StatusOr<double> ParseThroughput(std::string_view text);
// A duration with its unit ("40ms", "0.04s"). A bare number is refused: the
// flag is documented in milliseconds by habit and in seconds by lib/base, and
// guessing wrong would pass or fail a check by a factor of 1000.
StatusOr<double> ParseCpuPerBatch(std::string_view text);

// One trace of a config file with its own conditions (merged over the
// file's top-level ones).
struct CheckEntry {
  std::string trace;  // resolved against the config file's directory
  CheckConditions conditions;
};

struct CheckConfig {
  CheckConditions defaults;
  std::vector<CheckEntry> traces;
};

// Parses a config file's text. Relative paths (trace, baseline) are taken
// from `base_dir`; errors name `source` and the key.
StatusOr<CheckConfig> ParseCheckConfig(std::string_view json, const std::string& source, const std::string& base_dir);
StatusOr<CheckConfig> LoadCheckConfig(Env* env, const std::string& path);

// The conditions that apply to `trace`: the config's defaults, then the
// entry naming the same file (if any).
CheckConditions ConditionsFor(const CheckConfig& config, const std::string& trace);

// The conditions as a command line states them, each as typed (empty: not
// stated).
struct CheckFlagTexts {
  std::string min_throughput, min_predicted, min_as_traced, max_cpu_per_batch;
  std::string expect_bottleneck, baseline, tolerance;
};
// Parses them with the units of the config file; errors name the flag.
StatusOr<CheckConditions> ParseCheckFlags(const CheckFlagTexts& flags);

// A trace and every condition it is checked against.
struct CheckJob {
  std::string trace;
  CheckConditions conditions;
};
// What to check: `trace` under the config's conditions for it, or, without
// it, every trace the config lists; the flags' conditions over each.
// InvalidArgument when there is no trace, or a trace has no condition.
// `warnings` receives flags that do nothing (a tolerance with no baseline).
StatusOr<std::vector<CheckJob>> PlanChecks(const std::string& trace, const std::string& config_path,
                                           const CheckConfig& config, const CheckConditions& from_flags,
                                           std::vector<std::string>* warnings);

// One stated condition and how it fared. `what` names the quantity,
// `expected` the bound, `found` the value in the trace.
struct CheckResult {
  std::string what;
  std::string expected;
  std::string found;
  bool ok = true;
};

struct CheckOutcome {
  std::vector<CheckResult> results;
  // Things a reader should know that are not failures (a node only in the
  // baseline, say).
  std::vector<std::string> notes;
  bool ok() const;
};

// Evaluates every stated condition on `report`. `baseline` is the analysed
// baseline trace when conditions.baseline is set; against it the predicted
// and the as-traced throughput may each fall by at most the tolerance. A
// line about the best prediction also names the as-traced one, so a reader
// sees both. A bottleneck name that is not a node of the trace is bad input
// (InvalidArgument), not a failure.
StatusOr<CheckOutcome> EvaluateCheck(const analysis::Analysis& report, const analysis::Analysis* baseline,
                                     const CheckConditions& conditions);

// A job's outcome.
struct TraceCheck {
  std::string trace;
  CheckOutcome outcome;
};
// Analyses each trace once (a baseline several jobs share too) and
// evaluates every job. `warnings` receives, in order and also when an
// error ends the run, what analysing each trace warned of and each
// outcome's notes, each naming its trace. Errors are the first trace that
// cannot be analysed or a condition that is bad input.
StatusOr<std::vector<TraceCheck>> RunChecks(Env* env, const std::vector<CheckJob>& jobs,
                                            std::vector<std::string>* warnings);

// Text: one "FAIL" line per violated condition, then a summary line.
std::string FormatCheckText(const std::string& trace, const CheckOutcome& outcome);
// {"trace", "ok", "conditions": [{"what", "expected", "found", "ok"}], "notes"}
nlohmann::ordered_json CheckJson(const std::string& trace, const CheckOutcome& outcome);

}  // namespace plumber::report
