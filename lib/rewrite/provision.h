// `plumber provision` as one call: the least-cost machine for a target rate
// (analysis/plan.h's MILP, checked by the evaluator: the pipeline the
// rewrite emits for that machine must reach the target there), or a
// tf.data service deployment (analysis/service_plan.h), with the one rule
// both share: a target that no resources reach is an answer (the reason,
// exit 1 at the CLI), not an error. Also the parser of the prices the
// machine is costed at. It lives in the rewrite because the check rewrites.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/plan.h"
#include "analysis/service_plan.h"
#include "base/env.h"
#include "base/status.h"
#include "lp/provisioning.h"

namespace plumber::rewrite {

using analysis::AnalysisOptions;
using analysis::Provisioning;
using analysis::ServicePlan;
using analysis::ServiceRequest;

// "cpu=0.05,mem=0.004,bw=0.01": per core, per GB and per 100 MB/s, per
// hour; keys in any order, each optional (the others keep `defaults`).
// InvalidArgument, quoting the item, for a missing '=', an unknown key, or
// a value that is not a non-negative number. An empty text is `defaults`.
StatusOr<lp::ResourcePrices> ParseResourcePrices(std::string_view text, const lp::ResourcePrices& defaults = {});

struct ProvisionRequest {
  double target = 0;  // minibatches/s
  // One machine, costed at these prices.
  lp::ResourcePrices prices;
  // Set: plan a tf.data service deployment instead (its target is `target`).
  std::optional<ServiceRequest> service;
};

struct ProvisionAnswer {
  // The analysis' warnings.
  std::vector<std::string> warnings;
  // Exactly one of these is set, unless `unreachable` is.
  std::optional<Provisioning> machine;
  std::optional<ServicePlan> service;
  // Why no resources reach the target, naming the trace; empty otherwise.
  std::string unreachable;
};

// Analyses the trace at `path` and plans what the request asks. A machine
// plan is then checked: the trace is analysed again for the machine chosen
// and rewritten for it, and the evaluator's figure for the emitted pipeline
// is the plan's prediction. When whole threads fall short of the target the
// cores are raised until they reach it (a few steps, each sized by the
// shortfall, up to four times the MILP's cores, then back down to the
// fewest that do); when they never do, the target is unreachable, and the
// reason gives the MILP's cores and the emitted pipeline's figures. Errors are those of reading and analysing the
// trace, or of a program that fails for another reason than an unreachable
// target.
StatusOr<ProvisionAnswer> Provision(Env* env, const std::string& path, const AnalysisOptions& options,
                                    const ProvisionRequest& request);

}  // namespace plumber::rewrite
