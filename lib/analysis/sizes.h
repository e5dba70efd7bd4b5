// Dataset sizes: the cardinality of every node (each op's rule from the op
// table, fed with what the trace measured), the size of the data its
// readers read (estimated from the files they completed, with a 95%
// interval), bytes materialised, randomness below each node, and so which
// nodes are cacheable (finite and deterministic).
#pragma once

#include <vector>

#include "analysis/analysis.h"
#include "analysis/window.h"
#include "pipeline/program_graph.h"

namespace plumber::analysis {

// Fills each NodeModel's cardinality, materialized_*, random_below and
// cacheable (the nodes' rates and bytes_per_element must be set), and
// `analysis->sources` in program order.
void ModelSizes(const ProgramGraph& graph, const std::vector<NodeWindow>& stats, Analysis* analysis);

}  // namespace plumber::analysis
