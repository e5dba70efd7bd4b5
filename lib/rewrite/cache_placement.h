// Where a rewrite may put a file cache, and how much room it has there: the
// directory the user named, else the one the rewritten pipeline is written
// to, else the working directory, as an absolute path; and the free bytes
// of its file system, asked of the Env (0 when it cannot tell, which
// rules a file cache out). In lib/rewrite because the rewrite is what
// places caches; the CLI only passes its flags.
#pragma once

#include <string>

#include "analysis/plan.h"
#include "base/env.h"

namespace plumber::rewrite {

// Sets plan->file_cache_dir and plan->file_cache_free_bytes. `cache_dir`
// is the user's choice (empty: none); `output` the path the rewritten
// pipeline goes to (empty: stdout).
void PlaceFileCache(Env* env, const std::string& cache_dir, const std::string& output, analysis::PlanOptions* plan);

}  // namespace plumber::rewrite
