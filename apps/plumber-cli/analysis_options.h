// Options shared by the subcommands that analyse a trace (analyze, rank,
// rewrite, provision):
// the trace, the window and the machine overrides, parsed with the units of
// lib/base so "64G" and "100MB/s" mean the same everywhere.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/analysis.h"

namespace plumber::cli {

struct AnalysisFlags {
  std::string trace;
  std::string window;
  int cores = 0;
  std::string mem;
  std::string disk_bandwidth;
  std::string max_memory;
};

void AddAnalysisFlags(CLI::App& app, AnalysisFlags* flags);

// Prints each warning of a report, naming the trace unless it already does.
void WarnAbout(const std::string& trace, const std::vector<std::string>& warnings);

// The analysis options the flags ask for (what-ifs parsed with their units);
// `solve_programs` as in analysis::AnalysisOptions.
StatusOr<analysis::AnalysisOptions> MakeAnalysisOptions(const AnalysisFlags& flags, bool solve_programs = false);

// Parses the flags and analyses the trace; `solve_programs` as in
// analysis::AnalysisOptions.
StatusOr<analysis::Analysis> RunAnalysis(const AnalysisFlags& flags, bool solve_programs = false);

}  // namespace plumber::cli
