// Provisioning, the paper's stated future work: the least-cost cores,
// memory and storage bandwidth that reach a target rate. With the rate
// fixed, the throughput constraints become linear in the resources, so the
// program is a MILP over the same cache booleans as cache_choice.h:
//
//   minimise  price_core * cores + price_byte * memory + price_bw * B
//   theta_i >= target * c_i * z_i,  theta_i <= max_cores_i,  sum theta <= cores
//   B >= target * sum D_i z_i,  memory >= buffers + sum size_k y_k
//   z_root + y_root >= 1,  z_i + y_i >= z_j for every consumer j of i
//   cores integer.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "lp/cache_choice.h"

namespace plumber::lp {

// Prices per hour. The defaults approximate on-demand prices of general-
// purpose cloud machines: about $0.03 per vCPU-hour, $0.004 per GB-hour of
// memory and $0.01 per 100 MB/s-hour of storage throughput.
struct ResourcePrices {
  double per_core_hour = 0.0316;
  double per_gb_hour = 0.0042;
  double per_100mbps_hour = 0.01;
};

struct ProvisionProblem {
  std::vector<CacheNode> nodes;  // consumers, costs, caps, cacheability, sizes
  int root = 0;
  double target = 0;             // minibatches/s to reach
  double buffer_bytes = 0;       // memory the pipeline's buffers hold anyway
  ResourcePrices prices;
};

struct ProvisionPlan {
  int cores = 0;
  double memory_bytes = 0;
  double bandwidth = 0;          // bytes/s of storage reads needed
  std::vector<int> cached;
  std::vector<double> stage_cores;  // theta per node
  double cost_per_hour = 0;
};

// FailedPrecondition with the reason when no resources reach the target,
// e.g. a sequential stage slower than it that no cache can remove.
StatusOr<ProvisionPlan> SolveProvisioning(const ProvisionProblem& problem,
                                          const LinearProgram::Options& options = {});

}  // namespace plumber::lp
