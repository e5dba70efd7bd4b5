// plumber check [TRACE] [conditions] [--config FILE]: the CI gate. Exit 0
// when every stated condition holds, 1 with one FAIL line per violated
// condition, 2 for bad input (unreadable trace, bad flag, unknown node).
// Without TRACE, every trace the config file lists is checked. The
// conditions themselves live in lib/report/check.h.
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "analysis_options.h"
#include "base/env.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"
#include "report/check.h"

namespace plumber::cli {
namespace {

struct CheckFlags {
  std::string trace;
  std::string min_throughput;
  std::string min_predicted;
  std::string min_as_traced;
  std::string max_cpu_per_batch;
  std::string expect_bottleneck;
  std::string baseline;
  std::string tolerance;
  std::string config;
  std::string format = "text";
};

StatusOr<report::CheckConditions> ConditionsFromFlags(const CheckFlags& f) {
  report::CheckConditions c;
  auto flag = [](const char* name, const Status& s) { return Status::InvalidArgument(std::string(name) + ": " + s.message()); };
  if (!f.min_throughput.empty()) {
    auto v = report::ParseThroughput(f.min_throughput);
    if (!v.ok()) return flag("--min-throughput", v.status());
    c.min_throughput = *v;
  }
  if (!f.min_predicted.empty()) {
    auto v = report::ParseThroughput(f.min_predicted);
    if (!v.ok()) return flag("--min-predicted", v.status());
    c.min_predicted = *v;
  }
  if (!f.min_as_traced.empty()) {
    auto v = report::ParseThroughput(f.min_as_traced);
    if (!v.ok()) return flag("--min-as-traced", v.status());
    c.min_as_traced = *v;
  }
  if (!f.max_cpu_per_batch.empty()) {
    auto v = report::ParseCpuPerBatch(f.max_cpu_per_batch);
    if (!v.ok()) return flag("--max-cpu-per-batch", v.status());
    c.max_cpu_per_batch = *v;
  }
  if (!f.expect_bottleneck.empty()) c.expect_bottleneck = f.expect_bottleneck;
  if (!f.baseline.empty()) c.baseline = f.baseline;
  if (!f.tolerance.empty()) {
    auto v = units::ParseFraction(f.tolerance);
    if (!v.ok()) return flag("--tolerance", v.status());
    c.tolerance = *v;
  }
  return c;
}

class Analyses {
 public:
  StatusOr<const analysis::Analysis*> Get(const std::string& path) {
    auto it = cache_.find(path);
    if (it == cache_.end()) {
      PLUMBER_ASSIGN_OR_RETURN(auto report, analysis::AnalyzeTraceFile(Env::Default(), path, {}));
      WarnAbout(path, report.warnings);
      it = cache_.emplace(path, std::move(report)).first;
    }
    return &it->second;
  }

 private:
  std::map<std::string, analysis::Analysis> cache_;
};

int RunCheck(const CheckFlags& f) {
  auto from_flags = ConditionsFromFlags(f);
  if (!from_flags.ok()) return ReportError(from_flags.status());
  report::CheckConfig config;
  if (!f.config.empty()) {
    auto loaded = report::LoadCheckConfig(Env::Default(), f.config);
    if (!loaded.ok()) return ReportError(loaded.status());
    config = std::move(*loaded);
  }
  std::vector<std::pair<std::string, report::CheckConditions>> jobs;
  if (!f.trace.empty()) {
    jobs.emplace_back(f.trace, report::ConditionsFor(config, f.trace));
  } else if (!f.config.empty()) {
    for (const auto& entry : config.traces) {
      report::CheckConditions c = config.defaults;
      c.MergeFrom(entry.conditions);
      jobs.emplace_back(entry.trace, c);
    }
    if (jobs.empty()) return ReportError(Status::InvalidArgument(f.config + ": lists no traces and no TRACE was given"));
  } else {
    return ReportError(Status::InvalidArgument("check: give a TRACE, a --config that lists traces, or both"));
  }
  for (auto& [trace, c] : jobs) {
    c.MergeFrom(*from_flags);
    if (c.empty()) {
      return ReportError(Status::InvalidArgument(
          trace + ": nothing to check (give --min-throughput, --min-predicted, --min-as-traced, "
                  "--max-cpu-per-batch, --expect-bottleneck, --baseline or a --config that states them)"));
    }
    if (!f.tolerance.empty() && !c.baseline) Warn(trace + ": --tolerance has no effect without --baseline");
  }

  Analyses analyses;
  bool all_ok = true;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& [trace, c] : jobs) {
    auto report = analyses.Get(trace);
    if (!report.ok()) return ReportError(report.status());
    const analysis::Analysis* baseline = nullptr;
    if (c.baseline) {
      auto b = analyses.Get(*c.baseline);
      if (!b.ok()) return ReportError(b.status().WithContext("--baseline"));
      baseline = *b;
    }
    auto outcome = report::EvaluateCheck(**report, baseline, c);
    if (!outcome.ok()) return ReportError(outcome.status());
    for (const auto& note : outcome->notes) Warn(trace + ": " + note);
    all_ok = all_ok && outcome->ok();
    if (f.format == "json") {
      json.push_back(report::CheckJson(trace, *outcome));
    } else {
      std::cout << report::FormatCheckText(trace, *outcome);
    }
  }
  if (f.format == "json") std::cout << nlohmann::ordered_json{{"ok", all_ok}, {"traces", json}}.dump(2) << "\n";
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

Handler SetupCheck(CLI::App& app) {
  auto f = std::make_shared<CheckFlags>();
  app.add_option("TRACE", f->trace, "Trace to check (default: every trace the --config lists)");
  app.add_option("--min-throughput", f->min_throughput, "Observed minibatches/s must be at least this, e.g. 25/s")
      ->check(MinibatchRate());
  app.add_option("--min-predicted", f->min_predicted, "Predicted minibatches/s must be at least this")
      ->check(MinibatchRate());
  app.add_option("--min-as-traced", f->min_as_traced,
                 "Minibatches/s predicted for the pipeline as configured must be at least this")
      ->check(MinibatchRate());
  app.add_option("--max-cpu-per-batch", f->max_cpu_per_batch,
                 "CPU time per minibatch over all nodes must be at most this, e.g. 40ms")
      ->check(Duration());
  app.add_option("--expect-bottleneck", f->expect_bottleneck, "The bottleneck must be this node");
  app.add_option("--baseline", f->baseline, "Compare node by node with this trace and fail on regressions");
  app.add_option("--tolerance", f->tolerance,
                 "Regression allowed against --baseline: a percentage (10%) or a fraction (0.1); default 10%")
      ->check(Share());
  app.add_option("--config", f->config, "JSON file of conditions (see plumber-check(1))");
  app.add_option("--format", f->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [f] { return RunCheck(*f); };
}

}  // namespace plumber::cli
