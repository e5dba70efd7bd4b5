// The DataLoader advice (rewrite/torch_advice.h) as text and JSON: the
// DataLoader(...) call to write, each change with its reason, the
// predictions, the prefix cache, and the best candidates the evaluator
// priced.
#pragma once

#include <string>

#include "analysis/analysis.h"
#include "rewrite/torch_advice.h"

namespace plumber::report {

std::string TorchAdviceText(const analysis::Analysis& analysis, const rewrite::TorchAdvice& advice);
// {"trace", "imported_from", "cores", "memory_bytes", "limits", "dataloader":
//  {"traced", "advised" (each {"num_workers", "prefetch_factor",
//  "persistent_workers", "pin_memory"}), "call", "observed_batches_per_s",
//  "traced_prediction_batches_per_s", "advised_prediction_batches_per_s",
//  "limit", "bottleneck", "changes": [{"argument", "before", "after", "why",
//  "predicted_after_batches_per_s"}],
//  "cache" (null or {"transforms", "last_node", "first_random", "bytes",
//  "fits", "budget_bytes", "prediction_batches_per_s", "code"}), "candidates":
//  [{"num_workers", "prefetch_factor", "persistent_workers",
//  "prediction_batches_per_s", "limit"}], "notes"}}
std::string TorchAdviceJson(const analysis::Analysis& analysis, const rewrite::TorchAdvice& advice);

}  // namespace plumber::report
