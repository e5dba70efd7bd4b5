// The proof that a rewritten pipeline keeps its output: run the original
// and the rewrite on the same data, with the same seeds, and compare their
// first elements, in order or as a multiset (where a rule allows another
// order). A shape change whose rewrite fails this is not made. It lives
// here because it is the one library that links the runtime and the
// rewrite.
#pragma once

#include <cstdint>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "rewrite/shape_search.h"

namespace plumber::optimize {

struct OutputCheck {
  bool same = false;
  // Elements compared: the first `n` asked for, fewer when a pipeline ends
  // sooner (then both must end at the same count).
  int64_t compared = 0;
  // Where they differ, in words ("element 3 differs", "the rewrite ends
  // after 5 elements, the original after 8"); empty when the same.
  std::string difference;
};

// Runs both pipelines (relative paths resolve against `base_dir`) for at
// most `n` elements each and compares them: the same sequence, or with
// `any_order` the same multiset. A multiset of the first `n` is only a
// proof where the reordering stays within them: a finite pipeline compared
// whole (`n` beyond its end) is. Errors are those of building or running
// either pipeline, named as "the original" or "the rewrite".
StatusOr<OutputCheck> CompareOutputs(Env* env, const schema::Pipeline& original, const schema::Pipeline& rewritten,
                                     const std::string& base_dir, int64_t n, bool any_order);

// The shape search's proof (rewrite/shape_search.h), as `rewrite
// --verify N` and the optimize loop give it: both pipelines' first `n`
// outputs, in order (every rule keeps the order: a shuffle moved keeps its
// seed's permutation), relative paths resolved against `base_dir`.
rewrite::ShapeVerifier OutputVerifier(Env* env, std::string base_dir, int n);

}  // namespace plumber::optimize
