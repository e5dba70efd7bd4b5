// plumber run PIPELINE: executes a pipeline as a training loop would and
// writes its trace. SIGINT/SIGTERM stop the run cleanly (final snapshot and
// an "interrupted" end record). A live progress line is drawn only when
// stderr is a terminal (loop_ui.h); the summary goes to stdout.
#include <filesystem>
#include <iostream>

#include "base/env.h"
#include "base/output_path.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"
#include "loop_ui.h"
#include "report/run_format.h"
#include "runtime/calibrate.h"
#include "runtime/run.h"
#include "runtime/run_header.h"
#include "storage_flags.h"
#include "traceio/pipeline_io.h"
#include "version.h"

namespace plumber::cli {
namespace {

struct RunOptions {
  std::string pipeline;
  std::string trace;
  std::string seconds;
  int64_t batches = 0;
  std::string warmup = "0";
  std::string snapshot_every = "1s";
  StorageFlags storage;
  std::string step_time;
  bool no_trace = false;
  bool calibrate = false;
  std::string calibrate_seconds = "1s";
  std::string format = "text";
};

StatusOr<double> OptionalSeconds(const std::string& text, const char* flag) {
  if (text.empty()) return 0.0;
  auto v = units::ParseSeconds(text);
  if (!v.ok()) return v.status().WithContext(flag);
  if (*v < 0) return Status::InvalidArgument(std::string(flag) + ": must not be negative");
  return *v;
}

int RunRun(const RunOptions& opt) {
  Env* env = Env::Default();
  runtime::RunConfig config;
  auto seconds = OptionalSeconds(opt.seconds, "--seconds");
  auto warmup = OptionalSeconds(opt.warmup, "--warmup");
  auto every = OptionalSeconds(opt.snapshot_every, "--snapshot-every");
  auto step = OptionalSeconds(opt.step_time, "--step-time");
  for (const auto* s : {&seconds, &warmup, &every, &step}) {
    if (!s->ok()) return ReportError(s->status());
  }
  if (Status s = ParseStorageFlags(opt.storage, &config.storage); !s.ok()) return ReportError(s);
  if (*every <= 0) return ReportError(Status::InvalidArgument("--snapshot-every: must be > 0"));
  if (!opt.seconds.empty() && opt.batches > 0) {
    return ReportError(Status::InvalidArgument("give --seconds or --batches, not both"));
  }
  if (opt.batches < 0) return ReportError(Status::InvalidArgument("--batches: must be >= 0"));
  if (opt.no_trace && !opt.trace.empty()) {
    return ReportError(Status::InvalidArgument("--no-trace and --trace contradict each other"));
  }
  if (!opt.trace.empty()) {
    if (Status s = CheckOutputPath(opt.trace, {opt.pipeline}); !s.ok()) return ReportError(s.WithContext("--trace"));
  }
  config.seconds = *seconds;
  config.batches = opt.batches;
  config.warmup_seconds = *warmup;
  config.snapshot_every_seconds = *every;
  config.step_time_seconds = *step;
  config.trace_path = opt.trace;
  config.tracing = !opt.no_trace;
  config.argv = runtime::ReadCommandLine(env);  // as typed, for the trace header
  config.tool_version = kPlumberVersion;
  config.base_dir = std::filesystem::path(opt.pipeline).parent_path().string();

  auto pipeline = LoadProgram(env, opt.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());

  if (opt.calibrate) {
    auto per_point = OptionalSeconds(opt.calibrate_seconds, "--calibrate-seconds");
    if (!per_point.ok()) return ReportError(per_point.status());
    if (*per_point <= 0) return ReportError(Status::InvalidArgument("--calibrate-seconds: must be > 0"));
    auto points = runtime::MeasureSourceBandwidth(env, *pipeline, config.base_dir, config.storage, *per_point);
    if (!points.ok()) return ReportError(points.status().WithContext(opt.pipeline));
    // With --format json, stdout is the summary alone.
    std::ostream& table = opt.format == "json" ? std::cerr : std::cout;
    table << report::FormatCalibration(*points);
    config.bandwidth_curve = runtime::FitBandwidthCurve(*points);
  }

  config.progress = RunProgressLine();
  config.stop = InstallRunStopHandler();

  if (!config.trace_path.empty()) {
    // The price of a hand-off between threads and of a wait among many
    // threads on this machine, for the model (about half a second, before
    // the pipeline starts its threads; after the signal handlers, so that a
    // stop request meanwhile ends the run cleanly).
    config.handoff = runtime::CalibrateHandoff();
  }

  auto result = runtime::RunPipeline(env, *pipeline, config);
  ClearRunProgress();
  if (!result.ok()) return ReportError(result.status());
  const auto& r = *result;
  report::RunSummary summary{opt.pipeline, r.trace_discarded ? "" : opt.trace, config.warmup_seconds, r};
  std::cout << (opt.format == "json" ? report::FormatRunJson(summary) : report::FormatRunText(summary));
  if (r.trace_discarded) Warn("the run produced no minibatch; " + opt.trace + " was left as it was");
  if (r.end_status == "error") return ReportError(r.error);
  return kExitOk;
}

}  // namespace

Handler SetupRun(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  app.add_option("PIPELINE", opt->pipeline, "Pipeline definition (JSON or binary)")->required();
  app.add_option("--trace", opt->trace, "Write the trace to this file");
  app.add_option("--seconds", opt->seconds,
                 "Stop after this long, e.g. 30s or 2m, up to 100 days (default: end of data)")
      ->check(Duration());
  app.add_option("--batches", opt->batches, "Stop after this many batches, 1 or more (default: end of data)")
      ->check(WholeNumber(1, kMaxBatches));
  app.add_option("--warmup", opt->warmup, "Warm-up the analysis and the throughput skip (default 0)")
      ->check(Duration(/*zero_ok=*/true));
  app.add_option("--snapshot-every", opt->snapshot_every, "Snapshot period (default 1s)")->check(Duration());
  AddStorageFlags(app, &opt->storage, "to this rate, e.g. 100MB/s");
  app.add_option("--step-time", opt->step_time, "Sleep this long per batch, standing for the model step")
      ->check(Duration(/*zero_ok=*/true));
  app.add_flag("--no-trace", opt->no_trace, "Turn per-node tracing off (for overhead measurements)");
  app.add_flag("--calibrate-source", opt->calibrate,
               "First measure the source's bandwidth at read parallelism 1..16 and store the curve in the trace");
  app.add_option("--calibrate-seconds", opt->calibrate_seconds, "Time per calibration point (default 1s)")
      ->check(Duration());
  app.add_option("--format", opt->format, "Summary: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [opt] { return RunRun(*opt); };
}

}  // namespace plumber::cli
