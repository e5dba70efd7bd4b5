// The throughput program's limits in closed form; see steady_limits.h.
#include "lp/steady_limits.h"

#include <algorithm>
#include <cmath>

namespace plumber::lp {

std::vector<SteadyLimit> SteadyLimits(const ThroughputProblem& p) {
  using Kind = SteadyLimit::Kind;
  std::vector<SteadyLimit> out;
  auto add = [&](Kind kind, int index, double n, double per_minibatch) {
    if (per_minibatch > 0 && n >= 0 && std::isfinite(n / per_minibatch)) {
      out.push_back({kind, index, n / per_minibatch});
    }
  };
  for (int k = 0; k < static_cast<int>(p.groups.size()); ++k) {
    const ThreadGroupCost& g = p.groups[k];
    double service = g.extra_seconds_per_minibatch;
    for (int i : g.stages) {
      const StageCost& s = p.stages[i];
      service += std::max(s.cpu_seconds_per_minibatch, s.service_seconds_per_minibatch);
    }
    add(Kind::kGroup, k, g.threads, service);
  }
  double cpu = 0;
  for (const auto& s : p.stages) cpu += s.cpu_seconds_per_minibatch;
  add(Kind::kCores, -1, p.cores, cpu);
  const int n = static_cast<int>(p.stages.size());
  for (int i = 0; i < n; ++i) add(Kind::kStage, i, p.stages[i].max_cores, p.stages[i].cpu_seconds_per_minibatch);
  if (p.storage.bandwidth > 0) add(Kind::kStorage, -1, p.storage.bandwidth, p.storage.bytes_per_minibatch);
  // Waiting takes a thread, not a core: only a stage that waits has a
  // thread row.
  for (int i = 0; i < n; ++i) {
    const StageCost& s = p.stages[i];
    if (s.service_seconds_per_minibatch > s.cpu_seconds_per_minibatch) {
      add(Kind::kThreads, i, s.max_threads, s.service_seconds_per_minibatch);
    }
  }
  return out;
}

std::optional<SteadyLimit> TightestLimit(const ThroughputProblem& problem) {
  std::optional<SteadyLimit> best;
  for (const auto& limit : SteadyLimits(problem)) {
    if (!best || limit.throughput < best->throughput) best = limit;
  }
  return best;
}

std::string BindingName(const ThroughputProblem& p, const SteadyLimit& limit) {
  switch (limit.kind) {
    case SteadyLimit::Kind::kGroup:
      return "group:" + p.groups[limit.index].name;
    case SteadyLimit::Kind::kCores:
      return "cores";
    case SteadyLimit::Kind::kStage:
      return "stage:" + p.stages[limit.index].name;
    case SteadyLimit::Kind::kStorage:
      return "storage";
    case SteadyLimit::Kind::kThreads:
      return "threads:" + p.stages[limit.index].name;
  }
  return "cores";
}

}  // namespace plumber::lp
