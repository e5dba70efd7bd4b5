// What the optimize loop learns: per stage, the cost per
// element measured at each parallelism it ran at, across the loop's steps.
// One trace shows a stage's cost at one parallelism only, and the model
// assumes it the same at any other; a step that gave a map 2 threads may
// find it costs 3x more per element there (hand-offs, contention for
// memory). Kept here, that measurement prices the next rewrite, so a step
// that disappointed is not proposed again.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "analysis/analysis.h"
#include "pipeline/program_graph.h"

namespace plumber::rewrite {

// Per element, not per minibatch: a later rewrite may change how many of
// a stage's elements a minibatch takes (a filter, a batch size), and the
// trace it rewrites gives the visit ratio to convert.
struct MeasuredCost {
  double cpu_seconds_per_element = 0;
  // CPU plus waiting (storage, remote calls).
  double service_seconds_per_element = 0;
  // Elements the measurement saw: the weight of a merge.
  int64_t elements = 0;
};

struct MeasuredCosts {
  // Stage (node name) -> parallelism of the threads its work ran on -> cost.
  std::map<std::string, std::map<int, MeasuredCost>> stages;

  // Adds the costs of every node whose counters are reliable and that
  // worked in the window (not idle under a cache). A cost already known at
  // the same parallelism is merged with it, weighted by elements: two runs
  // at the same parallelism measure the same thing, and more elements
  // measure it better.
  void Add(const analysis::Analysis& analysis);

  // Null when the stage was never measured at `parallelism`.
  const MeasuredCost* Find(const std::string& stage, int parallelism) const;

  // Drops what was measured of `stage`: a shape change (a move, a fusion)
  // gave that name other work, which its old costs do not price.
  void Forget(const std::string& stage) { stages.erase(stage); }

  bool empty() const { return stages.empty(); }
};

// The parallelism of the threads node i's work runs on, as `g` configures
// it: its own for a node outside any interleave function, the
// interleave's for a node of its function (the interleave's workers run it).
int StageParallelism(const ProgramGraph& g, int i);

}  // namespace plumber::rewrite
