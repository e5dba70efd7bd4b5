// The run summary; see run_format.h.
#include "report/run_format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/units.h"

namespace plumber::report {
namespace {

double Throughput(const runtime::RunResult& r) {
  return r.measured_seconds > 0 ? static_cast<double>(r.measured_batches) / r.measured_seconds : 0;
}

}  // namespace

std::string FormatCalibration(const std::vector<runtime::CalibrationPoint>& points) {
  std::string out = "calibration: storage bandwidth by read parallelism\n";
  for (const auto& pt : points) out += fmt::format("  {:>3}  {}\n", pt.parallelism, units::FormatRate(pt.bytes_per_s));
  return out;
}

std::string FormatRunText(const RunSummary& run) {
  const auto& r = run.result;
  std::string out = fmt::format("run: {} ({})\n", run.pipeline, r.end_status);
  out += fmt::format("  batches     {}\n", r.batches);
  out += fmt::format("  elapsed     {}", units::FormatSeconds(r.seconds));
  if (run.warmup_seconds > 0) {
    out += fmt::format(" (measured after {} warm-up)", units::FormatSeconds(run.warmup_seconds));
  }
  out += "\n";
  out += fmt::format("  throughput  {:.2f} batches/s\n", Throughput(r));
  out += fmt::format("  mean wait   {} per Next (longest {})\n", units::FormatSeconds(r.mean_wait_seconds),
                     units::FormatSeconds(r.max_wait_seconds));
  if (!run.trace.empty()) out += fmt::format("  trace       {} ({} snapshots)\n", run.trace, r.snapshots);
  return out;
}

std::string FormatRunJson(const RunSummary& run) {
  const auto& r = run.result;
  using Json = nlohmann::ordered_json;
  Json j = {{"pipeline", run.pipeline},
            {"end", r.end_status},
            {"batches", r.batches},
            {"seconds", r.seconds},
            {"warmup_seconds", run.warmup_seconds},
            {"throughput", Throughput(r)},
            {"mean_wait_seconds", r.mean_wait_seconds},
            {"max_wait_seconds", r.max_wait_seconds},
            {"trace", run.trace.empty() ? Json(nullptr) : Json(run.trace)},
            {"snapshots", r.snapshots}};
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
