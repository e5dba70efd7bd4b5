// The provisioning MILP and its "unreachable" diagnosis.
#include "lp/provisioning.h"

#include <cmath>
#include <string>

#include "base/number_format.h"

namespace plumber::lp {

StatusOr<ProvisionPlan> SolveProvisioning(const ProvisionProblem& p, const LinearProgram::Options& options) {
  const int n = static_cast<int>(p.nodes.size());
  if (n == 0) return Status::InvalidArgument("provisioning: no nodes");
  if (p.root < 0 || p.root >= n) return Status::InvalidArgument("provisioning: the root is not a node");
  if (!std::isfinite(p.target) || p.target <= 0) {
    return Status::InvalidArgument("provisioning: the target rate must be a positive number");
  }
  for (const auto& node : p.nodes) {
    for (int c : node.consumers) {
      if (c < 0 || c >= n) return Status::InvalidArgument("provisioning: node '" + node.name + "' has a bad consumer");
    }
  }
  const double gb = 1e9, hundred_mbps = 1e8;
  LinearProgram lp(LinearProgram::Sense::kMinimize);
  // At least one core: even a pipeline replayed from a cache needs a thread.
  const int cores = lp.AddColumn("cores", 1, kUnbounded, p.prices.per_core_hour, /*integer=*/true);
  // Memory in GB and bandwidth in 100 MB/s keep the coefficients near 1.
  const int memory = lp.AddColumn("memory_gb", p.buffer_bytes / gb, kUnbounded, p.prices.per_gb_hour);
  const int bandwidth = lp.AddColumn("bandwidth_100mbps", 0, kUnbounded, p.prices.per_100mbps_hour);
  std::vector<int> y(n, -1), z(n), theta(n);
  std::vector<std::pair<int, double>> all_theta = {{cores, -1}};
  std::vector<std::pair<int, double>> mem_row = {{memory, -1}};
  std::vector<std::pair<int, double>> bw_row = {{bandwidth, -1}};
  for (int i = 0; i < n; ++i) {
    const auto& node = p.nodes[i];
    // A tiny price per cache breaks ties toward fewer caches.
    if (node.cacheable) y[i] = lp.AddColumn("y:" + node.name, 0, 1, 1e-9, true);
    z[i] = lp.AddColumn("z:" + node.name, 0, 1, 0);
    theta[i] = lp.AddColumn("theta:" + node.name, 0, node.max_cores, 0);
    all_theta.emplace_back(theta[i], 1);
    if (node.cpu_seconds_per_minibatch > 0) {
      lp.AddRow("rate:" + node.name, {{theta[i], 1}, {z[i], -p.target * node.cpu_seconds_per_minibatch}}, 0,
                kUnbounded);
    }
    if (node.storage_bytes_per_minibatch > 0) {
      bw_row.emplace_back(z[i], p.target * node.storage_bytes_per_minibatch / hundred_mbps);
    }
    if (y[i] >= 0) mem_row.emplace_back(y[i], node.materialized_bytes / gb);
  }
  AddWorkingRows(lp, p.nodes, p.root, y, z);
  lp.AddRow("cores", all_theta, -kUnbounded, 0);
  lp.AddRow("memory", mem_row, -kUnbounded, 0);
  lp.AddRow("bandwidth", bw_row, -kUnbounded, 0);

  auto sol = lp.Solve(options);
  if (!sol.ok()) {
    if (sol.status().code() != Status::Code::kFailedPrecondition) return sol.status();
    // Name the stages that cannot keep up even with all the cores they can use.
    std::string reason;
    for (const auto& node : p.nodes) {
      if (node.cpu_seconds_per_minibatch <= 0) continue;
      const double max_rate = node.max_cores / node.cpu_seconds_per_minibatch;
      if (max_rate < p.target) {
        reason += (reason.empty() ? "stage '" : "; stage '") + node.name + "' reaches at most " +
                  FormatNumber(max_rate) + " minibatches/s (" + FormatCount(node.max_cores, "core", "cores") + " x " +
                  FormatNumber(1 / node.cpu_seconds_per_minibatch) + " per core)";
      }
    }
    if (reason.empty()) reason = "no combination of resources reaches it";
    return Status::FailedPrecondition("target " + FormatNumber(p.target) + " minibatches/s is unreachable: " + reason +
                                      ", and no cache (one that is re-read and fits) removes it");
  }
  ProvisionPlan plan;
  plan.cores = static_cast<int>(std::llround(sol->values[cores]));
  plan.memory_bytes = sol->values[memory] * gb;
  plan.bandwidth = sol->values[bandwidth] * hundred_mbps;
  for (int i = 0; i < n; ++i) {
    if (y[i] >= 0 && sol->values[y[i]] > 0.5) plan.cached.push_back(i);
    plan.stage_cores.push_back(sol->values[theta[i]]);
  }
  plan.cost_per_hour = plan.cores * p.prices.per_core_hour + plan.memory_bytes / gb * p.prices.per_gb_hour +
                       plan.bandwidth / hundred_mbps * p.prices.per_100mbps_hour;
  return plan;
}

}  // namespace plumber::lp
