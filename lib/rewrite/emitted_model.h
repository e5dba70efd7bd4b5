// The model of a pipeline the rewrite emits: the costs of the traced
// nodes moved by what the new configuration changes (the price of every
// hand-off between threads it adds or removes, the replay of a cache it
// adds, costs measured at other parallelism in earlier runs, how cold a
// batch's elements get), then evaluated by the one evaluator
// (analysis/evaluator.h) over the program's own thread groups, cores and
// epoch restart, under the plan's ceiling. The rewrite asks it of every
// configuration it considers, and its answer for the emitted pipeline is
// the prediction the rewrite reports, so anyone can re-evaluate a
// rewrite's output here.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "analysis/analysis.h"
#include "analysis/handoff_price.h"
#include "analysis/plan.h"
#include "analysis/thread_groups.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/program_graph.h"
#include "rewrite/measured_costs.h"

namespace plumber::rewrite {

using analysis::HandoffPrice;


// A stage and the parallelism at which the model took its learned cost.
using LearnedUse = std::pair<std::string, int>;

class EmittedModel {
 public:
  // `learned` (may be null; must outlive the model): costs measured in
  // earlier runs of this pipeline, per stage and parallelism.
  EmittedModel(const analysis::Analysis& analysis, const analysis::Plan& plan,
               const MeasuredCosts* learned = nullptr);

  // Minibatches/s the model predicts for `program`, a rewrite of the traced
  // one with the same node names. `cached`: the plan's cache is in it (or
  // the plan has none), so the nodes under it idle and the plan with the
  // cache bounds it; else every node works at its traced cost and the plan
  // without a cache bounds it. A node whose parallelism differs from the
  // traced one and that was measured at its new parallelism costs what
  // was measured there; `used`, when given, receives those nodes.
  StatusOr<double> Predict(const schema::Pipeline& program, bool cached,
                           std::set<LearnedUse>* used = nullptr) const;

  // Predict, with `cached` read off the program: what a rewrite reports.
  StatusOr<double> PredictEmitted(const schema::Pipeline& program, std::set<LearnedUse>* used = nullptr) const;

  const HandoffPrice& price() const { return price_; }
  // The same model with the hand-off prices at the top of their
  // calibration's spread (HandoffPrice::AtWorst).
  EmittedModel AtWorstPrices() const {
    EmittedModel worst = *this;
    worst.price_ = price_.AtWorst();
    return worst;
  }

 private:
  struct Costs {
    std::unordered_map<std::string, double> service;  // max(CPU, CPU + waiting) per minibatch
    std::unordered_map<std::string, double> cpu_of;   // CPU per minibatch
    double Cpu() const;                                // their sum
  };
  // Replaces the costs of the nodes of `g` at a parallelism measured in an
  // earlier run (not the traced one) with that measurement; returns them.
  std::set<std::string> Learn(const ProgramGraph& g, Costs& costs, std::set<LearnedUse>* used) const;
  // The plan's ceiling for costs changed by Learn or Restack (`changed`).
  double Ceiling(bool cached, const Costs& before, const Costs& after, const std::set<std::string>& changed) const;
  // The cache MILP's closed-form bound for the plan's cache, storage aside.
  double CacheBound(const Costs& c) const;
  const analysis::NodeModel* Carried(const ProgramGraph& g, int i) const;
  double PriceSeconds(const ProgramGraph& g, int i) const;

  const analysis::Analysis& analysis_;
  const analysis::Plan& plan_;
  const MeasuredCosts* learned_;
  // Parallelism of each traced node's threads, as the traced program
  // configures it (StageParallelism).
  std::unordered_map<std::string, int> traced_parallelism_;
  HandoffPrice price_;
  std::set<std::string> traced_handoffs_;
  Costs traced_, planned_;
  // Per traced node that stacks elements (OpDef::stacks_elements): how
  // cold its elements were in the trace (StackColdness), from its thread's
  // time over an output, or the pace of the run when that was slower.
  std::unordered_map<std::string, double> traced_coldness_;
  // Moves the cost of each node that stacks elements by how much colder or
  // warmer its elements are in `g` (whose nodes `hands_off` hand their
  // output across threads), at `pace` minibatches/s, than in the trace;
  // returns the nodes it moved.
  std::set<std::string> Restack(const ProgramGraph& g, const analysis::ThreadGroups& threads,
                                const std::set<std::string>& hands_off, const std::set<std::string>& learned,
                                double pace, Costs& priced) const;
  // Per traced node whose own work waits: its waits' wake-ups
  // (HandoffPrice::WakeupSeconds), CPU seconds per minibatch.
  std::unordered_map<std::string, double> wakeups_;
  double step_ = 0;
};

}  // namespace plumber::rewrite
