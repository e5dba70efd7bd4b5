// LP reconciliation and the plan; see prediction.h.
#include "analysis/prediction.h"

#include <algorithm>
#include <cmath>

#include "analysis/plan.h"
#include "lp/throughput.h"

namespace plumber::analysis {
namespace {

bool Differ(double a, double b) { return std::fabs(a - b) > 1e-6 * std::max(1.0, std::max(a, b)); }

// The CPU-only program: cores shared by the stages' CPU under their caps,
// nothing else (no storage rows, no waiting).
StatusOr<double> SolveCpuOnly(const Analysis& a, const lp::LinearProgram::Options& options) {
  lp::ThroughputProblem p;
  p.cores = a.cores;
  for (const auto& m : a.nodes) {
    const double c = m.steady_state_cost && m.reliable ? m.cpu_seconds_per_minibatch : 0.0;
    p.stages.push_back({m.name, c, m.max_cores, 0.0, 1.0});
  }
  PLUMBER_ASSIGN_OR_RETURN(lp::ThroughputPlan plan, lp::SolveThroughput(p, options));
  return plan.throughput;
}

// The pipeline exactly as configured: each thread group at its threads,
// each stage at the cores its threads give it, storage as traced.
StatusOr<lp::ThroughputPlan> SolveAsTraced(const Analysis& a, const lp::LinearProgram::Options& options) {
  lp::ThroughputProblem p;
  p.cores = a.cores;
  for (const auto& m : a.nodes) {
    const bool counted = m.steady_state_cost && m.reliable;
    p.stages.push_back({m.name, counted ? m.cpu_seconds_per_minibatch : 0.0, std::max(1.0, m.cores_now),
                        counted ? m.service_seconds_per_minibatch : 0.0, static_cast<double>(m.threads)});
  }
  for (const GroupModel& g : a.thread_groups) {
    lp::ThreadGroupCost row;
    row.name = g.name;
    row.threads = g.threads;
    double members = 0;
    for (const auto& name : g.members) {
      // Stages are in the order of a.nodes: the node's position is its
      // stage (a lookup, not a scan: programs reach 100,000 nodes).
      const NodeModel* m = a.Find(name);
      if (m == nullptr) continue;
      const int k = static_cast<int>(m - a.nodes.data());
      row.stages.push_back(k);
      members += p.stages[k].service_seconds_per_minibatch;
    }
    row.extra_seconds_per_minibatch = std::max(0.0, g.service_seconds_per_minibatch - members);
    p.groups.push_back(std::move(row));
  }
  if (a.disk_bound) {
    p.storage.bytes_per_minibatch = a.disk_bytes_per_minibatch;
    p.storage.bandwidth = *a.disk_bandwidth;
  }
  return lp::SolveThroughput(p, options);
}

}  // namespace

Status SolvePrograms(Analysis* a, const PlanOptions& plan_options) {
  const lp::LinearProgram::Options& lp = plan_options.lp;
  if (!a->predicted_throughput) return Status::OK();
  if (a->cpu_bound) {
    auto cpu = SolveCpuOnly(*a, lp);
    if (!cpu.ok()) return cpu.status().WithContext(a->source);
    if (Differ(*cpu, *a->cpu_bound)) {
      a->warnings.push_back("the LP's CPU bound (" + std::to_string(*cpu) + ") differs from the closed form (" +
                            std::to_string(*a->cpu_bound) + "); using the LP's");
    }
    a->cpu_bound = *cpu;
  }
  // The LP knows the steady state; the epoch restart is applied after it.
  if (a->as_traced.steady_throughput) {
    auto traced = SolveAsTraced(*a, lp);
    if (!traced.ok()) return traced.status().WithContext(a->source);
    if (Differ(traced->throughput, *a->as_traced.steady_throughput)) {
      a->warnings.push_back("the LP's as-traced prediction (" + std::to_string(traced->throughput) +
                            ") differs from the closed form (" + std::to_string(*a->as_traced.steady_throughput) +
                            "); using the LP's");
      // The restart keeps its share of the closed form's epoch.
      const double restart_share = a->as_traced.throughput.value_or(0) / *a->as_traced.steady_throughput;
      a->as_traced.steady_throughput = traced->throughput;
      a->as_traced.throughput = traced->throughput * (a->as_traced.restart ? restart_share : 1.0);
    }
  }

  PlanOptions best;
  best.structural_caps = false;
  best.allow_cache = false;
  best.lp = lp;
  auto solved = MakePlan(*a, best);
  if (!solved.ok()) return solved.status().WithContext(a->source);
  const double x = solved->throughput_without_cache;
  a->predicted_throughput = a->disk_bound ? std::min(x, *a->disk_bound) : x;
  if (a->as_traced.restart) {
    a->predicted_throughput = a->as_traced.restart->Apply(BestParallelismBounds(*a));
  }

  auto plan = MakePlan(*a, plan_options);
  if (!plan.ok()) return plan.status().WithContext(a->source);
  a->plan = std::move(*plan);
  return Status::OK();
}

}  // namespace plumber::analysis
