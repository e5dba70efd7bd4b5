// What `plumber analyze` and `plumber rank` print: an Analysis for people
// (text, markdown) and scripts (JSON), with the plan section when the
// analysis solved its programs. The JSON keys (man plumber-analyze) are a
// contract: keys may be added, never renamed. Unbounded or unknown numbers
// are JSON null. The pictures (dot, HTML) are in graph.h.
#pragma once

#include <string>

#include "analysis/analysis.h"

namespace plumber::report {

std::string FormatAnalysisJson(const analysis::Analysis& analysis);
std::string FormatAnalysisText(const analysis::Analysis& analysis);
std::string FormatAnalysisMarkdown(const analysis::Analysis& analysis);

// What holds the as-traced prediction, as "burn, held by threads" (the node
// or thread group, then threads, storage or the cores); empty when it is
// unbounded. Every report that shows the as-traced number (analyze, check,
// diff, HTML) says it with these words.
std::string AsTracedHolder(const analysis::AsTraced& as_traced, int cores);

// The cores planned for and why, as "1 core (the run had 1.2 of the
// machine's 2 cores; other processes used the rest)" or "8 cores (given by
// --cores)"; just "8 cores" when they are the machine's and the trace
// records nothing more. Every report that names the cores planned for
// (analyze, rank, rewrite, HTML) says it with these words.
std::string CoresPlannedText(const analysis::Analysis& analysis);

// The ranking alone (`plumber rank`); top <= 0 means every node.
std::string FormatRankText(const analysis::Analysis& analysis, int top);
std::string FormatRankJson(const analysis::Analysis& analysis, int top);

}  // namespace plumber::report
