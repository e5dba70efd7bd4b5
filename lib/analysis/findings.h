// The findings: what the model says, in sentences a user can act on
// (observed and predicted throughput, the consumer's wait, the bottleneck
// and what limits it, the CPU and storage bounds, dataset sizes, what is
// random, where a cache fits). They belong to the analysis, not to one
// report format: text, markdown, JSON and HTML all show the same list.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"

namespace plumber::analysis {

std::vector<std::string> WriteFindings(const Analysis& analysis);

}  // namespace plumber::analysis
