// What `plumber run` prints when the run ends: its end, batches, elapsed
// time, throughput after the warm-up, the consumer's wait, and the trace.
#pragma once

#include <string>

#include <vector>

#include "runtime/calibrate.h"
#include "runtime/run.h"

namespace plumber::report {

struct RunSummary {
  std::string pipeline;  // the file that ran
  std::string trace;     // empty: none written
  double warmup_seconds = 0;
  runtime::RunResult result;
};

std::string FormatRunText(const RunSummary& run);
// The storage calibration `plumber run --calibrate` measured, one line per
// read parallelism.
std::string FormatCalibration(const std::vector<runtime::CalibrationPoint>& points);

// {"pipeline", "end", "batches", "seconds", "warmup_seconds", "throughput",
//  "mean_wait_seconds", "max_wait_seconds", "trace", "snapshots"}
std::string FormatRunJson(const RunSummary& run);

}  // namespace plumber::report
