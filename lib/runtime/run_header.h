// What `plumber run` records in a trace's header beyond the run itself: the
// command line as typed, and the storage bandwidth curve fitted to the
// source calibration's points (calibrate.h). Here, beside the runtime that
// writes the header, so that the CLI passes values instead of building
// proto messages; the fit itself is lib/lp's (the concave hull).
#pragma once

#include <string>
#include <vector>

#include "base/env.h"
#include "runtime/calibrate.h"
#include "trace.pb.h"

namespace plumber::runtime {

// The process's arguments as typed, read from `cmdline` (NUL-terminated
// arguments, as Linux's /proc/self/cmdline holds them) through `env`. Empty
// when it cannot be read; bytes after the last NUL are not an argument.
std::vector<std::string> ReadCommandLine(Env* env, const std::string& cmdline = "/proc/self/cmdline");

// The measured points and the concave piecewise-linear curve through them
// (lp::FitConcaveCurve), as the trace header stores them.
schema::BandwidthCurve FitBandwidthCurve(const std::vector<CalibrationPoint>& points);

}  // namespace plumber::runtime
