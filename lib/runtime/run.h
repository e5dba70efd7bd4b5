// Running a pipeline as a training loop would, and tracing it: the loop
// takes batches from the output node (optionally sleeping a model step
// after each), a monitor thread appends a Snapshot of every node's counters
// each snapshot period, and the run ends with a final snapshot and a RunEnd
// record whatever the reason: time or batch limit, end of data, an error,
// or a stop request (SIGINT/SIGTERM in the CLI).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "pipeline/program_graph.h"
#include "runtime/storage.h"
#include "trace.pb.h"

namespace plumber::runtime {

struct RunProgress {
  double elapsed_seconds = 0;
  int64_t batches = 0;
  // Over the last progress period.
  double batches_per_second = 0;
};

struct RunConfig {
  // Measured bandwidth-vs-parallelism curve of the source, for the trace
  // header's machine section (empty: not calibrated).
  schema::BandwidthCurve bandwidth_curve;
  // Measured hand-off cost (MeasureHandoff), for the same section; left
  // out of the trace while its parallelism is 0 (not measured).
  schema::HandoffCost handoff;
  // Limits; both 0 means until the end of the data (or a stop request).
  double seconds = 0;
  int64_t batches = 0;
  double warmup_seconds = 0;
  double snapshot_every_seconds = 1.0;
  double step_time_seconds = 0;
  // Trace file to write; empty for none.
  std::string trace_path;
  // Count elements, bytes, CPU and wall time per node (off: only the root
  // loop's own numbers, for measuring tracing overhead).
  bool tracing = true;
  StorageOptions storage;
  // Relative paths of the pipeline resolve against this directory.
  std::string base_dir;
  // For the trace header.
  std::vector<std::string> argv;
  std::string tool_version;
  // When it becomes true the run stops with status "interrupted".
  const std::atomic<bool>* stop = nullptr;
  // Called from the monitor thread about every progress_every_seconds.
  std::function<void(const RunProgress&)> progress;
  double progress_every_seconds = 0.5;
};

struct RunResult {
  // "ok" (a limit was reached), "end_of_data", "interrupted" or "error".
  std::string end_status;
  // Why, when end_status is "error".
  Status error;
  int64_t batches = 0;
  double seconds = 0;
  // Batches and seconds after the warm-up, for the throughput.
  int64_t measured_batches = 0;
  double measured_seconds = 0;
  // The consumer's mean and longest wait inside GetNext.
  double mean_wait_seconds = 0;
  double max_wait_seconds = 0;
  // Snapshots written to the trace (all of them are in the file).
  int64_t snapshots = 0;
  // The trace path existed and the run produced no minibatch: the file
  // was left as it was, and this run's trace was not kept.
  bool trace_discarded = false;
  // The last snapshot taken (also when no trace file was written).
  schema::Snapshot final_snapshot;
};

// Runs `program`. Returns an error only when the run could not
// start writing its trace; failures of the pipeline itself come back as a
// RunResult with end_status "error", after the trace got its final
// snapshot and end record. A trace write that fails later (a full disk)
// stops the run at once: it ends with end_status "error" and an IOError
// naming the trace file, which keeps every snapshot written before.
StatusOr<RunResult> RunPipeline(Env* env, const ProgramGraph& program, const RunConfig& config);

// The machine description for the trace header.
schema::Machine DescribeMachine(Env* env, const StorageOptions& storage);

// The price of a hand-off between threads on this machine
// (MeasureHandoff, calibrate.h: 2 workers, about a fifth of a second) and
// of a wait among 64 threads per core, at most 128 (MeasureWaitCost, about
// 0.3 s), as
// RunConfig::handoff records it for the model's price of parallelism.
// Every traced run a rewrite reads needs it: `plumber run` and the
// optimize loop measure it once before their pipelines start threads.
schema::HandoffCost CalibrateHandoff();

}  // namespace plumber::runtime
