// What `plumber provision --workers` prints: the tf.data service deployment
// of analysis/service_plan.h, as text and as JSON.
#pragma once

#include <string>

#include "analysis/service_plan.h"

namespace plumber::report {

std::string FormatServiceText(const std::string& trace, const analysis::ServicePlan& p);
// {"trace", "target_rate", "service_needed", "workers",
//  "single_machine": {"cores", "memory_bytes", "throughput", "binding", "cache"},
//  "worker": {"cores", "memory_bytes", "rate", "bound", "compute_rate", "compute_binding",
//             "cores_used", "memory_needed_bytes", "as_traced_rate", "network_bytes_per_s", "network_rate", "cache", "cache_bytes"},
//  "sharding": {"policy", "reason", "readers", "files"},
//  "distribute": {"after", "trainer_nodes", "bytes_per_minibatch", "processing_mode", "code"},
//  "storage": {"bytes_per_minibatch", "worker_bandwidth_bytes_per_s", "bandwidth_from",
//              "total_bytes_per_s"},
//  "assumptions": [...]}; unknown or unbounded values are null (man/plumber-provision.1).
std::string FormatServiceJson(const std::string& trace, const analysis::ServicePlan& p);

}  // namespace plumber::report
