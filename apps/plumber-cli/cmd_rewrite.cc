// plumber rewrite TRACE --cores N --mem M [-o OUT]: plans the traced
// pipeline for the given machine (GLPK programs over the analysis model)
// and writes the rewritten definition. With -o the pipeline goes to OUT
// (atomically; JSON or binary by extension) and the report to stdout;
// without it the pipeline JSON goes to stdout and the report, with
// --explain, to stderr. An imported trace (tf.data) has no pipeline file:
// the rewrite is printed as the tf.data edits to make instead, and for a
// PyTorch DataLoader's trace as the DataLoader(...) call to write.
//
// Before the knobs, the shape search (rewrite/shape_search.h) moves and
// fuses ops where the rules allow and the model says it gains; each change
// is verified (--verify N) by running the traced and the reshaped pipeline
// on the pipeline's own files and comparing their first N outputs.
#include <filesystem>
#include <iostream>

#include "analysis/analyze.h"
#include "analysis_options.h"
#include "base/env.h"
#include "base/output_path.h"
#include "command.h"
#include "optimize/output_check.h"
#include "report/rewrite_format.h"
#include "report/torch_advice_format.h"
#include "rewrite/cache_placement.h"
#include "rewrite/rewriter.h"
#include "rewrite/shape_search.h"
#include "rewrite/torch_advice.h"
#include "shape_flags.h"
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
  ShapeFlags shape;
  std::string data_dir;
};

// Where the traced pipeline's relative paths resolve: --data-dir, else the
// directory of the pipeline `plumber run` was given (the trace's argv,
// relative to where it ran: tried from here), else here.
std::string DataDir(const RewriteFlags& f, const schema::TraceHeader& header) {
  if (!f.data_dir.empty()) return f.data_dir;
  const auto& argv = header.options().argv();
  if (argv.size() >= 3 && argv[1] == "run") {
    std::error_code ec;
    if (std::filesystem::is_regular_file(argv[2], ec)) return std::filesystem::path(argv[2]).parent_path().string();
  }
  return "";
}

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
  auto loaded = analysis::LoadTraceFile(env, f.analysis.trace, opt->window, opt->max_memory_bytes);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto report = analysis::Analyze(*loaded, *opt);
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
  auto result = [&]() -> StatusOr<rewrite::RewriteResult> {
    if (f.shape.no_reshape) return rewrite::Rewrite(*report, options);
    rewrite::ShapeSearchOptions shape;
    shape.legality.assume_valid_data = f.shape.assume_valid_data;
    if (!report->imported_from.empty()) {
      // tf.data's functions are opaque and its pipeline is the user's
      // Python: a move is advice on conditions only the user can check.
      shape.unverified = "not run: plumber cannot run an imported pipeline; make the edit only where its "
                         "conditions hold";
    } else if (f.shape.verify > 0) {
      shape.verify = optimize::OutputVerifier(env, DataDir(f, loaded->header), f.shape.verify);
    } else {
      shape.unverified = "not verified (--verify 0): the output may differ";
    }
    auto searched = rewrite::SearchShapes(*loaded, std::move(*report), *opt, options, shape);
    if (!searched.ok()) return searched.status();
    *report = std::move(searched->analysis);
    return std::move(searched->rewrite);
  }();
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
  AddShapeFlags(app, &f->shape, "the traced pipeline");
  app.add_option("--data-dir", f->data_dir,
                 "Where the traced pipeline's files are, for --verify (default: beside the pipeline it ran)");
  return [f] { return RunRewrite(*f); };
}

}  // namespace plumber::cli
