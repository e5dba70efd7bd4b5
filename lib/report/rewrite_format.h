// Text and JSON for plans and rewrites: what `plumber analyze` adds as its
// plan section, and what `plumber rewrite` prints about its changes.
// Numbers in text have four significant digits; JSON carries them whole.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/analysis.h"
#include "rewrite/rewriter.h"
#include "rewrite/tf_advice.h"

namespace plumber::report {

// {"throughput", "throughput_without_cache", "binding_without_cache",
//  "cache": {"node", "bytes", "budget_bytes"} or null, "read_parallelism",
//  "cores": {node: theta, ...}}
nlohmann::ordered_json PlanJson(const analysis::Plan& plan);
// Indented lines for a text report, ending in a newline.
std::string PlanText(const analysis::Plan& plan);

// The analysis the rewrite planned from says which cores it planned for
// and why (CoresPlannedText).
std::string RewriteJson(const analysis::Analysis& analysis, const rewrite::RewriteResult& result,
                        const std::string& trace, const std::string& output);
std::string RewriteText(const analysis::Analysis& analysis, const rewrite::RewriteResult& result,
                        const std::string& trace, const std::string& output);

// The rewrite of an imported trace as tf.data edits (tf_advice.h): each
// with where it goes, the call, the reason and the prediction once made,
// after what the source could not tell.
std::string TfAdviceText(const analysis::Analysis& analysis, const rewrite::RewriteResult& result,
                         const std::vector<rewrite::TfAdvice>& advice);
// {"trace", "imported_from", "limits", "predicted_before", "predicted_after",
//  "cores", "memory_bytes", "advice": [{"node", "tf_type", "where", "edit",
//  "before", "why", "predicted_after"}], "plan"}
std::string TfAdviceJson(const analysis::Analysis& analysis, const rewrite::RewriteResult& result,
                         const std::vector<rewrite::TfAdvice>& advice);

}  // namespace plumber::report
