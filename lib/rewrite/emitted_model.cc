// The model of an emitted pipeline; see emitted_model.h.
#include "rewrite/emitted_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/evaluator.h"
#include "analysis/thread_groups.h"
#include "lp/steady_limits.h"
#include "pipeline/pool_chunks.h"

namespace plumber::rewrite {
namespace {

// A node's output that another thread consumes: the owner of a thread
// group (a pool's, a prefetch's, a parallel interleave's workers) hands
// each element it makes to the thread of its consumer.
std::set<std::string> HandsOff(const ProgramGraph& g, const analysis::ThreadGroups& tg) {
  std::set<std::string> names;
  for (const auto& group : tg.groups) {
    if (group.hands_off()) names.insert(g.name(group.owner));
  }
  return names;
}

// Whether node i is a cache kept in a file.
bool InFileCache(const ProgramGraph& g, int i) {
  return g.op(i).caches && g.node(i).has_cache() && !g.node(i).cache().filename().empty();
}

// Elements in one epoch of what node m makes; 0 when unknown.
double EpochElements(const analysis::NodeModel& m) {
  return m.cardinality.kind == Cardinality::Kind::kFinite ? m.cardinality.value : 0.0;
}

// How cold the elements node i stacks are (HandoffPrice::Coldness), given
// the time one of its outputs takes: cold through when they cross threads
// on either side. The cached example's batch pooled behind its cache (each
// worker pulling its own 32 elements, the consumer freeing the outputs)
// cost 132 us a minibatch on its workers, inline 50, beside the decode
// 115-140; the image example's batch, inline behind a pooled decode, 1.64
// ms against 1.77 beside the decode.
double StackColdness(const ProgramGraph& g, const analysis::ThreadGroups& tg, const std::set<std::string>& hands_off,
                     int i, double assembly_seconds) {
  const auto& in = g.inputs(i);
  const bool crosses_in = !in.empty() && hands_off.count(g.name(in[0])) != 0;
  const bool crosses_out = tg.group_of[i] > 0;  // not the consumer's thread
  return crosses_in || crosses_out ? 1.0 : HandoffPrice::Coldness(assembly_seconds);
}

}  // namespace

double EmittedModel::Costs::Cpu() const {
  double sum = 0;
  for (const auto& [name, cpu] : cpu_of) sum += cpu;
  return sum;
}

namespace {

// Service per minibatch of the threads node i runs on, from `service`.
double GroupService(const ProgramGraph& g, const analysis::ThreadGroups& tg, int i,
                    const std::unordered_map<std::string, double>& service) {
  const int k = tg.group_of[i];
  if (k < 0) return 0;
  double sum = 0;
  for (const int j : tg.groups[k].members) {
    const auto at = service.find(g.name(j));
    if (at != service.end()) sum += at->second;
  }
  return sum;
}

}  // namespace

EmittedModel::EmittedModel(const analysis::Analysis& analysis, const analysis::Plan& plan,
                           const MeasuredCosts* learned)
    : analysis_(analysis), plan_(plan), learned_(learned) {
  step_ = std::max(0.0, analysis.header.options().step_time_seconds());
  const ProgramGraph& traced = analysis.program_graph();
  traced_handoffs_ = HandsOff(traced, analysis::BuildThreadGroups(traced));
  for (int i = 0; i < traced.size(); ++i) traced_parallelism_[traced.name(i)] = StageParallelism(traced, i);
  price_ = analysis::HandoffPriceOf(analysis.header.machine());
  // Every wait of a node's own work ends in a wake-up the trace's CPU does
  // not hold: one per storage request of a reader, else one per element (a
  // sleep or a call per element). A node traced on more threads than cores
  // already paid, on its own clock, what many threads add to its work.
  for (const auto& m : analysis.nodes) {
    const auto p = traced_parallelism_.find(m.name);
    const bool traced_many = p != traced_parallelism_.end() && p->second > analysis.cores;
    if (m.wait_seconds <= 0 || m.elements <= 0 || price_.WakeupSeconds(traced_many) <= 0) continue;
    const double waits = m.storage_requests > 0 ? static_cast<double>(m.storage_requests) / m.elements : 1.0;
    wakeups_[m.name] = m.visit_ratio * waits * price_.WakeupSeconds(traced_many);
  }
  for (const auto& m : analysis.nodes) {
    if (!m.reliable || !m.steady_state_cost) continue;
    traced_.service[m.name] = std::max(m.cpu_seconds_per_minibatch, m.service_seconds_per_minibatch);
    traced_.cpu_of[m.name] = m.cpu_seconds_per_minibatch;
  }
  // As Predict sees the traced pipeline: its costs and its wake-ups.
  const analysis::ThreadGroups traced_threads = analysis::BuildThreadGroups(traced);
  std::unordered_map<std::string, double> traced_service = traced_.service;
  for (const auto& [name, seconds] : wakeups_) {
    if (const auto at = traced_service.find(name); at != traced_service.end()) at->second += seconds;
  }
  for (int i = 0; i < traced.size(); ++i) {
    const analysis::NodeModel* m = analysis.Find(traced.name(i));
    if (!traced.op(i).stacks_elements || m == nullptr || m->visit_ratio <= 0 || !traced_.service.count(m->name)) {
      continue;
    }
    const double pace = analysis.observed_throughput.value_or(0);
    const double assembly =
        std::max(GroupService(traced, traced_threads, i, traced_service), pace > 0 ? 1 / pace : 0.0) /
        m->visit_ratio;
    traced_coldness_[m->name] = StackColdness(traced, traced_threads, traced_handoffs_, i, assembly);
  }
  for (const auto& s : plan.stages) {
    if (!s.active) continue;
    planned_.service[s.name] = std::max(s.cpu_seconds_per_minibatch, s.service_seconds_per_minibatch);
    planned_.cpu_of[s.name] = s.cpu_seconds_per_minibatch;
  }
}

// The traced node whose elements node i carries: itself, or for a node the
// rewrite inserted (a cache, a prefetch) the node it serves.
const analysis::NodeModel* EmittedModel::Carried(const ProgramGraph& g, int i) const {
  for (int at = i; at >= 0;) {
    if (const analysis::NodeModel* m = analysis_.Find(g.name(at))) return m;
    const auto& in = g.inputs(at);
    at = in.size() == 1 ? in[0] : -1;
  }
  return nullptr;
}

// CPU seconds per minibatch that handing node i's output costs.
double EmittedModel::PriceSeconds(const ProgramGraph& g, int i) const {
  const analysis::NodeModel* m = Carried(g, i);
  if (m == nullptr) return 0;
  return price_.MinibatchSeconds(m->visit_ratio, m->bytes_per_element.value_or(0),
                                 std::max(m->cpu_seconds_per_minibatch, m->service_seconds_per_minibatch));
}

// A batch over a slow op on its thread stacks elements made milliseconds
// apart, which cost more to read and write than elements made just before
// (HandoffPrice::Coldness); over a cache, or with the slow op on threads of
// its own, they are made just before. A node traced cold through paid its
// machine's whole cold price on top of stacking its bytes hot (the copy
// calibration): it sheds that part in proportion to how much warmer it
// runs. The cached example's batch cost 115-140 us a minibatch (1.57 MB)
// beside its decode and 47 over the cache, where a hot copy of its bytes
// takes 39. A node traced warmer has only the calibrated price to go by.
// A node whose cost Learn took from another run is left as measured.
std::set<std::string> EmittedModel::Restack(const ProgramGraph& g, const analysis::ThreadGroups& threads,
                                            const std::set<std::string>& hands_off, const std::set<std::string>& learned,
                                            double pace, Costs& priced) const {
  std::set<std::string> restacked;
  for (int i = 0; i < g.size(); ++i) {
    const std::string& name = g.name(i);
    const auto traced = traced_coldness_.find(name);
    const analysis::NodeModel* m = analysis_.Find(name);
    if (traced == traced_coldness_.end() || m == nullptr || learned.count(name) || !priced.service.count(name)) {
      continue;
    }
    const double bytes = m->bytes_per_element.value_or(0);
    const double assembly =
        std::max(GroupService(g, threads, i, priced.service), pace > 0 ? 1 / pace : 0.0) / m->visit_ratio;
    const double was = traced->second, now = StackColdness(g, threads, hands_off, i, assembly);
    double delta = 0;
    if (was >= 1 && price_.known && price_.copy_ns > 0) {
      const double beyond_hot = std::max(0.0, m->cpu_seconds_per_minibatch / m->visit_ratio - price_.CopySeconds(bytes));
      delta = m->visit_ratio * beyond_hot * (now - 1);
    } else {
      delta = m->visit_ratio * (price_.ColdStackingSeconds(bytes, now) - price_.ColdStackingSeconds(bytes, was));
    }
    if (delta == 0) continue;
    double& cpu = priced.cpu_of[name];
    const double moved = std::max(delta, -cpu);  // never below nothing
    cpu += moved;
    priced.service[name] = std::max(0.0, priced.service[name] + moved);
    restacked.insert(name);
  }
  return restacked;
}

std::set<std::string> EmittedModel::Learn(const ProgramGraph& g, Costs& costs, std::set<LearnedUse>* used) const {
  std::set<std::string> learned;
  if (learned_ == nullptr || learned_->empty()) return learned;
  for (int i = 0; i < g.size(); ++i) {
    const std::string& name = g.name(i);
    const analysis::NodeModel* m = analysis_.Find(name);
    const auto traced = traced_parallelism_.find(name);
    // A node the rewrite added (a cache, a prefetch) was never measured; a
    // node under the cache does no work.
    if (m == nullptr || m->visit_ratio <= 0 || traced == traced_parallelism_.end() || !costs.service.count(name)) {
      continue;
    }
    // At the traced parallelism the trace is the newest measurement, taken
    // with the rest of the pipeline as it is now: it stands.
    const int p = StageParallelism(g, i);
    if (p == traced->second) continue;
    const MeasuredCost* c = learned_->Find(name, p);
    if (c == nullptr) continue;
    // Per element as measured, per minibatch at this trace's visit ratio.
    const double cpu = c->cpu_seconds_per_element * m->visit_ratio;
    const double service = c->service_seconds_per_element * m->visit_ratio;
    double& had = costs.cpu_of[name];
    had = cpu;
    costs.service[name] = std::max(cpu, service);
    learned.insert(name);
    if (used != nullptr) used->insert({name, p});
  }
  return learned;
}

// The plan's ceiling is the LP's (or the MILP's) answer for the traced
// costs; `changed` names the nodes whose cost Learn or Restack moved.
// Without a cache the LP says which constraint binds: when it is the cores
// or a stage whose cost moved, the ceiling moves with that cost (the bound
// is cores / CPU, or a cap / the stage's cost); a storage bound does not
// depend on CPU and stands. With the cache the plan chose, the MILP's
// answer is a closed form over the nodes still working (CacheBound): when
// the plan is that bound it moves as the bound does, else storage or the
// program's ceiling held it and it stands. With no cache chosen the MILP
// solved the LP without one, and that binding holds.
double EmittedModel::Ceiling(bool cached, const Costs& before, const Costs& after,
                             const std::set<std::string>& changed) const {
  const double x = cached ? plan_.throughput : plan_.throughput_without_cache;
  if (changed.empty()) return x;
  auto scaled = [x](double was, double now) { return was > 0 && now > 0 ? x * was / now : x; };
  if (cached && !plan_.cache_node.empty()) {
    const double was = CacheBound(before), now = CacheBound(after);
    const bool bound_by_costs = std::isfinite(was) && x >= was * (1 - 1e-6);
    return bound_by_costs && std::isfinite(now) ? x * now / was : x;
  }
  const std::string& binding = plan_.binding_without_cache;
  if (binding == "cores") return scaled(before.Cpu(), after.Cpu());
  auto stage = [&](const std::string& prefix) -> std::string {
    return binding.rfind(prefix, 0) == 0 ? binding.substr(prefix.size()) : std::string();
  };
  if (const std::string s = stage("stage:"); changed.count(s)) return scaled(before.cpu_of.at(s), after.cpu_of.at(s));
  if (const std::string s = stage("threads:"); changed.count(s)) return scaled(before.service.at(s), after.service.at(s));
  return x;
}

// The closed-form limits (lp/steady_limits.h) of the plan's working
// stages at costs `c`, storage aside: the cores over all their CPU, each
// one's core cap over its own CPU, and a stage that waits its threads over
// its service.
double EmittedModel::CacheBound(const Costs& c) const {
  lp::ThroughputProblem p;
  p.cores = plan_.cores;
  double attributed = 0;
  for (const auto& s : plan_.stages) {
    if (!s.active) continue;
    const auto cpu = c.cpu_of.find(s.name);
    const auto service = c.service.find(s.name);
    lp::StageCost stage{s.name, cpu != c.cpu_of.end() ? cpu->second : 0.0, s.max_cores, 0.0, s.max_threads};
    if (s.service_seconds_per_minibatch > s.cpu_seconds_per_minibatch && service != c.service.end()) {
      stage.service_seconds_per_minibatch = service->second;
    }
    attributed += stage.cpu_seconds_per_minibatch;
    p.stages.push_back(std::move(stage));
  }
  // The CPU of hand-offs and of nodes the plan does not list.
  if (const double cpu = c.Cpu(); cpu > attributed) {
    p.stages.push_back({"", cpu - attributed, std::numeric_limits<double>::infinity(), 0.0, 0.0});
  }
  const auto x = lp::TightestLimit(p);
  return x ? x->throughput : std::numeric_limits<double>::infinity();
}

StatusOr<double> EmittedModel::Predict(const schema::Pipeline& program, bool cached,
                                       std::set<LearnedUse>* used) const {
  const Costs& costs = cached ? planned_ : traced_;
  auto emitted = ProgramGraph::Build(program, "the rewritten pipeline");
  if (!emitted.ok()) return Status::Internal(emitted.status().message());
  const ProgramGraph& g = *emitted;
  Costs priced = costs;
  const std::set<std::string> learned = Learn(g, priced, used);
  double x = Ceiling(cached, costs, priced, learned);
  const analysis::ThreadGroups threads = analysis::BuildThreadGroups(g);
  const std::set<std::string> now = HandsOff(g, threads);
  for (int i = 0; i < g.size(); ++i) {
    const std::string& name = g.name(i);
    const bool added = now.count(name) && !traced_handoffs_.count(name);
    const bool removed = !now.count(name) && traced_handoffs_.count(name);
    // A node under the cache makes nothing in steady state.
    const analysis::NodeModel* m = Carried(g, i);
    if ((!added && !removed) || m == nullptr || !costs.service.count(m->name)) continue;
    // The traced costs hold the price of the hand-offs traced: a stage made
    // inline stops paying it.
    const double price = (added ? 1.0 : -1.0) * PriceSeconds(g, i);
    // The CPU is shared: the maker's threads pay about half (handing
    // over), its consumer the other half (taking, reading memory another
    // core wrote, freeing it). The consumer's thread, though, is held for
    // the whole price: freeing what another thread allocated takes that
    // thread's heap lock while the maker allocates under it, and the
    // consumer waits there off its CPU. Measured on the text example with
    // tokenize pooled on 2 cores: its consumer's thread took 1.02 us more
    // per element, 0.32 of it CPU, where the calibrated price was 1.08 us;
    // charged half, the model predicted the rewrite 1.17x the naive
    // pipeline, which ran 0.94x. A pool the rewrite removes gives its
    // consumer back only the CPU share: the trace's service of a thread is
    // its CPU and its own waits, so the heap-lock wait was never in it.
    // `cpu` of `held` is CPU: the rest of it holds the thread off its CPU.
    auto charge = [&](const std::string& who, double held, double cpu) {
      double& s = priced.service[who];
      s = std::max(0.0, s + held);
      double& c = priced.cpu_of[who];
      c = std::max(0.0, c + cpu);
    };
    // A node whose cost Learn took from a run at this parallelism paid its
    // own half there (pooled), or none (inline): it is in the measurement
    // and is not charged again. Its consumer's share is in the consumer's
    // cost, which is the trace's (or was measured with the consumer at
    // another parallelism, next to whatever this node was then), so it is
    // charged as for any node: the model counts it once, on the consumer.
    const bool measured_here = learned.count(name) != 0;
    if (!measured_here) charge(name, price / 2, price / 2);
    const auto& consumers = g.consumers(i);
    if (!consumers.empty()) charge(g.name(consumers[0]), added ? price : price / 2, price / 2);
  }
  // The wake-ups of the nodes that work (not those under the cache).
  for (const auto& [name, seconds] : wakeups_) {
    const auto at = priced.service.find(name);
    if (at == priced.service.end()) continue;
    at->second += seconds;
    priced.cpu_of[name] += seconds;
  }
  // A cache the rewrite inserts replays every element after the first
  // epoch, on the thread of its consumer: from memory a copy out of the
  // cache into a buffer of its own (HandoffPrice::MemoryReplaySeconds);
  // from a file that and the file's read-back, parse and reopening each
  // epoch (FileReplaySeconds). A cache already traced has its cost
  // measured.
  for (int i = 0; i < g.size(); ++i) {
    if (!g.op(i).caches || analysis_.Find(g.name(i)) != nullptr || !cached) continue;
    const analysis::NodeModel* m = Carried(g, i);
    if (m == nullptr || m->visit_ratio <= 0) continue;
    const double bytes = m->bytes_per_element.value_or(0);
    const double replay = m->visit_ratio * (InFileCache(g, i) ? price_.FileReplaySeconds(bytes, EpochElements(*m))
                                                              : price_.MemoryReplaySeconds(bytes));
    priced.service[g.name(i)] += replay;
    priced.cpu_of[g.name(i)] += replay;
  }
  // A pool the rewrite adds over an input its workers pull in turns: when
  // that input is what holds the pool, every chunk waits for the lock to
  // pass to a parked worker (HandoffPrice::LockPassSeconds); a file cache's
  // replay pulled so runs at the pace calibrated for it, passes included.
  std::vector<double> lock_passes(threads.groups.size(), 0.0);
  for (size_t k = 0; k < threads.groups.size(); ++k) {
    const analysis::ThreadGroup& group = threads.groups[k];
    if (!group.serialized || group.owner < 0 || traced_handoffs_.count(g.name(group.owner))) continue;
    const analysis::NodeModel* m = Carried(g, group.owner);
    if (m == nullptr || m->visit_ratio <= 0) continue;
    double pooled_replay = 0;
    for (const int i : group.members) {
      const analysis::NodeModel* c = Carried(g, i);
      if (!InFileCache(g, i) || analysis_.Find(g.name(i)) != nullptr || c == nullptr || !cached) continue;
      const double bytes = c->bytes_per_element.value_or(0);
      pooled_replay += c->visit_ratio * std::max(0.0, price_.PooledFileReplaySeconds(bytes) -
                                                          price_.FileReplaySeconds(bytes, EpochElements(*c)));
    }
    if (pooled_replay > 0) {
      lock_passes[k] = pooled_replay;
      continue;
    }
    const double task_ns =
        1e9 * std::max(m->cpu_seconds_per_minibatch, m->service_seconds_per_minibatch) / m->visit_ratio;
    const auto chunk = static_cast<double>(PoolChunkTasks(static_cast<int64_t>(std::min(task_ns, 1e15)),
                                                          static_cast<int64_t>(m->bytes_per_element.value_or(0))));
    lock_passes[k] = m->visit_ratio / chunk * price_.LockPassSeconds();
  }
  // The one evaluator (analysis/evaluator.h) with these costs, under the
  // plan's ceiling.
  analysis::RestartModels restart;
  restart.carried = [&](int i) { return Carried(g, i); };
  auto throughput = [&](const Costs& c) {
    analysis::ProgramCosts program;
    program.group_extra_seconds = lock_passes;
    program.nodes.resize(static_cast<size_t>(g.size()));
    for (int i = 0; i < g.size(); ++i) {
      const auto service = c.service.find(g.name(i));
      if (service == c.service.end()) continue;
      const auto cpu = c.cpu_of.find(g.name(i));
      analysis::WorkCost& w = program.nodes[i];
      w.works = true;
      w.cpu_seconds = cpu != c.cpu_of.end() ? cpu->second : 0.0;
      w.service_seconds = service->second;
    }
    // Each epoch the repeat's input fills and drains again, from the nodes
    // that still work every epoch: under a cache only the replay does.
    restart.works = [&](int i) { return analysis_.Find(g.name(i)) != nullptr && c.service.count(g.name(i)); };
    analysis::EvaluationMachine machine;
    machine.cores = analysis_.cores;
    machine.step_seconds = step_;
    machine.ceiling = x;
    return analysis::Evaluate(g, threads, program, machine, &restart).throughput.value_or(x);
  };
  // Last, as it depends on how long an output takes: all the time the
  // batch's threads spend on it, and the pipeline's pace.
  if (traced_coldness_.empty()) return throughput(priced);
  std::set<std::string> changed = Restack(g, threads, now, learned, throughput(priced), priced);
  if (changed.empty()) return throughput(priced);
  changed.insert(learned.begin(), learned.end());
  x = Ceiling(cached, costs, priced, changed);
  return throughput(priced);
}

StatusOr<double> EmittedModel::PredictEmitted(const schema::Pipeline& program, std::set<LearnedUse>* used) const {
  bool cached = plan_.cache_node.empty();
  auto g = ProgramGraph::Build(program, "the rewritten pipeline");
  if (!g.ok()) return Status::Internal(g.status().message());
  for (int i = 0; i < g->size() && !cached; ++i) {
    const auto& in = g->inputs(i);
    cached = g->op(i).caches &&
             (g->name(i) == plan_.cache_node || (in.size() == 1 && g->name(in[0]) == plan_.cache_node));
  }
  return Predict(program, cached, used);
}

}  // namespace plumber::rewrite
