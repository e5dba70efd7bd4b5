// The storage throttle flags of run and optimize; see storage_flags.h.
#include "storage_flags.h"

#include "base/units.h"
#include "flag_check.h"

namespace plumber::cli {

void AddStorageFlags(CLI::App& app, StorageFlags* flags, const std::string& whose_reads) {
  app.add_option("--read-bandwidth", flags->read_bandwidth, "Throttle all file reads " + whose_reads)->check(Rate());
  app.add_option("--read-latency", flags->read_latency, "Add this latency to every read request, e.g. 5ms")
      ->check(Duration(/*zero_ok=*/true));
}

Status ParseStorageFlags(const StorageFlags& flags, runtime::StorageOptions* storage) {
  if (!flags.read_latency.empty()) {
    auto latency = units::ParseSeconds(flags.read_latency);
    if (!latency.ok()) return latency.status().WithContext("--read-latency");
    if (*latency < 0) return Status::InvalidArgument("--read-latency: must not be negative");
    storage->read_latency_ns = static_cast<int64_t>(*latency * 1e9);
  }
  if (!flags.read_bandwidth.empty()) {
    auto bw = units::ParseRate(flags.read_bandwidth);
    if (!bw.ok()) return bw.status().WithContext("--read-bandwidth");
    if (!(*bw > 0)) return Status::InvalidArgument("--read-bandwidth: must be > 0");
    storage->read_bandwidth = *bw;
  }
  return Status::OK();
}

}  // namespace plumber::cli
