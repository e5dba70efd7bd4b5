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
#include "analysis/plan.h"
#include "analysis/thread_groups.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/program_graph.h"
#include "rewrite/measured_costs.h"

namespace plumber::rewrite {

// What handing one element between threads costs, in CPU seconds, from the
// machine's calibration (runtime/calibrate.h, the trace's machine.handoff):
// elements whose payload lives inside the tensor (up to 15 bytes,
// std::string's inline buffer) at the scalars' chunked price, larger ones
// at the price of a payload of their own (128 bytes, and per byte beyond);
// plus one hand-off with its wake-up per chunk, a pool's chunk holding
// about a millisecond of work. Zero for traces without the calibration.
struct HandoffPrice {
  bool known = false;
  double per_handoff_ns = 0;
  // A chunk's hand-off when its threads park and are woken for it, as they
  // do in runs (calibrated; 0 in older traces, which price every chunk at
  // per_handoff_ns, measured on elements that never let them park).
  double parked_chunk_ns = 0;
  double chunked_ns = 0;
  double payload_ns = 0;
  double per_byte_ns = 0;
  // Copying an element on one thread (calibrated; 0 in older traces).
  double copy_ns = 0;
  double copy_per_byte_ns = 0;
  // A waiting element in a pool of many threads beyond its op's CPU
  // inline, and of that what its own thread's clock sees (calibrated; 0
  // in older traces).
  double wait_ns = 0;
  double wait_thread_ns = 0;

  // The largest payload the calibration measures (runtime/calibrate.cc).
  // Beyond it the per-byte price is charged only for the share of the op's
  // work that is copying (BeyondFittedSeconds): an element larger than a
  // core's cache, made on one core and freed on another, comes back to its
  // maker cold, and writing it again costs the slope per byte when the op
  // does little but write it; an op that computes each byte hides those
  // writes behind its work (the image example's decode, about 500 us per
  // 602 kB element, cost no more pooled than inline; the cached example's
  // 1.57 MB minibatches, a copy each, cost 0.05-0.08 ns per byte more).
  static constexpr double kFittedBytes = 65536;

  // One element of `bytes` crossing threads, without the chunk's hand-off,
  // its bytes counted up to kFittedBytes.
  double ElementSeconds(double bytes) const;
  // The bytes of an element beyond kFittedBytes, made by an op that takes
  // `work_ns` each: the slope times the share of the work a copy of that
  // many bytes would take (CopySeconds over the work, at most 1). None in
  // traces without the copy calibration.
  double BeyondFittedSeconds(double bytes, double work_ns) const;
  // One element of `bytes` copied out of a cache on its consumer's thread:
  // the calibrated copy; traces from before it was measured price it as a
  // hand-off (ElementSeconds), which overstates large elements.
  double CopySeconds(double bytes) const;
  // A thread that waits (a sleep, a remote call, a storage request) parks
  // and is woken when the wait ends: work in the kernel, and on a virtual
  // machine in the hypervisor, that the thread's own CPU clock does not
  // see but the cores pay once the pipeline is CPU-bound; among many
  // threads its own work costs more too. The wait calibration measures
  // all of it for a pooled element at many threads; the hand-off is
  // charged on its own (SecondsPerElement), so a wake-up is the rest, less
  // what the thread's own clock saw when `traced_many` (a trace taken at
  // many threads holds that in its node's CPU). Older traces price it as
  // one more hand-off (cpu_ns), which on the remote example (2 ms sleep and
  // 50 us of CPU per element, 117 threads on 2 cores) charged 5 to 24 us
  // where the cores paid 49 per element more than inline (31 of them on
  // the threads' own clocks).
  double WakeupSeconds(bool traced_many) const;
  // One chunk handed over: its threads park between chunks (a chunk is
  // sized to a millisecond of work), so the parked price when calibrated.
  double ChunkSeconds() const;
  // One element of `bytes` handed over by a pool whose elements take
  // `work_ns` each (wall time: CPU and waiting), its chunk's price shared
  // by the elements the pool puts in a chunk (pipeline/pool_chunks.h).
  double SecondsPerElement(double bytes, double work_ns) const;

  // What each byte of an output stacked from many elements (a batch's)
  // costs more when the elements were made milliseconds apart (calibrated;
  // 0 in older traces), and how long one output must take for that: the
  // calibration's 32 elements a quarter of a millisecond apart, 8 ms, are
  // cold through (runtime/calibrate.cc); 100 us apart, 3.2 ms an output,
  // cost a sixth of it more on this machine.
  double cold_stacking_per_byte_ns = 0;
  static constexpr double kColdAfterSeconds = 0.008;
  // How cold an output that takes `assembly_seconds` to make is, 0 to 1:
  // in proportion up to kColdAfterSeconds.
  static double Coldness(double assembly_seconds);
  // The calibrated extra for one output of `bytes` stacked from elements
  // `coldness` (0 to 1) cold.
  double ColdStackingSeconds(double bytes, double coldness) const;
};

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
