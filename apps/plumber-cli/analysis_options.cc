// Flag parsing shared by the subcommands that analyse a trace; see analysis_options.h.
#include "analysis_options.h"

#include <spdlog/spdlog.h>

#include "analysis/analyze.h"
#include "base/env.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"

namespace plumber::cli {

void AddAnalysisFlags(CLI::App& app, AnalysisFlags* flags) {
  app.add_option("TRACE", flags->trace,
                 "Trace to analyse (binary or JSON), or a tf.data model dump or PipelineSnapshot (imported)")
      ->required();
  app.add_option("--window", flags->window,
                 "START:END in seconds since the run began (default: after warm-up to the end); for an imported "
                 "dump, SECONDS: the time its counters cover")
      ->check(Window());
  app.add_option("--cores", flags->cores, "Cores to plan for (default: the cores the run had: the traced machine's, fewer when other processes "
                 "used some)")
      ->check(WholeNumber(1, kMaxCores));
  app.add_option("--mem", flags->mem, "Memory a cache may use, e.g. 64G (default: the traced machine's available)")
      ->check(Size());
  app.add_option("--disk-bandwidth", flags->disk_bandwidth,
                 "Storage bandwidth, e.g. 100MB/s (default: the trace's read throttle)")
      ->check(Rate());
  app.add_option("--max-memory", flags->max_memory,
                 "Most memory reading the trace may take, e.g. 512M (default 4G); larger input is refused")
      ->check(Size());
}

void WarnAbout(const std::string& trace, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) Warn(w.rfind(trace, 0) == 0 ? w : trace + ": " + w);
}

StatusOr<analysis::AnalysisOptions> MakeAnalysisOptions(const AnalysisFlags& flags, bool solve_programs) {
  analysis::AnalysisOptions opt;
  opt.solve_programs = solve_programs;
  opt.plan.lp.verbose = spdlog::get_level() <= spdlog::level::debug;  // GLPK's own output with -v
  if (!flags.window.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(opt.window, analysis::ParseWindowSpec(flags.window));
  }
  if (flags.cores > 0) opt.cores = flags.cores;
  if (!flags.mem.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(uint64_t mem, units::ParseBytes(flags.mem));
    opt.memory_bytes = mem;
  }
  if (!flags.disk_bandwidth.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(double bw, units::ParseRate(flags.disk_bandwidth));
    if (!(bw > 0))
      return Status::InvalidArgument("--disk-bandwidth must be positive, got '" + flags.disk_bandwidth + "'");
    opt.disk_bandwidth_bytes_per_s = bw;
  }
  if (!flags.max_memory.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(uint64_t max, units::ParseBytes(flags.max_memory));
    if (max == 0) return Status::InvalidArgument("--max-memory must be positive, got '" + flags.max_memory + "'");
    opt.max_memory_bytes = max;
  }
  return opt;
}

StatusOr<analysis::Analysis> RunAnalysis(const AnalysisFlags& flags, bool solve_programs) {
  PLUMBER_ASSIGN_OR_RETURN(analysis::AnalysisOptions opt, MakeAnalysisOptions(flags, solve_programs));
  return analysis::AnalyzeTraceFile(Env::Default(), flags.trace, opt);
}

}  // namespace plumber::cli
