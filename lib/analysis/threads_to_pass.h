// How many threads a stage limited by waiting needs before another limit
// binds: what `plumber rank` tells a user to give it, and the size of the
// ranked walk's step in the bench.
#ifndef PLUMBER_ANALYSIS_THREADS_TO_PASS_H_
#define PLUMBER_ANALYSIS_THREADS_TO_PASS_H_

#include "analysis/analysis.h"

namespace plumber::analysis {

// Sets NodeModel::threads_to_pass of every node ranked kWait, and says it
// at the end of its limit_text. Needs the ranking's scaled rates and the
// analysis's CPU and storage bounds.
void ThreadsToPass(Analysis* r);

}  // namespace plumber::analysis

#endif  // PLUMBER_ANALYSIS_THREADS_TO_PASS_H_
