// plumber analyze TRACE: the model of the traced pipeline (rates, visit
// ratios, sizes, bounds, ranking) and plain-language findings, as text,
// markdown, JSON, Graphviz dot or a self-contained HTML page. The predicted
// throughput is the optimum of the throughput LP (GLPK) over the program as
// traced; the plan section adds what a rewrite could reach (structural
// caps, the cache MILP). --cores, --mem and --disk-bandwidth replace what
// the trace recorded about the machine, for what-if questions. Problems
// with the data are warnings on stderr; exit 2 only when nothing can be
// computed.
#include <iostream>

#include "analysis_options.h"
#include "base/env.h"
#include "base/output_path.h"
#include "command.h"
#include "report/analysis_format.h"
#include "report/graph.h"

namespace plumber::cli {
namespace {

struct AnalyzeOptions {
  AnalysisFlags flags;
  std::string format = "text";
  std::string output;
};

std::string Format(const analysis::Analysis& a, const std::string& format) {
  if (format == "dot") return report::FormatDot(a);
  if (format == "html") return report::FormatHtml(a);
  if (format == "json") return report::FormatAnalysisJson(a);
  if (format == "markdown") return report::FormatAnalysisMarkdown(a);
  return report::FormatAnalysisText(a);
}

int RunAnalyze(const AnalyzeOptions& opt) {
  if (!opt.output.empty()) {
    if (Status s = CheckOutputPath(opt.output, {opt.flags.trace}); !s.ok()) return ReportError(s);
  }
  auto analysis = RunAnalysis(opt.flags, /*solve_programs=*/true);
  if (!analysis.ok()) return ReportError(analysis.status());
  WarnAbout(opt.flags.trace, analysis->warnings);
  const std::string out = Format(*analysis, opt.format);
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
