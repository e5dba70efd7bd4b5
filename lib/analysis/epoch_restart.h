// The epoch restart: a repeat reopens its input at every epoch,
// so the threads under it start empty and end together, and the steady
// rates, which assume work overlaps, miss two losses per epoch:
// - the fill: the cores idle through the waits on the chain to the
//   epoch's first element (each reader's first storage request, each
//   waiting stage's wait per element); the CPU on that chain is work the
//   cores bound counts anyway;
// - the drain: the threads of a stage that waits issue their last waits
//   about together, and the CPU for what those bring in (the last wave,
//   threads x elements per wait) runs after them, overlapping no wait:
//   the stage's own and the rest of the pipeline's (the consumer taking
//   the wave's elements) on the same cores, the stage's own no faster
//   than on the cores its threads can use, the rest no faster than on one
//   thread.
// With E minibatches per epoch an epoch then takes the longest of
// E / X_threads + drain, fill + E / X_cpu and E / X_other.
//
// Measured on the latency example (64 files of 16 records: two 256 KiB
// requests per file, 64 readers; 2026-12-03, 3 and 2 runs): 15.5 ms per
// epoch at 5 ms per request and 45.8 ms at 20 ms, 3.7 and 3.5 ms more
// than the steady thread bound gives. The last wave's 512 records of CPU
// take 3.2-3.4 ms on 2 cores, the readers' alone 2.5-2.6: the model had
// left the consumer's share beside them, and predicted 3-4% and 1% above
// the runs where it had 8% and 2%. On datasets whose epochs take seconds
// both terms are a fraction of a percent.
//
// Not modelled: a shuffle or a batch under the repeat, which need many
// input elements before their first, and a prefetch above the repeat,
// which could hide the fill when the bottleneck is above it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "pipeline/program_graph.h"

namespace plumber::analysis {

// analysis.h holds an EpochRestart; these are only named here.
struct NodeModel;
struct Analysis;

// The steady bounds the restart adds to (minibatches/s; nullopt: none).
struct SteadyBounds {
  std::optional<double> threads;  // the tightest thread group
  std::optional<double> cpu;      // the cores
  std::optional<double> other;    // storage, caps, a plan's ceiling

  // The least of them: the steady rate, no restart.
  std::optional<double> Tightest() const;
};

struct EpochRestart {
  std::string repeat;  // the repeat node
  double minibatches_per_epoch = 0;
  double fill_wait_seconds = 0;
  double drain_seconds = 0;

  // Minibatches/s over whole epochs; nullopt when no bound is given.
  std::optional<double> Apply(const SteadyBounds& bounds) const;
};

// What the restart needs of node i of the graph: its traced model (for a
// node the rewrite inserted, the model of the node whose elements it
// carries; null when none); whether its own work runs every epoch (false
// under a cache, and for an inserted node, whose own work is a copy or a
// hand-off); the threads its work runs on; and the pipeline's CPU per
// minibatch and cores.
struct RestartCosts {
  std::function<const NodeModel*(int)> carried;
  std::function<bool(int)> works;
  std::function<int(int)> threads;
  std::function<int(int)> group;  // the thread group its work runs in
  double cpu_seconds_per_minibatch = 0;
  double cores = 1;
};

// The outermost repeat outside any interleave function whose epoch length
// the analysis knows; nullopt when there is none or its epoch is empty.
std::optional<EpochRestart> FindEpochRestart(const ProgramGraph& g, const RestartCosts& costs);

// The best parallelism's bound (Analysis::predicted_throughput) as the
// kind of bound its limit says.
SteadyBounds BestParallelismBounds(const Analysis& analysis);

}  // namespace plumber::analysis
