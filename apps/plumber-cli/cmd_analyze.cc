// plumber analyze TRACE: the model of the traced pipeline (rates, visit
// ratios, sizes, bounds, ranking) and plain-language findings, as text,
// markdown or JSON. --cores, --mem and --disk-bandwidth replace what the
// trace recorded about the machine, for what-if questions. Problems with the
// data are warnings on stderr; exit 2 only when nothing can be computed.
#include <iostream>

#include "analysis/report.h"
#include "analysis_options.h"
#include "command.h"

namespace plumber::cli {
namespace {

struct AnalyzeOptions {
  AnalysisFlags flags;
  std::string format = "text";
};

int RunAnalyze(const AnalyzeOptions& opt) {
  auto report = RunAnalysis(opt.flags);
  if (!report.ok()) return ReportError(report.status());
  WarnAbout(opt.flags.trace, report->warnings);
  if (opt.format == "json") {
    std::cout << analysis::FormatReportJson(*report);
  } else if (opt.format == "markdown") {
    std::cout << analysis::FormatReportMarkdown(*report);
  } else {
    std::cout << analysis::FormatReportText(*report);
  }
  return kExitOk;
}

}  // namespace

Handler SetupAnalyze(CLI::App& app) {
  auto opt = std::make_shared<AnalyzeOptions>();
  AddAnalysisFlags(app, &opt->flags);
  app.add_option("--format", opt->format, "Output: text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  return [opt] { return RunAnalyze(*opt); };
}

}  // namespace plumber::cli
