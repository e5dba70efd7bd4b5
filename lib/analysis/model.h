// The model of a traced pipeline over its window: the machine planned for
// (the trace's, with what-if overrides), each node's rates (visit ratio,
// CPU per minibatch, rate per core, cores in use and at most, storage bytes
// per minibatch), the closed-form CPU and storage bounds, the ranking by
// parallelism-scaled rate, and the cache candidate. Sizes come from
// sizes.h; the sentences from findings.h; the LP from prediction.h.
#pragma once

#include "analysis/analysis.h"
#include "analysis/trace_source.h"
#include "base/status.h"

namespace plumber::analysis {

// Everything of the Analysis but its findings, LP prediction and plan.
StatusOr<Analysis> BuildModel(LoadedTrace trace, const AnalysisOptions& options);

}  // namespace plumber::analysis
