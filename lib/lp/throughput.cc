// Builds and solves the throughput LP, then names the constraint that binds.
#include "lp/throughput.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lp/steady_limits.h"

namespace plumber::lp {
namespace {

Status CheckProblem(const ThroughputProblem& p) {
  if (!std::isfinite(p.cores) || p.cores <= 0) {
    return Status::InvalidArgument("throughput program: the machine must have more than 0 cores (got " +
                                   std::to_string(p.cores) + ")");
  }
  for (const auto& s : p.stages) {
    if (!std::isfinite(s.cpu_seconds_per_minibatch) || s.cpu_seconds_per_minibatch < 0) {
      return Status::InvalidArgument("throughput program: stage '" + s.name + "' has an invalid CPU cost");
    }
    if (!std::isfinite(s.max_cores) || s.max_cores < 0) {
      return Status::InvalidArgument("throughput program: stage '" + s.name + "' has an invalid core cap");
    }
    if (!std::isfinite(s.service_seconds_per_minibatch) || s.service_seconds_per_minibatch < 0 ||
        !std::isfinite(s.max_threads) || s.max_threads < 0) {
      return Status::InvalidArgument("throughput program: stage '" + s.name + "' has an invalid service or thread cap");
    }
  }
  for (const auto& g : p.groups) {
    if (!std::isfinite(g.threads) || g.threads <= 0 || !std::isfinite(g.extra_seconds_per_minibatch) ||
        g.extra_seconds_per_minibatch < 0) {
      return Status::InvalidArgument("throughput program: thread group '" + g.name + "' has invalid figures");
    }
    for (int k : g.stages) {
      if (k < 0 || k >= static_cast<int>(p.stages.size())) {
        return Status::InvalidArgument("throughput program: thread group '" + g.name + "' names no stage " +
                                       std::to_string(k));
      }
    }
  }
  const auto& st = p.storage;
  if (!std::isfinite(st.bytes_per_minibatch) || st.bytes_per_minibatch < 0 || !std::isfinite(st.bandwidth) ||
      st.bandwidth < 0 || !std::isfinite(st.max_parallelism) || st.max_parallelism < 1) {
    return Status::InvalidArgument("throughput program: invalid storage figures");
  }
  for (const auto& piece : st.curve) {
    if (!std::isfinite(piece.slope) || !std::isfinite(piece.intercept)) {
      return Status::InvalidArgument("throughput program: invalid bandwidth curve piece");
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<ThroughputPlan> SolveThroughput(const ThroughputProblem& problem, const LinearProgram::Options& options) {
  PLUMBER_RETURN_IF_ERROR(CheckProblem(problem));
  const auto& storage = problem.storage;
  const bool reads = storage.bytes_per_minibatch > 0;
  auto waits = [](const StageCost& s) { return s.service_seconds_per_minibatch > s.cpu_seconds_per_minibatch; };
  auto group_service = [&](const ThreadGroupCost& g) {
    double sum = g.extra_seconds_per_minibatch;
    for (int k : g.stages) {
      const auto& s = problem.stages[k];
      sum += std::max(s.cpu_seconds_per_minibatch, s.service_seconds_per_minibatch);
    }
    return sum;
  };
  const bool bounded_by_cpu = [&] {
    for (const auto& s : problem.stages) {
      if (s.cpu_seconds_per_minibatch > 0 || waits(s)) return true;
    }
    for (const auto& g : problem.groups) {
      if (group_service(g) > 0) return true;
    }
    return false;
  }();
  if (!bounded_by_cpu && !(reads && (storage.bandwidth > 0 || !storage.curve.empty()))) {
    return Status::FailedPrecondition(
        "throughput program: no stage costs CPU and storage is not limited, so nothing bounds the throughput");
  }

  LinearProgram lp(LinearProgram::Sense::kMaximize);
  const int x = lp.AddColumn("X", 0, kUnbounded, 1);
  std::vector<int> theta;
  std::vector<std::pair<int, double>> all_cores;
  for (const auto& s : problem.stages) {
    theta.push_back(lp.AddColumn("theta:" + s.name, 0, s.max_cores, 0));
    all_cores.emplace_back(theta.back(), 1.0);
    if (s.cpu_seconds_per_minibatch > 0) {
      lp.AddRow("rate:" + s.name, {{x, s.cpu_seconds_per_minibatch}, {theta.back(), -1.0}}, -kUnbounded, 0);
    }
  }
  if (!all_cores.empty()) lp.AddRow("cores", all_cores, -kUnbounded, problem.cores);
  for (const auto& s : problem.stages) {
    if (waits(s)) lp.AddRow("threads:" + s.name, {{x, s.service_seconds_per_minibatch}}, -kUnbounded, s.max_threads);
  }
  for (const auto& g : problem.groups) {
    const double service = group_service(g);
    if (service > 0) lp.AddRow("group:" + g.name, {{x, service}}, -kUnbounded, g.threads);
  }
  if (reads && storage.bandwidth > 0) {
    lp.AddRow("storage", {{x, storage.bytes_per_minibatch}}, -kUnbounded, storage.bandwidth);
  }
  int p = -1;
  if (reads && !storage.curve.empty()) {
    p = lp.AddColumn("read_parallelism", 1, storage.max_parallelism, 0);
    for (size_t k = 0; k < storage.curve.size(); ++k) {
      lp.AddRow("curve:" + std::to_string(k), {{x, storage.bytes_per_minibatch}, {p, -storage.curve[k].slope}},
                -kUnbounded, storage.curve[k].intercept);
    }
  }
  PLUMBER_ASSIGN_OR_RETURN(LinearProgram::Solution sol, lp.Solve(options));

  ThroughputPlan plan;
  plan.throughput = sol.values[x];
  for (int t : theta) plan.cores.push_back(sol.values[t]);
  if (p >= 0) plan.read_parallelism = sol.values[p];

  // Name the tightest limit among the closed-form bounds that meet X: a
  // stage's own cap (of threads over one of cores) before the thread group
  // it shares, the cores, and storage.
  const double X = plan.throughput;
  const double tol = 1e-7 * std::max(1.0, X);
  std::string stage, threads, group;
  bool cores = false, storage_binds = false;
  for (const auto& limit : SteadyLimits(problem)) {
    if (std::fabs(limit.throughput - X) > tol) continue;
    using Kind = SteadyLimit::Kind;
    switch (limit.kind) {
      case Kind::kStage:
        stage = BindingName(problem, limit);
        break;
      case Kind::kThreads:
        threads = BindingName(problem, limit);
        break;
      case Kind::kGroup:
        if (group.empty()) group = BindingName(problem, limit);
        break;
      case Kind::kCores:
        cores = true;
        break;
      case Kind::kStorage:
        storage_binds = true;
        break;
    }
  }
  plan.binding = !threads.empty() ? threads
                 : !stage.empty() ? stage
                 : !group.empty() ? group
                 : cores          ? "cores"
                 : storage_binds  ? "storage"
                 : p >= 0         ? "bandwidth_curve"
                                  : "cores";
  return plan;
}

}  // namespace plumber::lp
