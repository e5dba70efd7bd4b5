// The analysis of a trace, from file to result: read it and choose the
// window (trace_source.h), model it (model.h, sizes.h), say what the model
// says (findings.h) and, when asked, solve the GLPK programs for the
// prediction and the plan (prediction.h). Every command that analyses a
// trace calls one of these; none reads the trace again afterwards, since
// the Analysis carries its header, program graph and machine.
#pragma once

#include <string>

#include "analysis/analysis.h"
#include "analysis/trace_source.h"
#include "base/env.h"
#include "base/status.h"
#include "trace.pb.h"

namespace plumber::analysis {

// Reads a trace file (binary: streamed record by record; JSON: parsed
// whole) and analyses it. A torn tail becomes a warning in the result.
StatusOr<Analysis> AnalyzeTraceFile(Env* env, const std::string& path, const AnalysisOptions& options);

// The same over a whole trace in memory; `source` names it in messages.
StatusOr<Analysis> AnalyzeTrace(const schema::Trace& trace, const AnalysisOptions& options, const std::string& source);

// The same over a trace already read.
StatusOr<Analysis> Analyze(LoadedTrace trace, const AnalysisOptions& options);

}  // namespace plumber::analysis
