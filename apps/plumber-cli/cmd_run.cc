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

// A duration its flag's validator accepted; not given is 0.
double Seconds(const std::string& text) { return Given(text, units::ParseSeconds).value_or(0.0); }

int RunRun(const RunOptions& opt) {
  Env* env = Env::Default();
  runtime::RunConfig config;
  if (Status s = ParseStorageFlags(opt.storage, &config.storage); !s.ok()) return ReportError(s);
  if (!opt.trace.empty()) {
    if (Status s = CheckOutputPath(opt.trace, {opt.pipeline}); !s.ok()) return ReportError(s.WithContext("--trace"));
  }
  config.seconds = Seconds(opt.seconds);
  config.batches = opt.batches;
  config.warmup_seconds = Seconds(opt.warmup);
  config.snapshot_every_seconds = Seconds(opt.snapshot_every);
  config.step_time_seconds = Seconds(opt.step_time);
  config.trace_path = opt.trace;
  config.tracing = !opt.no_trace;
  config.argv = runtime::ReadCommandLine(env);  // as typed, for the trace header
  config.tool_version = kPlumberVersion;
  config.base_dir = std::filesystem::path(opt.pipeline).parent_path().string();

  auto pipeline = LoadProgram(env, opt.pipeline);
  if (!pipeline.ok()) return ReportError(pipeline.status());

  if (opt.calibrate) {
    auto points = runtime::MeasureSourceBandwidth(env, *pipeline, config.base_dir, config.storage,
                                                  Seconds(opt.calibrate_seconds));
    if (!points.ok()) return ReportError(points.status().WithContext(opt.pipeline));
    // With --format json, stdout is the summary alone.
    std::ostream& table = opt.format == "json" ? std::cerr : std::cout;
    table << report::FormatCalibration(*points);
    config.bandwidth_curve = runtime::FitBandwidthCurve(*points);
  }

  config.progress = RunProgressLine();
  config.stop = InstallRunStopHandler();
  // The machine's price of a hand-off, for the model: about half a second,
  // after the signal handlers so that a stop request meanwhile ends cleanly.
  if (!config.trace_path.empty()) config.handoff = runtime::CalibrateHandoff();

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
  auto* trace = app.add_option("--trace", opt->trace, "Write the trace to this file");
  auto* seconds = app.add_option("--seconds", opt->seconds,
                                 "Stop after this long, e.g. 30s or 2m, up to 100 days (default: end of data)")
                      ->check(Duration());
  app.add_option("--batches", opt->batches, "Stop after this many batches, 1 or more (default: end of data)")
      ->check(WholeNumber(1, kMaxBatches))
      ->excludes(seconds);
  app.add_option("--warmup", opt->warmup, "Warm-up the analysis and the throughput skip (default 0)")
      ->check(Duration(/*zero_ok=*/true));
  app.add_option("--snapshot-every", opt->snapshot_every, "Snapshot period (default 1s)")->check(Duration());
  AddStorageFlags(app, &opt->storage, "to this rate, e.g. 100MB/s");
  app.add_option("--step-time", opt->step_time, "Sleep this long per batch, standing for the model step")
      ->check(Duration(/*zero_ok=*/true));
  app.add_flag("--no-trace", opt->no_trace, "Turn per-node tracing off (for overhead measurements)")->excludes(trace);
  app.add_flag("--calibrate-source", opt->calibrate,
               "First measure the source's bandwidth at read parallelism 1..16 and store the curve in the trace");
  app.add_option("--calibrate-seconds", opt->calibrate_seconds, "Time per calibration point (default 1s)")
      ->check(Duration());
  app.add_option("--format", opt->format, "Summary: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [opt] { return RunRun(*opt); };
}

}  // namespace plumber::cli
