// plumber check [TRACE] [conditions] [--config FILE]: the CI gate. Exit 0
// when every stated condition holds, 1 with one FAIL line per violated
// condition, 2 for bad input (unreadable trace, bad flag, unknown node).
// Without TRACE, every trace the config file lists is checked. The
// conditions themselves live in lib/report/check.h.
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/env.h"
#include "command.h"
#include "flag_check.h"
#include "report/check.h"

namespace plumber::cli {
namespace {

struct CheckFlags {
  std::string trace;
  report::CheckFlagTexts conditions;
  std::string config;
  std::string format = "text";
};

int RunCheck(const CheckFlags& f) {
  Env* env = Env::Default();
  auto from_flags = report::ParseCheckFlags(f.conditions);
  if (!from_flags.ok()) return ReportError(from_flags.status());
  report::CheckConfig config;
  if (!f.config.empty()) {
    auto loaded = report::LoadCheckConfig(env, f.config);
    if (!loaded.ok()) return ReportError(loaded.status());
    config = std::move(*loaded);
  }
  std::vector<std::string> warnings;
  auto jobs = report::PlanChecks(f.trace, f.config, config, *from_flags, &warnings);
  if (!jobs.ok()) return ReportError(jobs.status());
  auto checks = report::RunChecks(env, *jobs, &warnings);
  for (const auto& w : warnings) Warn(w);
  if (!checks.ok()) return ReportError(checks.status());

  bool all_ok = true;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& check : *checks) {
    all_ok = all_ok && check.outcome.ok();
    if (f.format == "json") {
      json.push_back(report::CheckJson(check.trace, check.outcome));
    } else {
      std::cout << report::FormatCheckText(check.trace, check.outcome);
    }
  }
  if (f.format == "json") std::cout << nlohmann::ordered_json{{"ok", all_ok}, {"traces", json}}.dump(2) << "\n";
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

Handler SetupCheck(CLI::App& app) {
  auto f = std::make_shared<CheckFlags>();
  app.add_option("TRACE", f->trace, "Trace to check (default: every trace the --config lists)");
  app.add_option("--min-throughput", f->conditions.min_throughput, "Observed minibatches/s must be at least this, e.g. 25/s")
      ->check(MinibatchRate());
  app.add_option("--min-predicted", f->conditions.min_predicted, "Predicted minibatches/s must be at least this")
      ->check(MinibatchRate());
  app.add_option("--min-as-traced", f->conditions.min_as_traced,
                 "Minibatches/s predicted for the pipeline as configured must be at least this")
      ->check(MinibatchRate());
  app.add_option("--max-cpu-per-batch", f->conditions.max_cpu_per_batch,
                 "CPU time per minibatch over all nodes must be at most this, e.g. 40ms")
      ->check(Duration());
  app.add_option("--expect-bottleneck", f->conditions.expect_bottleneck, "The bottleneck must be this node");
  app.add_option("--baseline", f->conditions.baseline, "Compare node by node with this trace and fail on regressions");
  app.add_option("--tolerance", f->conditions.tolerance,
                 "Regression allowed against --baseline: a percentage (10%) or a fraction (0.1); default 10%")
      ->check(Share());
  app.add_option("--config", f->config, "JSON file of conditions (see plumber-check(1))");
  app.add_option("--format", f->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [f] { return RunCheck(*f); };
}

}  // namespace plumber::cli
