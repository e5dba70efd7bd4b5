// plumber rewrite TRACE --cores N --mem M [-o OUT]: plans the traced
// pipeline for the given machine (GLPK programs over the analysis model)
// and writes the rewritten definition. With -o the pipeline goes to OUT
// (atomically; JSON or binary by extension) and the report to stdout;
// without it the pipeline JSON goes to stdout and the report, with
// --explain, to stderr. An imported trace (tf.data) has no pipeline file:
// the rewrite is printed as the tf.data edits to make instead, and for a
// PyTorch DataLoader's trace as the DataLoader(...) call to write.
#include <iostream>

#include "analysis/analyze.h"
#include "analysis_options.h"
#include "base/env.h"
#include "base/output_path.h"
#include "command.h"
#include "report/rewrite_format.h"
#include "report/torch_advice_format.h"
#include "rewrite/cache_placement.h"
#include "rewrite/rewriter.h"
#include "rewrite/torch_advice.h"
#include "traceio/pipeline_io.h"

namespace plumber::cli {
namespace {

struct RewriteFlags {
  AnalysisFlags analysis;
  std::string output;
  std::string format = "text";
  bool explain = false;
  bool no_cache = false;
  bool no_prefetch = false;
  std::string cache_dir;
};

int RunRewrite(const RewriteFlags& f) {
  Env* env = Env::Default();
  StatusOr<Encoding> encoding = Encoding::kJson;
  if (!f.output.empty()) encoding = EncodingForPath(f.output);
  if (!encoding.ok()) return ReportError(encoding.status());
  if (!f.output.empty()) {
    if (Status s = CheckOutputPath(f.output, {f.analysis.trace}); !s.ok()) return ReportError(s);
  }
  auto opt = MakeAnalysisOptions(f.analysis, /*solve_programs=*/true);
  if (!opt.ok()) return ReportError(opt.status());
  opt->plan.allow_cache = !f.no_cache;
  rewrite::PlaceFileCache(env, f.cache_dir, f.output, &opt->plan);
  auto report = analysis::AnalyzeTraceFile(env, f.analysis.trace, *opt);
  if (!report.ok()) return ReportError(report.status());
  if (!report->imported_from.empty() && !f.output.empty()) {
    return ReportError(Status::InvalidArgument(
        f.analysis.trace + ": imported from " + report->imported_from +
        ": there is no pipeline file to rewrite; without -o, rewrite prints the edits to make in the tf.data code"));
  }
  WarnAbout(f.analysis.trace, report->warnings);
  if (const auto torch = rewrite::AdviseDataLoader(*report)) {
    // A DataLoader's trace: the advice is the DataLoader(...) call to write.
    std::cout << (f.format == "json" ? report::TorchAdviceJson(*report, *torch)
                                     : report::TorchAdviceText(*report, *torch));
    return kExitOk;
  }
  rewrite::RewriteOptions options;
  options.allow_prefetch = !f.no_prefetch;
  auto result = rewrite::Rewrite(*report, options);
  if (!result.ok()) return ReportError(result.status().WithContext(f.analysis.trace));
  if (!report->imported_from.empty()) {
    // No pipeline file to write: the user's code is Python. The advice is
    // the edits to make there.
    const auto advice = rewrite::TfDataAdvice(*report, *result);
    std::cout << (f.format == "json" ? report::TfAdviceJson(*report, *result, advice)
                                     : report::TfAdviceText(*report, *result, advice));
    return kExitOk;
  }
  const std::string text = f.format == "json" ? report::RewriteJson(*report, *result, f.analysis.trace, f.output)
                                              : report::RewriteText(*report, *result, f.analysis.trace, f.output);
  if (!f.output.empty()) {
    if (Status s = WritePipeline(env, f.output, result->pipeline, *encoding); !s.ok()) return ReportError(s);
    std::cout << text;
  } else {
    std::cout << SerializePipeline(result->pipeline, Encoding::kJson);
    if (f.explain) std::cerr << text;
  }
  return kExitOk;
}

}  // namespace

Handler SetupRewrite(CLI::App& app) {
  auto f = std::make_shared<RewriteFlags>();
  AddAnalysisFlags(app, &f->analysis);
  app.add_option("-o,--output", f->output, "Write the rewritten pipeline here (.json or .pb)");
  app.add_option("--format", f->format, "Report: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--explain", f->explain, "Without -o: print the report of changes to stderr");
  app.add_flag("--no-cache", f->no_cache, "Do not insert a cache");
  app.add_flag("--no-prefetch", f->no_prefetch, "Do not add or grow the output prefetch");
  app.add_option("--cache-dir", f->cache_dir,
                 "Where a file cache may go when memory is short (default: beside the output)");
  return [f] { return RunRewrite(*f); };
}

}  // namespace plumber::cli
