// Where to cache: a mixed-integer program over the throughput LP. One
// boolean y_k per cacheable node says "materialise k's output in memory";
// a node whose every path to the output passes through a chosen cache does
// no steady-state work (the paper's "children of a cache have no
// steady-state cost"). Works on general DAGs; on a chain its answer is the
// cacheable node nearest the output that fits.
//
// Variables: X (minibatches/s), y_k in {0,1}, z_i in [0,1] ("i still
// works"), w_i = X z_i (linearised with the big-M max_throughput), theta_i.
//   z_root = 1 - y_root;  z_i >= z_j - y_i for every consumer j of i
//   c_i w_i <= theta_i,  sum theta_i <= cores,  theta_i <= max_cores_i
//   sum_i D_i w_i <= B,  sum_k size_k y_k <= memory budget
//   w_i <= X,  w_i <= M z_i,  w_i >= X - M (1 - z_i),  X <= M
// Phase 1 maximises X. Phase 2 keeps X at its optimum and minimises the
// number of working nodes (then the memory used), which breaks ties toward
// the cache that removes the most work with the least memory.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "lp/linear_program.h"

namespace plumber::lp {

struct CacheNode {
  std::string name;
  double cpu_seconds_per_minibatch = 0;
  double max_cores = 1;
  double storage_bytes_per_minibatch = 0;
  // Indices of the nodes that read this node's output (for an interleave
  // function's root: the interleave).
  std::vector<int> consumers;
  bool cacheable = false;
  double materialized_bytes = 0;  // when cacheable
  // CPU plus waiting per minibatch, and the most threads the node may have:
  // a node that waits is held by its threads (s X <= max_threads).
  double service_seconds_per_minibatch = 0;
  double max_threads = 1;
};

struct CacheProblem {
  double cores = 0;
  double bandwidth = 0;       // bytes/s; 0 = no storage limit
  double memory_budget = 0;   // bytes available for caches
  // Big-M and the answer when caching removes every limit, minibatches/s.
  double max_throughput = 1e6;
  std::vector<CacheNode> nodes;
  int root = 0;
};

struct CachePlan {
  double throughput = 0;
  std::vector<int> cached;         // node indices, ascending
  std::vector<bool> active;        // per node: still does steady-state work
  std::vector<double> cores;       // theta per node
  double cached_bytes = 0;
};

StatusOr<CachePlan> SolveCacheChoice(const CacheProblem& problem, const LinearProgram::Options& options = {});

// Adds the rows that tie "node i still works" (z) to the caches chosen (y,
// -1 where a node is no candidate): the output works unless it is cached
// itself, and a node works when a consumer works and it is not cached.
// Shared by the cache and provisioning programs.
void AddWorkingRows(LinearProgram& lp, const std::vector<CacheNode>& nodes, int root, const std::vector<int>& y,
                    const std::vector<int>& z);

// X for a fixed set of caches: the closed-form limits (steady_limits.h) of
// the nodes still working, at most max_throughput. What the MILP must
// match; a rewrite's prediction for the pipeline it emits is the analysis
// evaluator's (analysis/evaluator.h), which prices what this program does
// not (thread groups, hand-offs, the epoch restart).
double ThroughputWithCaches(const CacheProblem& problem, const std::vector<int>& cached,
                            std::vector<bool>* active = nullptr);

}  // namespace plumber::lp
