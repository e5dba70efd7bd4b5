// plumber analyze TRACE: the model of the traced pipeline (rates, visit
// ratios, sizes, bounds, ranking) and plain-language findings, as text,
// markdown or JSON. The predicted throughput is the optimum of the
// throughput LP (GLPK) over the program as traced; the plan section adds
// what a rewrite could reach (structural caps, the cache MILP). --cores,
// --mem and --disk-bandwidth replace what the trace recorded about the
// machine, for what-if questions. Problems with the data are warnings on
// stderr; exit 2 only when nothing can be computed. --format dot and html
// draw the same model (lib/report/graph.h).
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "analysis/report.h"
#include "analysis_options.h"
#include "base/env.h"
#include "command.h"
#include "report/graph.h"
#include "rewrite/planner.h"
#include "rewrite/rewrite_report.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

struct AnalyzeOptions {
  AnalysisFlags flags;
  std::string format = "text";
  std::string output;
};

int RunAnalyze(const AnalyzeOptions& opt) {
  auto report = RunAnalysis(opt.flags);
  if (!report.ok()) return ReportError(report.status());
  WarnAbout(opt.flags.trace, report->warnings);
  auto header = ReadTraceHeader(Env::Default(), opt.flags.trace);
  if (!header.ok()) return ReportError(header.status());

  // The prediction for the program as traced, from the LP. The analysis'
  // closed form is the same optimum; a disagreement would be a bug in one
  // of them, so it is said rather than hidden.
  rewrite::PlanOptions as_traced;
  as_traced.structural_caps = false;
  as_traced.allow_cache = false;
  as_traced.lp.verbose = spdlog::get_level() <= spdlog::level::debug;  // GLPK's own output with -v
  std::optional<rewrite::Plan> plan;
  if (report->predicted_throughput) {
    auto lp = rewrite::MakePlan(*header, *report, as_traced);
    if (!lp.ok()) return ReportError(lp.status().WithContext(opt.flags.trace));
    const double closed = *report->cpu_bound;
    if (std::fabs(lp->throughput_without_cache - closed) > 1e-6 * std::max(1.0, closed)) {
      Warn(opt.flags.trace + ": the LP's CPU bound (" + std::to_string(lp->throughput_without_cache) +
           ") differs from the closed form (" + std::to_string(closed) + "); using the LP's");
    }
    report->cpu_bound = lp->throughput_without_cache;
    report->predicted_throughput = report->disk_bound ? std::min(*report->cpu_bound, *report->disk_bound)
                                                      : *report->cpu_bound;
    rewrite::PlanOptions structural;
    structural.lp.verbose = as_traced.lp.verbose;
    auto rewrite_plan = rewrite::MakePlan(*header, *report, structural);
    if (!rewrite_plan.ok()) return ReportError(rewrite_plan.status().WithContext(opt.flags.trace));
    plan = std::move(*rewrite_plan);
  }

  std::string out;
  if (opt.format == "dot") {
    out = report::FormatDot(header->program(), *report);
  } else if (opt.format == "html") {
    out = report::FormatHtml(header->program(), *report, plan ? &*plan : nullptr);
  } else if (opt.format == "json") {
    auto j = nlohmann::ordered_json::parse(analysis::FormatReportJson(*report));
    j["plan"] = plan ? rewrite::PlanJson(*plan) : nlohmann::ordered_json(nullptr);
    out = j.dump(2) + "\n";
  } else if (opt.format == "markdown") {
    out = analysis::FormatReportMarkdown(*report);
    if (plan) out += "\n## Plan (GLPK, what a rewrite could reach)\n\n```\n" + rewrite::PlanText(*plan) + "```\n";
  } else {
    out = analysis::FormatReportText(*report);
    if (plan) out += "\nplan (GLPK; what `plumber rewrite` could reach):\n" + rewrite::PlanText(*plan);
  }
  if (opt.output.empty()) {
    std::cout << out;
  } else if (auto st = WriteFileAtomically(Env::Default(), opt.output, out); !st.ok()) {
    return ReportError(st);
  }
  return kExitOk;
}

}  // namespace

Handler SetupAnalyze(CLI::App& app) {
  auto opt = std::make_shared<AnalyzeOptions>();
  AddAnalysisFlags(app, &opt->flags);
  app.add_option("--format", opt->format, "Output: text (default), json, markdown, dot (Graphviz) or html")
      ->check(CLI::IsMember({"text", "json", "markdown", "dot", "html"}));
  app.add_option("-o,--output", opt->output, "Write the report to this file (atomically) instead of stdout");
  return [opt] { return RunAnalyze(*opt); };
}

}  // namespace plumber::cli
