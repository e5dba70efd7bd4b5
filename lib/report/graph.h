// Pictures of an analysed pipeline: Graphviz dot (`plumber analyze --format
// dot`) and one self-contained HTML page (`--format html`) with the graph as
// inline SVG laid out here (layers by depth, no Graphviz needed), the
// as-traced and best predictions, the roofline bar chart of each stage's
// capacity against the predicted, as-traced and observed throughput, the
// thread groups as traced, the LP's core allocation, cache sizes against the
// memory budget, and the findings. The page has no scripts and loads
// nothing from the network.
#pragma once

#include <string>

#include "analysis/analysis.h"

namespace plumber::report {

// How close a node is to holding the pipeline back: the bottleneck's scaled
// rate over the node's, in [0, 1]; 1 for the bottleneck, 0 when unbounded.
double Closeness(const analysis::Analysis& analysis, const analysis::NodeModel& node);

// Nodes filled from green (far from the bottleneck) to red (the
// bottleneck); edges input -> consumer labelled with the input's visit ratio
// (elements per minibatch); an interleave's function drawn dashed.
std::string FormatDot(const analysis::Analysis& analysis);

// With the plan section when the analysis has a plan (it solved its
// programs and something was bounded).
std::string FormatHtml(const analysis::Analysis& analysis);

}  // namespace plumber::report
