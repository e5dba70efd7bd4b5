// The predictions, reconciled between the two ways of computing them: the
// closed forms of model.h and the throughput LP solved by GLPK. Three
// programs: the CPU-only bound (cores and caps); the pipeline as traced
// (thread groups at their threads, the cores, storage); and the best
// parallelism without a cache (threads may grow past the cores for stages
// that wait; storage rows and the bandwidth curve). A disagreement with a
// closed form beyond the solver's tolerance is said as a warning rather
// than hidden. Then the plan, with the caller's options: what a rewrite
// could reach (structural caps, the cache MILP, a file cache where there
// is room), kept in the Analysis for the rewrite to apply.
#pragma once

#include "analysis/analysis.h"
#include "base/status.h"

namespace plumber::analysis {

// Nothing to do when nothing is bounded (no prediction to reconcile).
Status SolvePrograms(Analysis* analysis, const PlanOptions& plan_options);

}  // namespace plumber::analysis
