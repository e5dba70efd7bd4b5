// Text and JSON for plans and rewrites: what `plumber analyze` adds as its
// plan section, and what `plumber rewrite` prints about its changes.
// Numbers in text have four significant digits; JSON carries them whole.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rewrite/rewriter.h"

namespace plumber::report {

// {"throughput", "throughput_without_cache", "binding_without_cache",
//  "cache": {"node", "bytes", "budget_bytes"} or null, "read_parallelism",
//  "cores": {node: theta, ...}}
nlohmann::ordered_json PlanJson(const analysis::Plan& plan);
// Indented lines for a text report, ending in a newline.
std::string PlanText(const analysis::Plan& plan);

std::string RewriteJson(const rewrite::RewriteResult& result, const std::string& trace, const std::string& output);
std::string RewriteText(const rewrite::RewriteResult& result, const std::string& trace, const std::string& output);

}  // namespace plumber::report
