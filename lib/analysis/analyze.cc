// The analysis pipeline of analyze.h.
#include "analysis/analyze.h"

#include "analysis/findings.h"
#include "analysis/model.h"
#include "analysis/prediction.h"

namespace plumber::analysis {

StatusOr<Analysis> Analyze(LoadedTrace trace, const AnalysisOptions& options) {
  std::vector<std::string> read_warnings = std::move(trace.warnings);
  PLUMBER_ASSIGN_OR_RETURN(Analysis a, BuildModel(std::move(trace), options));
  a.warnings.insert(a.warnings.begin(), read_warnings.begin(), read_warnings.end());
  // The findings describe the closed form; the LP refines the prediction
  // after them and warns where the two disagree.
  a.findings = WriteFindings(a);
  if (options.solve_programs) PLUMBER_RETURN_IF_ERROR(SolvePrograms(&a, options.plan));
  return a;
}

StatusOr<Analysis> AnalyzeTrace(const schema::Trace& trace, const AnalysisOptions& options, const std::string& source) {
  PLUMBER_ASSIGN_OR_RETURN(LoadedTrace loaded, LoadTrace(trace, options.window, source));
  return Analyze(std::move(loaded), options);
}

StatusOr<Analysis> AnalyzeTraceFile(Env* env, const std::string& path, const AnalysisOptions& options) {
  PLUMBER_ASSIGN_OR_RETURN(LoadedTrace loaded, LoadTraceFile(env, path, options.window, options.max_memory_bytes));
  return Analyze(std::move(loaded), options);
}

}  // namespace plumber::analysis
