// The rewrite of an imported pipeline, said in tf.data's words. plumber
// cannot edit a user's Python, so each change of the plan becomes the call
// to edit (num_parallel_calls= on map, interleave and batch, cycle_length=,
// where .cache() goes and how big it is, .prefetch(n)), with its reason and
// what the model predicts once it and those before it are made; then the
// options.autotune budgets that keep AUTOTUNE, where it remains, within
// the machine planned for.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "rewrite/rewriter.h"

namespace plumber::rewrite {

struct TfAdvice {
  std::string node;     // the node of the imported program ("ParallelMapV2.12")
  std::string tf_type;  // its iterator type as imported; "" for options
  std::string where;    // how to find it in the code ("the ParallelMapV2 read by BatchV2.14")
  std::string edit;     // the call to write, e.g. ".map(f, num_parallel_calls=8)"
  std::string before;   // what it is now ("" when added)
  // The values it changes, old to new, in words that cannot be read
  // backwards: "num_parallel_calls from 3 to 8" ("" when added).
  std::string change;
  std::string why;
  // The model's throughput with this edit and every one before it.
  double predicted_after = 0;
};

// The edits of `result` (a Rewrite of `analysis`, an imported trace).
std::vector<TfAdvice> TfDataAdvice(const analysis::Analysis& analysis, const RewriteResult& result);

}  // namespace plumber::rewrite
