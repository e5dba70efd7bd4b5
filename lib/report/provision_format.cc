// The provisioning report; see provision_format.h.
#include "report/provision_format.h"

#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::report {

std::string FormatProvisionText(const std::string& trace, const analysis::Provisioning& p) {
  const auto& m = p.machine;
  std::string out = "plumber provision: " + trace + ", target " + FormatNumber(p.target) + " minibatches/s\n";
  out += "  cores:      " + std::to_string(m.cores) +
         (p.lp_cores > 0 ? " (the LP's fractional optimum needs " + std::to_string(p.lp_cores) +
                               "; whole threads need " + std::to_string(m.cores) + ")"
                         : std::string()) +
         "\n";
  out += "  memory:     " + units::FormatBytes(m.memory_bytes) +
         (p.cache_node.empty() ? " (buffers only; no cache pays off)" : " (cache after " + p.cache_node + ")") + "\n";
  out += "  bandwidth:  " + units::FormatRate(m.bandwidth) +
         (p.bandwidth_note.empty() ? std::string() : " (" + p.bandwidth_note + ")") + "\n";
  out += "  cost:       $" + FormatFixed(m.cost_per_hour, 4) + " per hour (cpu $" +
         FormatNumber(p.prices.per_core_hour) + "/core-h, mem $" + FormatNumber(p.prices.per_gb_hour) +
         "/GB-h, bw $" + FormatNumber(p.prices.per_100mbps_hour) + "/100MB/s-h)\n";
  if (p.rewritten_throughput) {
    out += "  predicted:  " + FormatNumber(*p.rewritten_throughput) +
           " minibatches/s for the pipeline `plumber rewrite` emits for this machine\n";
  }
  for (const auto& note : p.notes) out += "  note:       " + note + "\n";
  return out;
}

std::string FormatProvisionJson(const std::string& trace, const analysis::Provisioning& p) {
  nlohmann::ordered_json j;
  j["trace"] = trace;
  j["target_rate"] = p.target;
  j["cores"] = p.machine.cores;
  j["lp_cores"] = p.lp_cores > 0 ? p.lp_cores : p.machine.cores;
  j["memory_bytes"] = p.machine.memory_bytes;
  j["disk_bandwidth_bytes_per_s"] = p.machine.bandwidth;
  j["cache"] = p.cache_node.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.cache_node);
  j["bandwidth_note"] =
      p.bandwidth_note.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.bandwidth_note);
  j["predicted_rewritten_minibatches_per_s"] =
      p.rewritten_throughput ? nlohmann::ordered_json(*p.rewritten_throughput) : nlohmann::ordered_json(nullptr);
  j["notes"] = p.notes;
  j["cost_per_hour"] = p.machine.cost_per_hour;
  j["prices"] = {{"cpu_per_core_hour", p.prices.per_core_hour},
                 {"mem_per_gb_hour", p.prices.per_gb_hour},
                 {"bw_per_100mbps_hour", p.prices.per_100mbps_hour}};
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
