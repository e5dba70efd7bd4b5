// plumber rank TRACE: the nodes ordered by parallelism-scaled rate (cores
// the node may use now x its rate per core), slowest first, each with what
// limits it. The first row is the bottleneck.
#include <iostream>

#include "analysis_options.h"
#include "command.h"
#include "flag_check.h"
#include "report/analysis_format.h"

namespace plumber::cli {
namespace {

struct RankOptions {
  AnalysisFlags flags;
  int top = 0;
  std::string format = "text";
};

int RunRank(const RankOptions& opt) {
  auto report = RunAnalysis(opt.flags);
  if (!report.ok()) return ReportError(report.status());
  WarnAbout(opt.flags.trace, report->warnings);
  std::cout << (opt.format == "json" ? report::FormatRankJson(*report, opt.top)
                                     : report::FormatRankText(*report, opt.top));
  return kExitOk;
}

}  // namespace

Handler SetupRank(CLI::App& app) {
  auto opt = std::make_shared<RankOptions>();
  AddAnalysisFlags(app, &opt->flags);
  app.add_option("--top", opt->top, "Show only the K slowest nodes")->check(WholeNumber(1, 1000000));
  app.add_option("--format", opt->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [opt] { return RunRank(*opt); };
}

}  // namespace plumber::cli
