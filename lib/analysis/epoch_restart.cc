// The fill and drain of a repeat's input, and the epochs they cost; see
// epoch_restart.h.
#include "analysis/epoch_restart.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "analysis/analysis.h"

namespace plumber::analysis {
namespace {

bool Counted(const NodeModel& m) { return m.visit_ratio > 0 && m.reliable && m.steady_state_cost; }

// The wait before a node's own first element: one storage request of a
// reader, else its wait per element.
double FirstWaitSeconds(const NodeModel& m) {
  if (!Counted(m)) return 0;
  if (m.storage_requests > 0 && m.request_latency_seconds) return *m.request_latency_seconds;
  return m.wait_seconds_per_minibatch / m.visit_ratio;
}

// Elements a node's work makes per wait: a reader's per storage request,
// else one.
double ElementsPerWait(const NodeModel& m) {
  return m.storage_requests > 0 && m.elements > 0 ? static_cast<double>(m.elements) / m.storage_requests : 1.0;
}

}  // namespace

std::optional<double> SteadyBounds::Tightest() const {
  std::optional<double> x;
  for (const auto& b : {threads, cpu, other}) {
    if (b && (!x || *b < *x)) x = b;
  }
  return x;
}

std::optional<double> EpochRestart::Apply(const SteadyBounds& b) const {
  const double e = minibatches_per_epoch;
  double epoch = 0;
  if (b.threads && *b.threads > 0) epoch = std::max(epoch, e / *b.threads + drain_seconds);
  if (b.cpu && *b.cpu > 0) epoch = std::max(epoch, fill_wait_seconds + e / *b.cpu);
  if (b.other && *b.other > 0) epoch = std::max(epoch, e / *b.other);
  if (epoch <= 0) return std::nullopt;
  return e / epoch;
}

SteadyBounds BestParallelismBounds(const Analysis& analysis) {
  SteadyBounds b;
  if (analysis.predicted_limit == "wait") {
    b.threads = analysis.predicted_throughput;
  } else if (analysis.predicted_limit == "cpu") {
    b.cpu = analysis.predicted_throughput;
  } else {
    b.other = analysis.predicted_throughput;
  }
  return b;
}

std::optional<EpochRestart> FindEpochRestart(const ProgramGraph& g, const RestartCosts& costs) {
  int repeat = -1;
  for (int i = 0; i < g.size(); ++i) {
    if (g.op(i).rereads_input == nullptr || !g.op(i).rereads_input(g.node(i))) continue;
    if (g.enclosing_interleave(i) >= 0 || g.inputs(i).size() != 1 || g.depth(i) < 0) continue;
    if (repeat < 0 || g.depth(i) < g.depth(repeat)) repeat = i;
  }
  if (repeat < 0) return std::nullopt;
  const int input = g.inputs(repeat)[0];
  const NodeModel* in = costs.carried(input);
  if (in == nullptr || !in->cardinality.finite() || in->cardinality.value <= 0 || in->visit_ratio <= 0) {
    return std::nullopt;
  }
  EpochRestart r;
  r.repeat = g.name(repeat);
  r.minibatches_per_epoch = in->cardinality.value / in->visit_ratio;
  // Children before their consumers: each node's first element waits for
  // the latest of its inputs' and then its own wait; an interleave's
  // function starts once its input gave an element.
  std::vector<double> fill(static_cast<size_t>(g.size()), 0.0);
  std::vector<bool> under(static_cast<size_t>(g.size()), false);
  under[input] = true;
  const auto& order = g.topological_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!under[*it]) continue;
    for (int c : g.children(*it)) under[c] = true;
  }
  // CPU per minibatch of each thread group's working nodes.
  std::unordered_map<int, double> group_cpu;
  for (int j = 0; j < g.size(); ++j) {
    const NodeModel* n = costs.works(j) ? costs.carried(j) : nullptr;
    if (n != nullptr && Counted(*n)) group_cpu[costs.group(j)] += n->cpu_seconds_per_minibatch;
  }
  for (int i : order) {
    if (!under[i]) continue;
    double before = 0;
    for (int c : g.inputs(i)) before = std::max(before, fill[c]);
    if (g.function(i) >= 0) before += fill[g.function(i)];
    const NodeModel* m = costs.works(i) ? costs.carried(i) : nullptr;
    fill[i] = before + (m != nullptr ? FirstWaitSeconds(*m) : 0);
    // The last wave of a stage that waits: every thread's last wait, then
    // the CPU for what they bring, its own threads' and the rest of the
    // pipeline's: all of it on the cores, its own no faster than on the
    // cores its threads can use, the rest no faster than on one thread.
    if (m == nullptr || !Counted(*m) || m->wait_seconds_per_minibatch <= 0) continue;
    const int threads = std::max(1, costs.threads(i));
    const double wave = std::min(threads * ElementsPerWait(*m), r.minibatches_per_epoch * m->visit_ratio);
    const double own_cpu = group_cpu[costs.group(i)];
    const double rest_cpu = std::max(0.0, costs.cpu_seconds_per_minibatch - own_cpu);
    const double minibatches = wave / m->visit_ratio;
    const double drain = std::max({(own_cpu + rest_cpu) / costs.cores,
                                   own_cpu / std::min<double>(threads, costs.cores), rest_cpu});
    r.drain_seconds = std::max(r.drain_seconds, minibatches * drain);
  }
  r.fill_wait_seconds = fill[input];
  return r;
}

}  // namespace plumber::analysis
