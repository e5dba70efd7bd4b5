// The tf.data service report; see service_format.h.
#include "report/service_format.h"

#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::report {
namespace {

using nlohmann::ordered_json;

std::string Cores(int n) { return FormatCount(n, "core", "cores"); }

template <typename T>
ordered_json OrNull(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json NameOrNull(const std::string& name) { return name.empty() ? ordered_json(nullptr) : ordered_json(name); }

}  // namespace

std::string FormatServiceText(const std::string& trace, const analysis::ServicePlan& p) {
  const auto& s = p.sizing;
  std::string out = "plumber provision --workers: " + trace + ", target " + units::FormatMinibatchRate(p.target) + "\n";
  out += "  one machine:  " + Cores(p.machine_cores) +
         (p.machine_cores_noted ? " (" + p.machine_cores_source + ")" : std::string()) + ", " +
         units::FormatBytes(static_cast<double>(p.machine_memory_bytes)) + ": at most " +
         units::FormatMinibatchRate(p.single_machine_rate) + " (held by " + p.single_machine_binding + ")" +
         (s.service_needed ? ", short of the target" : ", enough") + "\n";
  if (!s.service_needed) {
    out += "  workers:      none: one machine reaches the target, so no tf.data service is needed (`plumber "
           "provision` without --workers sizes that machine at least cost)\n";
    return out;
  }
  out += "  workers:      " + FormatCount(s.workers, "tf.data service worker", "tf.data service workers") + ", " +
         Cores(p.worker_cores) +
         " and " + units::FormatBytes(static_cast<double>(p.worker_memory_bytes)) + " each (" +
         units::FormatBytes(p.worker_memory_needed_bytes) + " of it in use: buffers" +
         (p.worker_cache.empty() ? "" : " and the cache") + ")\n";
  out += "  per worker:   " + units::FormatMinibatchRate(s.worker_rate) + ", bound by " + s.bound + "\n";
  out += "    compute:    " + units::FormatMinibatchRate(p.worker_compute_rate) + " (held by " +
         p.worker_compute_binding + "; " + FormatCount(p.worker_cores_used, "core", "cores") + " busy)\n";
  if (p.worker_network_bytes_per_s) {
    out +=
        "    network:    " + (s.network_rate ? units::FormatMinibatchRate(*s.network_rate) : std::string("unbounded")) +
        " (" + units::FormatRate(*p.worker_network_bytes_per_s) + " / " +
        units::FormatBytes(p.bytes_per_minibatch.value_or(0)) + " per minibatch)\n";
  }
  out += "  sharding:     " + std::string(analysis::ShardingPolicyName(p.sharding)) + ": " + p.sharding_reason + "\n";
  out += "  distribute:   after " + ("'" + p.distribute_after + "'");
  if (!p.trainer_nodes.empty()) {
    std::string above;
    for (const auto& name : p.trainer_nodes) above += (above.empty() ? "'" : ", '") + name + "'";
    out += "; " + above + (p.trainer_nodes.size() == 1 ? " stays" : " stay") + " on the trainer";
  }
  out += "\n                " + p.distribute_code + "\n";
  out += "  assumptions:\n";
  for (const auto& a : p.assumptions) out += "    - " + a + "\n";
  return out;
}

std::string FormatServiceJson(const std::string& trace, const analysis::ServicePlan& p) {
  const auto& s = p.sizing;
  ordered_json j;
  j["trace"] = trace;
  j["target_rate"] = p.target;
  j["service_needed"] = s.service_needed;
  j["workers"] = s.workers;
  j["single_machine"] = {{"cores", p.machine_cores},
                         {"cores_from", analysis::CoresFromName(p.machine_cores_from)},
                         {"cores_source", p.machine_cores_source},
                         {"memory_bytes", p.machine_memory_bytes},
                         {"throughput", p.single_machine_rate},
                         {"binding", p.single_machine_binding},
                         {"cache", NameOrNull(p.single_machine_cache)}};
  j["worker"] = {{"cores", p.worker_cores},
                 {"memory_bytes", p.worker_memory_bytes},
                 {"rate", s.worker_rate},
                 {"bound", s.bound},
                 {"compute_rate", p.worker_compute_rate},
                 {"compute_binding", p.worker_compute_binding},
                 {"cores_used", p.worker_cores_used},
                 {"memory_needed_bytes", p.worker_memory_needed_bytes},
                 {"as_traced_rate", OrNull(p.worker_as_traced_rate)},
                 {"network_bytes_per_s", OrNull(p.worker_network_bytes_per_s)},
                 {"network_rate", OrNull(s.network_rate)},
                 {"cache", NameOrNull(p.worker_cache)},
                 {"cache_bytes", p.worker_cache.empty() ? ordered_json(nullptr) : ordered_json(p.worker_cache_bytes)}};
  j["sharding"] = {{"policy", analysis::ShardingPolicyName(p.sharding)},
                   {"reason", p.sharding_reason},
                   {"readers", p.file_readers},
                   {"files", OrNull(p.files)}};
  j["distribute"] = {{"after", p.distribute_after},
                     {"trainer_nodes", p.trainer_nodes},
                     {"bytes_per_minibatch", OrNull(p.bytes_per_minibatch)},
                     {"processing_mode", std::string("tf.data.experimental.service.ShardingPolicy.") +
                                             analysis::ShardingPolicyName(p.sharding)},
                     {"code", p.distribute_code}};
  j["storage"] = {{"bytes_per_minibatch", p.disk_bytes_per_minibatch},
                  {"worker_bandwidth_bytes_per_s", OrNull(p.worker_disk_bandwidth)},
                  {"bandwidth_from", NameOrNull(p.worker_disk_bandwidth ? p.disk_bandwidth_from : "")},
                  {"total_bytes_per_s", p.target * p.disk_bytes_per_minibatch}};
  j["assumptions"] = p.assumptions;
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
