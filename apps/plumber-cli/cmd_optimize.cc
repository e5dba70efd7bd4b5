// plumber optimize PIPELINE: runs the loop of lib/optimize (trace, analyze,
// rewrite, run the rewrite, repeat while it pays) and writes the best
// pipeline measured to -o (default: beside PIPELINE, so its relative paths
// resolve). Ctrl-C ends the current run and writes the best so far. Each
// step's rewrite searches the shape first, as `plumber rewrite` does.
#include <filesystem>
#include <iostream>

#include "base/env.h"
#include "base/output_path.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"
#include "loop_ui.h"
#include "optimize/optimize_loop.h"
#include "report/optimize_format.h"
#include "shape_flags.h"
#include "storage_flags.h"
#include "traceio/pipeline_io.h"
#include "version.h"

namespace plumber::cli {
namespace {

struct OptimizeFlags {
  std::string pipeline;
  std::string output;
  int cores = 0;
  std::string mem;
  std::string disk_bandwidth;
  std::string seconds = "5s";
  int max_steps = 5;
  std::string keep_traces;
  StorageFlags storage;
  std::string format = "text";
  bool no_cache = false;
  bool no_prefetch = false;
  ShapeFlags shape;
};

// The flags as options; the validators (flag_check.h) have checked every
// value, so only the storage flags, parsed together, can still be refused.
StatusOr<optimize::OptimizeOptions> ParseFlags(const OptimizeFlags& f) {
  optimize::OptimizeOptions o;
  if (f.cores > 0) o.cores = f.cores;
  o.memory_bytes = Given(f.mem, units::ParseBytes);
  o.disk_bandwidth_bytes_per_s = Given(f.disk_bandwidth, units::ParseRate);
  PLUMBER_ASSIGN_OR_RETURN(o.seconds_per_run, units::ParseSeconds(f.seconds));
  o.max_steps = f.max_steps;
  PLUMBER_RETURN_IF_ERROR(ParseStorageFlags(f.storage, &o.storage));
  o.plan.allow_cache = !f.no_cache;
  o.rewrite.allow_prefetch = !f.no_prefetch;
  o.reshape = !f.shape.no_reshape;
  o.verify = f.shape.verify;
  o.legality.assume_valid_data = f.shape.assume_valid_data;
  o.base_dir = std::filesystem::path(f.pipeline).parent_path().string();
  o.tool_version = kPlumberVersion;
  o.argv = {"plumber", "optimize", f.pipeline};
  return o;
}

int RunOptimize(const OptimizeFlags& f) {
  Env* env = Env::Default();
  auto options = ParseFlags(f);
  if (!options.ok()) return ReportError(options.status());
  const std::string output = f.output.empty() ? optimize::DefaultOutputPath(f.pipeline) : f.output;
  auto encoding = EncodingForPath(output);
  if (!encoding.ok()) return ReportError(encoding.status());
  // Before the first run: a result that cannot be written is lost.
  if (Status s = CheckOutputPath(output, {f.pipeline}); !s.ok()) return ReportError(s);
  auto pipeline = LoadProgram(env, f.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  if (!optimize::SameDirectory(output, f.pipeline)) {
    Warn(output + " is not in the directory of " + f.pipeline +
         "; relative paths in the pipeline resolve against the directory of the file that holds them");
  }
  ScopedTempDir temp;
  auto trace_dir = optimize::WorkingDirectory(env, f.keep_traces, "plumber-optimize-", &temp);
  if (!trace_dir.ok()) return ReportError(trace_dir.status());
  options->trace_dir = *trace_dir;
  options->stop = InstallLoopStopHandler();
  // Once, before any pipeline starts threads: every step is priced alike.
  options->handoff = runtime::CalibrateHandoff();

  auto result = optimize::Optimize(env, *pipeline, *options, LoopProgress());
  ClearLoopProgress();
  if (!result.ok()) return ReportError(result.status());
  const optimize::OptimizeResult& r = *result;

  const bool have_best = r.has_best();
  Status wrote = have_best ? WritePipeline(env, output, r.best_pipeline(), *encoding) : Status::OK();
  if (!wrote.ok()) return ReportError(wrote);
  const std::string written = have_best ? output : "";
  std::cout << (f.format == "json" ? report::StepJson(r, written)
                                   : report::OptimizeText(f.pipeline, r, options->seconds_per_run, written,
                                                          f.keep_traces));
  if (!r.failure.ok()) return ReportError(r.failure);
  if (r.interrupted) {
    Warn(have_best ? "interrupted; wrote the best pipeline measured so far" : "interrupted before any run completed");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Handler SetupOptimize(CLI::App& app) {
  auto f = std::make_shared<OptimizeFlags>();
  app.add_option("PIPELINE", f->pipeline, "Pipeline definition to optimize (JSON or binary)")->required();
  app.add_option("-o,--output", f->output, "Write the best pipeline here (default: PIPELINE.optimized.json)");
  app.add_option("--cores", f->cores,
                 "Cores to plan for (default: the cores each run had: this machine's, fewer when other processes "
                 "used some)")
      ->check(WholeNumber(1, kMaxCores));
  app.add_option("--mem", f->mem, "Memory a cache may use, e.g. 8G (default: this machine's available)")->check(Size());
  app.add_option("--disk-bandwidth", f->disk_bandwidth, "Storage bandwidth to plan for, e.g. 100MB/s")->check(Rate());
  app.add_option("--seconds", f->seconds, "Length of each traced run (default 5s)")->check(Duration());
  app.add_option("--max-steps", f->max_steps, "Runs at most, the first included (default 5)")
      ->check(WholeNumber(1, 100));
  app.add_option("--keep-traces", f->keep_traces, "Keep each step's trace and pipeline in this directory");
  AddStorageFlags(app, &f->storage, "of every run, e.g. 100MB/s");
  app.add_option("--format", f->format, "Step table: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--no-cache", f->no_cache, "Do not insert a cache");
  app.add_flag("--no-prefetch", f->no_prefetch, "Do not add or grow the output prefetch");
  AddShapeFlags(app, &f->shape, "a step's pipeline");
  return [f] { return RunOptimize(*f); };
}

}  // namespace plumber::cli
