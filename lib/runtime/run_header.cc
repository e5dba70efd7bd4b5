// The command line and the bandwidth curve for a trace header; see run_header.h.
#include "runtime/run_header.h"

#include <utility>

#include "lp/bandwidth_curve.h"

namespace plumber::runtime {

std::vector<std::string> ReadCommandLine(Env* env, const std::string& cmdline) {
  std::vector<std::string> argv;
  auto bytes = ReadFileToString(env, cmdline, 1 << 20);
  if (!bytes.ok()) return argv;
  std::string arg;
  for (char c : *bytes) {
    if (c == '\0') {
      argv.push_back(std::move(arg));
      arg.clear();
    } else {
      arg += c;
    }
  }
  return argv;
}

schema::BandwidthCurve FitBandwidthCurve(const std::vector<CalibrationPoint>& points) {
  schema::BandwidthCurve curve;
  std::vector<std::pair<double, double>> xy;
  for (const auto& pt : points) {
    auto* point = curve.add_points();
    point->set_parallelism(pt.parallelism);
    point->set_bytes_per_s(pt.bytes_per_s);
    xy.emplace_back(pt.parallelism, pt.bytes_per_s);
  }
  for (const auto& piece : lp::FitConcaveCurve(xy)) {
    auto* out = curve.add_pieces();
    out->set_slope(piece.slope);
    out->set_intercept(piece.intercept);
  }
  return curve;
}

}  // namespace plumber::runtime
