// LP reconciliation and the plan; see prediction.h.
#include "analysis/prediction.h"

#include <algorithm>
#include <cmath>

#include "analysis/plan.h"

namespace plumber::analysis {

Status SolvePrograms(Analysis* a, const lp::LinearProgram::Options& lp) {
  if (!a->predicted_throughput) return Status::OK();
  PlanOptions as_traced;
  as_traced.structural_caps = false;
  as_traced.allow_cache = false;
  as_traced.lp = lp;
  auto solved = MakePlan(*a, as_traced);
  if (!solved.ok()) return solved.status().WithContext(a->source);
  const double x = solved->throughput_without_cache;
  if (a->cpu_bound) {
    const double closed = *a->cpu_bound;
    if (std::fabs(x - closed) > 1e-6 * std::max(1.0, closed)) {
      a->warnings.push_back("the LP's CPU bound (" + std::to_string(x) + ") differs from the closed form (" +
                            std::to_string(closed) + "); using the LP's");
    }
  }
  a->cpu_bound = x;
  a->predicted_throughput = a->disk_bound ? std::min(x, *a->disk_bound) : x;

  PlanOptions structural;
  structural.lp = lp;
  auto plan = MakePlan(*a, structural);
  if (!plan.ok()) return plan.status().WithContext(a->source);
  a->plan = std::move(*plan);
  return Status::OK();
}

}  // namespace plumber::analysis
