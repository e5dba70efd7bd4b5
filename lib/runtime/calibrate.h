// Calibration of the source: how much storage bandwidth the pipeline's
// reader gets at read parallelism 1, 2, 4, 8, 16 under the storage settings
// in force (throttle, latency). The paper benchmarks this curve by rewriting
// the source; so does this: the interleave that holds the reader is run
// alone, repeated, at each parallelism for a short while. The caller fits
// the points (lp/bandwidth_curve.h) and stores the curve in the trace.
#pragma once

#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "pipeline/program_graph.h"
#include "runtime/storage.h"

namespace plumber::runtime {

struct CalibrationPoint {
  int parallelism = 1;
  double bytes_per_s = 0;
};

// FailedPrecondition when the pipeline has no reader inside an interleave
// function (nothing whose read parallelism can change).
StatusOr<std::vector<CalibrationPoint>> MeasureSourceBandwidth(Env* env, const ProgramGraph& program,
                                                               const std::string& base_dir,
                                                               const StorageOptions& storage, double seconds_per_point,
                                                               const std::vector<int>& parallelisms = {1, 2, 4, 8, 16});

}  // namespace plumber::runtime
