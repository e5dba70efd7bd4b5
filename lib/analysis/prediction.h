// The prediction for the program as traced, reconciled between the two
// ways of computing it: the closed form of model.h (each node takes the
// least it needs; X is held by the cores or the tightest cap) and the
// throughput LP solved by GLPK over the same caps, which also sees the
// storage rows and the bandwidth curve. The LP's optimum becomes the CPU
// bound and the prediction; a disagreement beyond the solver's tolerance is
// said as a warning rather than hidden. Then the plan: what a rewrite could
// reach with structural caps and the cache MILP.
#pragma once

#include "analysis/analysis.h"
#include "base/status.h"

namespace plumber::analysis {

// Nothing to do when nothing is bounded (no prediction to reconcile).
Status SolvePrograms(Analysis* analysis, const lp::LinearProgram::Options& lp);

}  // namespace plumber::analysis
