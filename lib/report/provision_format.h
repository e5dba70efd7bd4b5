// What `plumber provision` prints: the least-cost machine that reaches the
// target rate, as text and as JSON.
#pragma once

#include <string>

#include "analysis/plan.h"

namespace plumber::report {

std::string FormatProvisionText(const std::string& trace, const analysis::Provisioning& p);
// {"trace", "target_rate", "cores", "memory_bytes", "disk_bandwidth_bytes_per_s",
//  "cache", "cost_per_hour", "prices": {...}}
std::string FormatProvisionJson(const std::string& trace, const analysis::Provisioning& p);

}  // namespace plumber::report
