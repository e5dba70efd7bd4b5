// plumber rewrite TRACE --cores N --mem M [-o OUT]: plans the traced
// pipeline for the given machine (GLPK programs over the analysis model)
// and writes the rewritten definition. With -o the pipeline goes to OUT
// (atomically; JSON or binary by extension) and the report to stdout;
// without it the pipeline JSON goes to stdout and the report, with
// --explain, to stderr.
#include <iostream>

#include "analysis_options.h"
#include "base/env.h"
#include "command.h"
#include "rewrite/rewrite_report.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

struct RewriteFlags {
  AnalysisFlags analysis;
  std::string output;
  std::string format = "text";
  bool explain = false;
  bool no_cache = false;
  bool no_prefetch = false;
};

int RunRewrite(const RewriteFlags& f) {
  Env* env = Env::Default();
  StatusOr<Encoding> encoding = Encoding::kJson;
  if (!f.output.empty()) encoding = EncodingForPath(f.output);
  if (!encoding.ok()) return ReportError(encoding.status());
  auto header = ReadTraceHeader(env, f.analysis.trace);
  if (!header.ok()) return ReportError(header.status());
  auto report = RunAnalysis(f.analysis);
  if (!report.ok()) return ReportError(report.status());
  WarnAbout(f.analysis.trace, report->warnings);
  rewrite::RewriteOptions options;
  options.plan.allow_cache = !f.no_cache;
  options.allow_prefetch = !f.no_prefetch;
  auto result = rewrite::Rewrite(*header, *report, options);
  if (!result.ok()) return ReportError(result.status().WithContext(f.analysis.trace));
  const std::string text = f.format == "json" ? rewrite::RewriteJson(*result, f.analysis.trace, f.output)
                                              : rewrite::RewriteText(*result, f.analysis.trace, f.output);
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
  return [f] { return RunRewrite(*f); };
}

}  // namespace plumber::cli
