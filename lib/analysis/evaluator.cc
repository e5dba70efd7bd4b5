// The one evaluator of a configured program; see evaluator.h.
#include "analysis/evaluator.h"

#include <limits>

#include "lp/steady_limits.h"

namespace plumber::analysis {
namespace {

// The node among `candidates` (every node when null) with the most of
// `cost`, the first of them on a tie; `fallback` when none costs anything.
std::string Heaviest(const ProgramGraph& g, const ProgramCosts& costs, const std::vector<int>* candidates,
                     double WorkCost::*cost, std::string fallback) {
  double most = 0;
  auto consider = [&](int i) {
    const WorkCost& c = costs.nodes[i];
    if (c.works && c.*cost > most) {
      most = c.*cost;
      fallback = g.name(i);
    }
  };
  if (candidates != nullptr) {
    for (const int i : *candidates) consider(i);
  } else {
    for (int i = 0; i < g.size(); ++i) consider(i);
  }
  return fallback;
}

}  // namespace

Evaluation Evaluate(const ProgramGraph& g, const ThreadGroups& tg, const ProgramCosts& costs,
                    const EvaluationMachine& machine, const RestartModels* restart) {
  constexpr double kNoCap = std::numeric_limits<double>::infinity();
  // The program as the throughput program's rows: a stage per node with no
  // cap of its own (its threads are its group's) and a group per thread
  // group.
  lp::ThroughputProblem p;
  p.cores = machine.cores;
  p.stages.reserve(static_cast<size_t>(g.size()));
  for (int i = 0; i < g.size(); ++i) {
    const WorkCost& c = costs.nodes[i];
    p.stages.push_back({std::string(), c.works ? c.cpu_seconds : 0.0, kNoCap, c.works ? c.service_seconds : 0.0,
                        kNoCap});
    if (c.works) p.storage.bytes_per_minibatch += c.storage_bytes;
  }
  for (size_t k = 0; k < tg.groups.size(); ++k) {
    lp::ThreadGroupCost group;
    group.threads = tg.groups[k].threads;
    group.stages = tg.groups[k].members;
    if (k == 0) group.extra_seconds_per_minibatch = machine.step_seconds;
    if (k < costs.group_extra_seconds.size()) group.extra_seconds_per_minibatch += costs.group_extra_seconds[k];
    p.groups.push_back(std::move(group));
  }
  if (machine.storage_bandwidth && *machine.storage_bandwidth > 0) p.storage.bandwidth = *machine.storage_bandwidth;

  Evaluation e;
  using Kind = lp::SteadyLimit::Kind;
  std::optional<lp::SteadyLimit> tightest;
  e.group_throughput.assign(tg.groups.size(), std::nullopt);
  for (const auto& limit : lp::SteadyLimits(p)) {
    if (limit.kind == Kind::kGroup) e.group_throughput[limit.index] = limit.throughput;
    std::optional<double>* bound = limit.kind == Kind::kGroup   ? &e.bounds.threads
                                   : limit.kind == Kind::kCores ? &e.bounds.cpu
                                                                : &e.bounds.other;
    if (!*bound || limit.throughput < **bound) *bound = limit.throughput;
    if (!tightest || limit.throughput < tightest->throughput) tightest = limit;
  }
  if (tightest) {
    e.steady_throughput = tightest->throughput;
    switch (tightest->kind) {
      case Kind::kGroup:
        e.limit = "threads";
        e.bottleneck = Heaviest(g, costs, &tg.groups[tightest->index].members, &WorkCost::service_seconds,
                                tg.groups[tightest->index].name);
        break;
      case Kind::kStorage:
        e.limit = "storage";
        e.bottleneck = Heaviest(g, costs, nullptr, &WorkCost::storage_bytes, "");
        break;
      default:  // the cores: a stage here has no cap of its own
        e.limit = "cpu";
        e.bottleneck = Heaviest(g, costs, nullptr, &WorkCost::cpu_seconds, "");
        break;
    }
  }
  if (machine.ceiling && (!e.steady_throughput || *machine.ceiling < *e.steady_throughput)) {
    e.steady_throughput = machine.ceiling;
    e.limit = "ceiling";
    e.bottleneck.clear();
  }
  if (machine.ceiling && (!e.bounds.other || *machine.ceiling < *e.bounds.other)) e.bounds.other = machine.ceiling;
  e.throughput = e.steady_throughput;

  if (restart != nullptr) {
    double cpu = 0;
    for (const auto& s : p.stages) cpu += s.cpu_seconds_per_minibatch;
    RestartCosts rc;
    rc.carried = restart->carried;
    rc.works = restart->works;
    rc.threads = [&](int i) {
      const int k = tg.group_of[i];
      return k >= 0 ? tg.groups[k].threads : 1;
    };
    rc.group = [&](int i) { return tg.group_of[i]; };
    rc.cpu_seconds_per_minibatch = cpu;
    rc.cores = machine.cores;
    e.restart = FindEpochRestart(g, rc);
    if (e.restart && e.throughput) e.throughput = e.restart->Apply(e.bounds);
  }
  if (e.steady_throughput) {
    e.cores.reserve(static_cast<size_t>(g.size()));
    for (int i = 0; i < g.size(); ++i) e.cores.push_back(p.stages[i].cpu_seconds_per_minibatch * *e.steady_throughput);
  }
  return e;
}

}  // namespace plumber::analysis
