// The cache MILP, and its answer for a fixed choice from the closed-form
// limits (steady_limits.h).
#include "lp/cache_choice.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "lp/steady_limits.h"

namespace plumber::lp {
namespace {

Status CheckProblem(const CacheProblem& p) {
  const int n = static_cast<int>(p.nodes.size());
  if (n == 0) return Status::InvalidArgument("cache program: no nodes");
  if (p.root < 0 || p.root >= n) return Status::InvalidArgument("cache program: the root is not a node");
  if (!std::isfinite(p.cores) || p.cores <= 0) {
    return Status::InvalidArgument("cache program: the machine must have more than 0 cores");
  }
  if (!std::isfinite(p.memory_budget) || p.memory_budget < 0 || !std::isfinite(p.bandwidth) || p.bandwidth < 0 ||
      !std::isfinite(p.max_throughput) || p.max_throughput <= 0) {
    return Status::InvalidArgument("cache program: invalid memory budget, bandwidth or throughput ceiling");
  }
  for (const auto& node : p.nodes) {
    for (int c : node.consumers) {
      if (c < 0 || c >= n) return Status::InvalidArgument("cache program: node '" + node.name + "' has a bad consumer");
    }
    if (!std::isfinite(node.cpu_seconds_per_minibatch) || node.cpu_seconds_per_minibatch < 0 ||
        !std::isfinite(node.max_cores) || node.max_cores < 0 || !std::isfinite(node.service_seconds_per_minibatch) ||
        !std::isfinite(node.max_threads) || !std::isfinite(node.storage_bytes_per_minibatch) ||
        node.storage_bytes_per_minibatch < 0 || !std::isfinite(node.materialized_bytes) ||
        node.materialized_bytes < 0) {
      return Status::InvalidArgument("cache program: node '" + node.name + "' has an invalid cost or size");
    }
  }
  return Status::OK();
}

}  // namespace

void AddWorkingRows(LinearProgram& lp, const std::vector<CacheNode>& nodes, int root, const std::vector<int>& y,
                    const std::vector<int>& z) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (static_cast<int>(i) == root) {
      // z_root + y_root >= 1.
      std::vector<std::pair<int, double>> t = {{z[i], 1}};
      if (y[i] >= 0) t.emplace_back(y[i], 1);
      lp.AddRow("root", t, 1, kUnbounded);
    }
    for (int j : nodes[i].consumers) {
      // z_i + y_i >= z_j.
      std::vector<std::pair<int, double>> t = {{z[i], 1}, {z[j], -1}};
      if (y[i] >= 0) t.emplace_back(y[i], 1);
      lp.AddRow("feeds:" + nodes[i].name + "->" + nodes[j].name, t, 0, kUnbounded);
    }
  }
}

double ThroughputWithCaches(const CacheProblem& p, const std::vector<int>& cached, std::vector<bool>* active_out) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<bool> is_cached(n, false);
  for (int k : cached) is_cached[k] = true;
  // A node works when some consumer works and it is not cached: walk from
  // the root down the reverse edges.
  std::vector<std::vector<int>> inputs(n);
  for (int i = 0; i < n; ++i) {
    for (int c : p.nodes[i].consumers) inputs[c].push_back(i);
  }
  std::vector<bool> active(n, false);
  std::deque<int> todo;
  if (!is_cached[p.root]) {
    active[p.root] = true;
    todo.push_back(p.root);
  }
  while (!todo.empty()) {
    int j = todo.front();
    todo.pop_front();
    for (int i : inputs[j]) {
      if (!active[i] && !is_cached[i]) {
        active[i] = true;
        todo.push_back(i);
      }
    }
  }
  // The working nodes are the throughput program's stages.
  ThroughputProblem working;
  working.cores = p.cores;
  working.storage.bandwidth = p.bandwidth;
  for (int i = 0; i < n; ++i) {
    if (!active[i]) continue;
    const auto& node = p.nodes[i];
    working.stages.push_back({node.name, node.cpu_seconds_per_minibatch, node.max_cores,
                              node.service_seconds_per_minibatch, node.max_threads});
    working.storage.bytes_per_minibatch += node.storage_bytes_per_minibatch;
  }
  const auto tightest = TightestLimit(working);
  const double x = tightest ? std::min(p.max_throughput, tightest->throughput) : p.max_throughput;
  if (active_out) *active_out = std::move(active);
  return x;
}

StatusOr<CachePlan> SolveCacheChoice(const CacheProblem& p, const LinearProgram::Options& options) {
  PLUMBER_RETURN_IF_ERROR(CheckProblem(p));
  const int n = static_cast<int>(p.nodes.size());
  const double M = p.max_throughput;

  // Builds the program; phase 2 adds X >= x_floor and a different objective.
  auto build = [&](LinearProgram& lp, bool phase2, double x_floor, std::vector<int>& y, std::vector<int>& z,
                   std::vector<int>& theta) {
    const int x = lp.AddColumn("X", phase2 ? x_floor : 0, M, phase2 ? 0 : 1);
    y.assign(n, -1);
    z.assign(n, -1);
    theta.assign(n, -1);
    std::vector<int> w(n);
    std::vector<std::pair<int, double>> memory, cores, storage;
    for (int i = 0; i < n; ++i) {
      const auto& node = p.nodes[i];
      const bool candidate = node.cacheable && node.materialized_bytes <= p.memory_budget;
      if (candidate) {
        y[i] = lp.AddColumn("y:" + node.name, 0, 1, phase2 ? 1e-6 * node.materialized_bytes / std::max(1.0, p.memory_budget) : 0, true);
        // Rows are scaled to O(1) coefficients: raw byte counts next to
        // 0/1 variables leave GLPK's tolerances meaningless.
        memory.emplace_back(y[i], node.materialized_bytes / std::max(1.0, p.memory_budget));
      }
      z[i] = lp.AddColumn("z:" + node.name, 0, 1, phase2 ? 1 : 0);
      w[i] = lp.AddColumn("w:" + node.name, 0, M, 0);
      theta[i] = lp.AddColumn("theta:" + node.name, 0, node.max_cores, 0);
      cores.emplace_back(theta[i], 1.0);
      lp.AddRow("w<=X:" + node.name, {{w[i], 1}, {x, -1}}, -kUnbounded, 0);
      lp.AddRow("w<=Mz:" + node.name, {{w[i], 1}, {z[i], -M}}, -kUnbounded, 0);
      lp.AddRow("w>=X-M(1-z):" + node.name, {{w[i], 1}, {x, -1}, {z[i], -M}}, -M, kUnbounded);
      if (node.cpu_seconds_per_minibatch > 0) {
        lp.AddRow("rate:" + node.name, {{w[i], node.cpu_seconds_per_minibatch}, {theta[i], -1}}, -kUnbounded, 0);
      }
      // Waiting takes a thread, not a core.
      if (node.service_seconds_per_minibatch > node.cpu_seconds_per_minibatch) {
        lp.AddRow("threads:" + node.name, {{w[i], node.service_seconds_per_minibatch}}, -kUnbounded, node.max_threads);
      }
      if (node.storage_bytes_per_minibatch > 0 && p.bandwidth > 0) {
        storage.emplace_back(w[i], node.storage_bytes_per_minibatch / p.bandwidth);
      }
    }
    AddWorkingRows(lp, p.nodes, p.root, y, z);
    lp.AddRow("cores", cores, -kUnbounded, p.cores);
    if (!memory.empty()) lp.AddRow("memory", memory, -kUnbounded, p.memory_budget > 0 ? 1.0 : 0.0);
    if (!storage.empty()) lp.AddRow("storage", storage, -kUnbounded, 1.0);
    return x;
  };

  std::vector<int> y, z, theta;
  LinearProgram phase1(LinearProgram::Sense::kMaximize);
  build(phase1, false, 0, y, z, theta);
  PLUMBER_ASSIGN_OR_RETURN(LinearProgram::Solution s1, phase1.Solve(options));
  auto chosen = [&](const LinearProgram::Solution& s) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
      if (y[i] >= 0 && s.values[y[i]] > 0.5) out.push_back(i);
    }
    return out;
  };
  // The floor for phase 2 is the exact X of phase 1's choice: the MILP's own
  // X can exceed it by the big-M's integrality slack, which would make
  // phase 2 infeasible.
  std::vector<int> cached = chosen(s1);
  const double best = ThroughputWithCaches(p, cached);
  LinearProgram phase2(LinearProgram::Sense::kMinimize);
  build(phase2, true, best * (1 - 1e-7), y, z, theta);
  auto s2 = phase2.Solve(options);
  const LinearProgram::Solution& final_solution = s2.ok() ? *s2 : s1;
  if (s2.ok() && ThroughputWithCaches(p, chosen(*s2)) >= best * (1 - 1e-6)) cached = chosen(*s2);

  CachePlan plan;
  plan.cached = cached;
  for (int k : cached) plan.cached_bytes += p.nodes[k].materialized_bytes;
  for (int i = 0; i < n; ++i) plan.cores.push_back(final_solution.values[theta[i]]);
  // Report the closed-form X of the chosen caches: exact where the MILP's
  // is within solver tolerance.
  plan.throughput = ThroughputWithCaches(p, plan.cached, &plan.active);
  return plan;
}

}  // namespace plumber::lp
