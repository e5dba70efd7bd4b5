// The limits the throughput program puts on X, each in closed form: the one
// home of the steady-state cost rules. Every row of the LP in throughput.h
// is one of these bounds on X, and without a bandwidth curve the LP's
// optimum is exactly the least of them (give each stage theta_i = c_i X:
// feasible as long as X is under every bound). So the closed forms and the
// LP cannot disagree on a rule; the LP stays as the solver of the
// bandwidth curve and of the cache and provisioning programs, and as the
// tests' cross-check of these.
//
//   group g     n_g / (sum of its stages' service + its extra)
//   cores       cores / sum of c_i
//   stage i     max_cores_i / c_i          (a stage at its core cap)
//   storage     B / D
//   threads i   max_threads_i / s_i        (a stage that waits, s_i > c_i)
//
// A stage holds its thread at least for its CPU: a group counts the larger
// of a stage's service and its CPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lp/throughput.h"

namespace plumber::lp {

struct SteadyLimit {
  enum class Kind { kGroup, kCores, kStage, kStorage, kThreads };
  Kind kind = Kind::kCores;
  // The group's or stage's index in the problem; -1 for cores and storage.
  int index = -1;
  // Minibatches/s; finite and never negative (a limit of nothing, a free
  // stage or an unlimited resource, is left out).
  double throughput = 0;
};

// Every limit of `problem` that bounds X, in the order of the table above
// (groups, cores, stages, storage, threads; stages and groups in their
// input order). The bandwidth curve is not among them: it is a choice of
// read parallelism, which only the LP makes. `problem` is trusted
// (SolveThroughput checks its own).
std::vector<SteadyLimit> SteadyLimits(const ThroughputProblem& problem);

// The least of SteadyLimits, the first of them on a tie; nullopt when
// nothing bounds X.
std::optional<SteadyLimit> TightestLimit(const ThroughputProblem& problem);

// As ThroughputPlan::binding: "group:NAME", "cores", "stage:NAME",
// "storage", "threads:NAME".
std::string BindingName(const ThroughputProblem& problem, const SteadyLimit& limit);

}  // namespace plumber::lp
