// The model of model.h: window deltas -> per-node rates -> bounds ->
// ranking -> cache candidate.
#include "analysis/model.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/dataloader_model.h"
#include "analysis/evaluator.h"
#include "analysis/sizes.h"
#include "analysis/thread_groups.h"
#include "analysis/threads_to_pass.h"
#include "lp/steady_limits.h"
#include "base/number_format.h"
#include "base/units.h"

namespace plumber::analysis {
namespace {

class Modeler {
 public:
  Modeler(LoadedTrace trace, const AnalysisOptions& options)
      : t_(std::move(trace)), opt_(options), g_(*t_.graph) {}
  StatusOr<Analysis> Run();

 private:
  Status Window();
  void Machine();
  void Cores();
  void Imported();
  void Rates();
  void Groups();
  void AsTraced();
  void DataLoader();
  void BandwidthFromCurve();
  void Bounds();
  void Ranking();
  void Cache();
  std::vector<bool> UnderCache() const;

  LoadedTrace t_;
  const AnalysisOptions& opt_;
  const ProgramGraph& g_;
  Analysis r_;
  ThreadGroups tg_;
  std::vector<NodeWindow> stats_;
  bool window_known_ = true;
};

Status Modeler::Window() {
  const SelectedWindow& w = t_.window;
  stats_ = ResolveNodeWindows(w, g_);
  const int64_t start_ns = w.start ? w.start->wall_ns() : 0;
  r_.window_start_seconds = static_cast<double>(start_ns) * 1e-9;
  r_.window_end_seconds = static_cast<double>(w.end.wall_ns()) * 1e-9;
  r_.window_seconds = static_cast<double>(w.end.wall_ns() - start_ns) * 1e-9;
  r_.snapshots = w.snapshots_in_window;
  const std::string& source = t_.source;
  if (r_.window_seconds <= 0) return Status::InvalidArgument(source + ": zero elapsed time in the window; nothing to measure");
  const std::string& out = g_.name(g_.output());
  if (std::find(w.unreliable_nodes.begin(), w.unreliable_nodes.end(), out) != w.unreliable_nodes.end()) {
    return Status::InvalidArgument(source + ": the output node '" + out +
                                   "' has counters that go backwards in the window; minibatches cannot be counted");
  }
  const int64_t c0 = stats_[g_.output()].Delta(&schema::NodeStats::elements_produced);
  if (c0 <= 0) {
    return Status::InvalidArgument(source + ": the output node '" + out + "' produced no minibatches between " +
                                   units::FormatSeconds(r_.window_start_seconds) + " and " +
                                   units::FormatSeconds(r_.window_end_seconds) +
                                   "; rates are per minibatch, so nothing can be computed");
  }
  r_.minibatches = c0;
  // An imported dump whose time is unknown has placeholder wall times:
  // deltas are right, rates over time are not known.
  window_known_ = !t_.header.has_imported() || t_.header.imported().window_known();
  if (window_known_) r_.observed_throughput = static_cast<double>(c0) / r_.window_seconds;
  // What the consumer (the training step) experienced: the paper's measure
  // of an input-bound job. A wait that began before the window counts whole
  // in it, so its share is capped at the window (one consumer waits).
  const auto& re = w.end.root();
  const int64_t calls = re.next_calls() - (w.start ? w.start->root().next_calls() : 0);
  const int64_t wait = re.wait_ns() - (w.start ? w.start->root().wait_ns() : 0);
  if (calls > 0 && wait >= 0) {
    r_.consumer_wait_seconds = static_cast<double>(wait) * 1e-9 / static_cast<double>(calls);
    if (window_known_) r_.consumer_wait_fraction = std::min(1.0, static_cast<double>(wait) * 1e-9 / r_.window_seconds);
  }
  return Status::OK();
}

void Modeler::Machine() {
  const auto& m = t_.header.machine();
  r_.wait_traced = t_.header.wait_traced();
  if (t_.header.has_imported()) {
    Imported();
  } else if (!r_.wait_traced) {
    r_.warnings.push_back(
        "the trace does not record waiting (it predates plumber's wait counters): time a node spends on storage "
        "requests or remote calls reads as free, so the model counts CPU only; rerun with this plumber to see it");
  }
  Cores();
  r_.total_memory_bytes = static_cast<uint64_t>(std::max<int64_t>(0, m.memory_bytes()));
  if (opt_.memory_bytes) {
    r_.memory_bytes = *opt_.memory_bytes;
  } else if (m.available_memory_bytes() > 0) {
    // The budget is what is free, not what is installed: a cache sized to
    // the installed memory would push the machine into swap.
    r_.memory_bytes = static_cast<uint64_t>(m.available_memory_bytes());
  } else {
    r_.memory_bytes = r_.total_memory_bytes;
  }
  if (opt_.disk_bandwidth_bytes_per_s) {
    r_.disk_bandwidth = *opt_.disk_bandwidth_bytes_per_s;
    r_.disk_bandwidth_from = "--disk-bandwidth";
  } else if (m.read_bandwidth_bytes_per_s() > 0) {
    r_.disk_bandwidth = m.read_bandwidth_bytes_per_s();
    r_.disk_bandwidth_from = "the trace's read throttle";
  }
}

// Share of the machine's cores under which the cores the run had count as
// clearly fewer: planning with them then is worth saying so. Above it, the
// difference is the shell, a monitor or the kernel's 10 ms ticks blurring a
// short window, and costing a 64-core machine a core for it would be noise.
constexpr double kClearlyFewerCores = 0.9;

// The cores to plan for: --cores when given; else the cores the run really
// had (its CPU plus what nobody used) when they are clearly fewer than the
// machine's, because a plan for the whole machine promises a busy machine
// what it cannot deliver; else the machine's.
void Modeler::Cores() {
  const int machine = t_.header.machine().cores();
  r_.machine_cores = std::max(0, machine);
  if (const auto cpu = ResolveCpuWindow(t_.window); cpu && window_known_ && machine > 0) {
    const double had = (cpu->process_cpu_seconds + cpu->machine_idle_seconds) / r_.window_seconds;
    r_.effective_cores = std::min(had, static_cast<double>(machine));
  } else if (machine > 0 && t_.window.end.has_machine_idle_ns() &&
             (!t_.window.start || t_.window.start->has_machine_idle_ns())) {
    // Recorded at both ends, yet unusable: the counters went backwards.
    r_.warnings.push_back("the machine's CPU time in the trace does not move forward over the window, so the cores "
                          "the run had are unknown; planning with the machine's");
  }
  const std::string had_text =
      r_.effective_cores ? "the run had " + FormatSignificant(*r_.effective_cores, 3) + " of the machine's " +
                               FormatCount(machine, "core", "cores")
                         : "";
  if (opt_.cores) {
    r_.cores = *opt_.cores;
    r_.cores_from = CoresFrom::kGiven;
    r_.cores_source = "given by --cores";
    if (r_.effective_cores) r_.cores_source += "; " + had_text;
    return;
  }
  if (machine <= 0) {
    r_.warnings.push_back("the trace does not record the machine's cores; assuming 1 (give --cores)");
    r_.cores = 1;
    r_.cores_from = CoresFrom::kAssumed;
    r_.cores_source = "assumed: the trace does not record the machine's cores; give --cores";
    return;
  }
  // The plan's cores are whole (thread budgets, `rewrite --cores`,
  // provisioning): the nearest whole number, which errs by at most half a
  // core either way (rounding down would plan 2.9 cores as 2, near a third
  // short), and at least 1.
  if (r_.effective_cores && *r_.effective_cores < kClearlyFewerCores * machine) {
    const int whole = std::max(1, static_cast<int>(std::lround(*r_.effective_cores)));
    if (whole < machine) {
      r_.cores = whole;
      r_.cores_from = CoresFrom::kRun;
      r_.cores_source = had_text + "; other processes used the rest";
      return;
    }
  }
  r_.cores = machine;
  r_.cores_from = CoresFrom::kMachine;
  r_.cores_source = "the machine's " + FormatCount(machine, "core", "cores");
  if (r_.effective_cores) r_.cores_source += "; the run had " + FormatSignificant(*r_.effective_cores, 3) + " of them";
}

// What an imported trace's source could not tell, stated once here for
// every report.
void Modeler::Imported() {
  const schema::ImportInfo& info = t_.header.imported();
  r_.imported_from = info.format();
  for (int i = 0; i < info.files_size(); ++i) r_.imported_from += (i == 0 ? ": " : ", ") + info.files(i);
  auto& limits = r_.source_limits;
  if (!info.thread_cpu()) {
    r_.cpu_is_wall_time = true;
    limits.push_back(
        "the source records the wall time of each node's own work, not thread CPU: a node that waits (storage, "
        "remote calls, locks) counts as busy, so every CPU figure here is an upper bound, the CPU bound a lower "
        "one, and threads (num_parallel_calls) are sized on that service time");
  }
  if (info.thread_cpu() && !t_.header.wait_traced()) {
    limits.push_back("the source records thread CPU but not the time a node waits (storage, remote calls): "
                     "waiting reads as free, so the model counts CPU only and may put more on cores than threads "
                     "can deliver");
  }
  if (!info.window_known()) {
    limits.push_back("the time the counters cover is unknown: no observed throughput, bandwidth or cores used "
                     "(give two dumps of the same run, or --window SECONDS)");
  }
  if (!r_.consumer_wait_seconds) {
    limits.push_back("how long the consumer waited for each minibatch is not recorded: nothing here says whether "
                     "the input pipeline holds training back");
  }
  if (!info.file_sizes_known()) {
    limits.push_back("no file sizes: the datasets' cardinalities (so their sizes, and whether a cache fits) "
                     "are known only where the source counted them");
  }
  if (t_.header.machine().cores() <= 0 && !opt_.cores) limits.push_back("the machine's cores are not recorded: give --cores");
  for (const auto& note : info.notes()) limits.push_back(note);
  int opaque = 0;
  for (int i = 0; i < g_.size(); ++i) opaque += g_.op(i).imported_only ? 1 : 0;
  if (opaque > 0) {
    limits.push_back(FormatCount(opaque, "node", "nodes") + " of types plumber has no op for " +
                     (opaque == 1 ? "is" : "are") + " kept opaque: measured, analysed and ranked, never rewritten");
  }
  limits.push_back(info.has_dataloader()
                       ? "there is no pipeline file to rewrite: rewrite gives its advice as the DataLoader(...) call "
                         "to write"
                       : "there is no pipeline file to rewrite: rewrite gives its advice as the tf.data calls to edit");
}

// Without a throttle or --disk-bandwidth, a calibrated bandwidth-vs-
// parallelism curve says what storage gives at the parallelism the readers
// ran with.
void Modeler::BandwidthFromCurve() {
  const auto& curve = t_.header.machine().bandwidth_curve();
  if (r_.disk_bandwidth || curve.pieces_size() == 0) return;
  double p = 0;
  for (int i = 0; i < g_.size(); ++i) {
    if (g_.op(i).reads_storage) p = std::max(p, r_.nodes[i].cores_now);
  }
  if (p <= 0) return;
  double b = curve.pieces(0).slope() * p + curve.pieces(0).intercept();
  for (const auto& piece : curve.pieces()) b = std::min(b, piece.slope() * p + piece.intercept());
  if (!(b > 0) || !std::isfinite(b)) return;
  r_.disk_bandwidth = b;
  r_.disk_bandwidth_from = "the trace's bandwidth curve at read parallelism " + FormatNumber(p);
  r_.disk_bandwidth_from_curve = true;
}

// Nodes below a cache (through inputs and functions): they work only while
// the cache fills.
std::vector<bool> Modeler::UnderCache() const {
  std::vector<bool> under(g_.size(), false);
  for (int i = 0; i < g_.size(); ++i) {
    if (!g_.op(i).caches) continue;
    std::vector<int> stack = g_.children(i);
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      if (under[j]) continue;
      under[j] = true;
      for (int k : g_.children(j)) stack.push_back(k);
    }
  }
  return under;
}

void Modeler::Rates() {
  const int n = g_.size();
  const double c0 = static_cast<double>(r_.minibatches);
  const std::vector<bool> under_cache = UnderCache();
  std::vector<double> handoff_cpu = UnchargedHandoffCpu(t_.window, stats_, /*imported=*/t_.header.has_imported());
  // A DataLoader's CPU beyond the stages is its batches' crossing (dataloader_model.h).
  if (const int h = DataLoaderHandOff(g_); r_.dataloader && h >= 0) handoff_cpu[h] = r_.dataloader->crossing_seconds.value_or(0) * c0;
  const auto& unreliable = t_.window.unreliable_nodes;
  auto own_parallelism = [&](int i) {
    const NodeWindow& s = stats_[i];
    return s.end && s.end->parallelism() > 0 ? s.end->parallelism() : NodeParallelism(g_.node(i));
  };
  for (int i = 0; i < n; ++i) {
    const schema::Node& node = g_.node(i);
    const NodeWindow& s = stats_[i];
    NodeModel m;
    m.name = node.name();
    m.op = node.op();
    m.imported_type = node.imported_type();
    m.depth = g_.depth(i);
    m.random = NodeIsRandom(node) || (t_.header.imported().has_dataloader() && DataLoaderNodeIsRandom(node));
    m.parallelism = own_parallelism(i);
    m.reliable = std::find(unreliable.begin(), unreliable.end(), m.name) == unreliable.end();
    if (m.reliable) {
      m.elements = s.Delta(&schema::NodeStats::elements_produced);
      m.bytes = s.Delta(&schema::NodeStats::bytes_produced);
      m.cpu_seconds = static_cast<double>(s.Delta(&schema::NodeStats::active_cpu_ns)) * 1e-9;
      m.storage_bytes = s.Delta(&schema::NodeStats::storage_bytes_read);
      m.wait_seconds = static_cast<double>(s.Delta(&schema::NodeStats::wait_ns)) * 1e-9;
      m.storage_requests = s.Delta(&schema::NodeStats::storage_requests);
      if (m.storage_requests > 0) {
        m.request_latency_seconds = static_cast<double>(s.Delta(&schema::NodeStats::storage_request_ns)) * 1e-9 /
                                    static_cast<double>(m.storage_requests);
      }
      if (m.elements < 0 || m.bytes < 0 || m.cpu_seconds < 0 || m.storage_bytes < 0 || m.wait_seconds < 0 ||
          m.storage_requests < 0) {
        // The window's ends were moved (a short trace) across a counter
        // reset that the stream check attributed to no window.
        r_.warnings.push_back("counters of node '" + m.name + "' decrease across the window; its rates are left out");
        m.reliable = false;
        m.elements = m.bytes = m.storage_bytes = m.storage_requests = 0;
        m.cpu_seconds = m.wait_seconds = 0;
        m.request_latency_seconds.reset();
      }
      if (m.reliable) {
        m.handoff_cpu_seconds = handoff_cpu[i];
        m.cpu_seconds += m.handoff_cpu_seconds;
      }
    }
    m.visit_ratio = static_cast<double>(m.elements) / c0;
    m.cpu_seconds_per_minibatch = m.cpu_seconds / c0;
    m.wait_seconds_per_minibatch = m.wait_seconds / c0;
    m.service_seconds_per_minibatch = m.cpu_seconds_per_minibatch + m.wait_seconds_per_minibatch;
    if (m.cpu_seconds_per_minibatch > 0) m.rate_per_core = 1.0 / m.cpu_seconds_per_minibatch;
    if (window_known_) m.cores_used = m.cpu_seconds / r_.window_seconds;
    if (m.elements > 0) {
      m.bytes_per_element = static_cast<double>(m.bytes) / static_cast<double>(m.elements);
    } else if (s.end && s.end->elements_produced() > 0) {
      // Idle in the window (e.g. under a cache): sizes from the whole run.
      m.bytes_per_element =
          static_cast<double>(s.end->bytes_produced()) / static_cast<double>(s.end->elements_produced());
    }
    m.disk_bytes_per_minibatch = static_cast<double>(m.storage_bytes) / c0;
    m.steady_state_cost = !(under_cache[i] && m.elements == 0 && m.cpu_seconds == 0);

    const bool parallel = g_.op(i).parallelizable();
    const char* all_cores = r_.cores_from == CoresFrom::kMachine
                                ? (r_.cores == 1 ? "the machine's one core" : "all the machine's cores")
                                : (r_.cores == 1 ? "the one core planned for" : "all the cores planned for");
    // An imported node plumber cannot turn runs at the parallelism it had.
    const bool fixed_parallel = !parallel && m.parallelism > 1;
    const double own_max = parallel ? r_.cores : fixed_parallel ? m.parallelism : 1;
    if (parallel || g_.enclosing_interleave(i) >= 0) {
      // Each thread holds about one element in flight, plus one waiting in
      // the buffer: threads whose elements would not fit in memory are not
      // offered. The machine's free memory, not a --mem what-if: that is
      // the budget of a cache.
      m.max_threads = static_cast<double>(kMaxThreadsPerCore) * r_.cores;
      const auto& machine = t_.header.machine();
      const double free_bytes = static_cast<double>(
          machine.available_memory_bytes() > 0 ? machine.available_memory_bytes() : machine.memory_bytes());
      if (m.bytes_per_element && *m.bytes_per_element > 0 && free_bytes > 0) {
        m.max_threads =
            std::min(m.max_threads, std::max(1.0, std::floor(free_bytes / (2 * *m.bytes_per_element))));
      }
    }
    if (const int owner = g_.enclosing_interleave(i); owner >= 0) {
      m.interleave = g_.name(owner);
      const OpDef& il = g_.op(owner);
      const int cycle = il.cycle_length != nullptr ? il.cycle_length(g_.node(owner)) : 1;
      // Each open dataset runs this node once; at most cycle_length are open.
      if (own_max * cycle < r_.cores) {
        m.max_cores = own_max * cycle;
        m.cap_reason = "cycle_length " + std::to_string(cycle) + " of " + m.interleave;
      } else {
        m.max_cores = r_.cores;
        m.cap_reason = all_cores;
      }
      m.cores_now = std::min(m.max_cores, static_cast<double>(m.parallelism) * own_parallelism(owner));
    } else {
      m.max_cores = own_max;
      m.cap_reason = parallel         ? all_cores
                     : fixed_parallel ? "its imported parallelism (never rewritten)"
                                      : "sequential op";
      m.cores_now = std::min(m.max_cores, static_cast<double>(m.parallelism));
    }
    r_.nodes.push_back(std::move(m));
  }
}

// Which nodes share threads, and what each group of threads can deliver
// as traced: threads / sum of its members' service.
void Modeler::Groups() {
  // A reader inside an interleave function runs once per open input: never
  // more at once than the interleave has inputs (files) in a pass.
  for (int i = 0; i < g_.size(); ++i) {
    const int owner = g_.enclosing_interleave(i);
    if (owner < 0 || g_.inputs(owner).empty()) continue;
    const Cardinality& inputs = r_.nodes[g_.inputs(owner)[0]].cardinality;
    if (inputs.finite() && inputs.hi >= 1) r_.nodes[i].max_threads = std::min(r_.nodes[i].max_threads, inputs.hi);
  }
  tg_ = r_.dataloader ? DataLoaderThreadGroups(g_, r_.dataloader->traced.num_workers) : BuildThreadGroups(g_);
  const ThreadGroups& tg = tg_;
  for (const ThreadGroup& group : tg.groups) {
    GroupModel gm;
    gm.name = group.name;
    gm.owner = group.owner >= 0 ? g_.name(group.owner) : "";
    gm.threads = group.threads;
    gm.serialized = group.serialized;
    for (int i : group.members) {
      const NodeModel& m = r_.nodes[i];
      gm.members.push_back(m.name);
      if (m.reliable && m.steady_state_cost) gm.service_seconds_per_minibatch += m.service_seconds_per_minibatch;
    }
    r_.thread_groups.push_back(std::move(gm));
  }
  // The consumer's thread also runs the model step between minibatches.
  if (!r_.thread_groups.empty()) {
    r_.thread_groups[0].service_seconds_per_minibatch += std::max(0.0, t_.header.options().step_time_seconds());
  }
  for (int i = 0; i < g_.size(); ++i) {
    const int k = tg.group_of[i];
    r_.nodes[i].group = k;
    if (k >= 0) r_.nodes[i].threads = r_.thread_groups[k].threads;
  }
  for (const auto& m : r_.nodes) {
    if (m.reliable && m.steady_state_cost) r_.wait_seconds_per_minibatch += m.wait_seconds_per_minibatch;
  }
}

// As configured: the evaluator over the traced program with the traced
// costs (the thread groups at their threads, the cores shared by
// everything's CPU, storage; then the epoch restart). Each group's bound
// and the tightest of them come from the same evaluation.
void Modeler::AsTraced() {
  ProgramCosts costs;
  costs.nodes.resize(static_cast<size_t>(g_.size()));
  for (int i = 0; i < g_.size(); ++i) {
    const NodeModel& m = r_.nodes[i];
    costs.nodes[i] = {m.reliable && m.steady_state_cost, m.cpu_seconds_per_minibatch, m.service_seconds_per_minibatch,
                      m.disk_bytes_per_minibatch};
  }
  EvaluationMachine machine;
  machine.cores = r_.cores;
  if (r_.disk_bound) machine.storage_bandwidth = r_.disk_bandwidth;
  machine.step_seconds = std::max(0.0, t_.header.options().step_time_seconds());
  RestartModels restart;
  restart.carried = [&](int i) { return &r_.nodes[i]; };
  restart.works = [](int) { return true; };
  const Evaluation e = r_.dataloader ? EvaluateDataLoader(g_, costs, *r_.dataloader, r_.dataloader->traced,
                                                          machine.cores, machine.step_seconds)
                                           .evaluation
                                     : Evaluate(g_, tg_, costs, machine, &restart);
  for (size_t k = 0; k < r_.thread_groups.size(); ++k) {
    GroupModel& gm = r_.thread_groups[k];
    gm.bound = e.group_throughput[k];
    if (gm.bound && (!r_.wait_bound || *gm.bound < *r_.wait_bound)) {
      r_.wait_bound = gm.bound;
      r_.wait_bound_group = gm.name;
    }
  }
  auto& a = r_.as_traced;
  a.throughput = e.throughput;
  a.steady_throughput = e.steady_throughput;
  a.restart = e.restart;
  a.bottleneck = e.bottleneck;
  a.limit = e.limit;
  // The best parallelism's bound, over whole epochs too.
  if (a.restart && r_.predicted_throughput) {
    r_.predicted_throughput = a.restart->Apply(BestParallelismBounds(r_));
  }
}

// The machine's limits at the best parallelism, from the closed forms of
// lp/steady_limits.h over every counted node: the cores, each node's core
// cap (the CPU bound), storage, and a node that waits held by the most
// threads it may have.
void Modeler::Bounds() {
  lp::ThroughputProblem p;
  p.cores = r_.cores;
  for (const auto& m : r_.nodes) {
    const bool counted = m.steady_state_cost && m.reliable;
    const bool waits = counted && m.wait_seconds_per_minibatch > 0;
    p.stages.push_back({m.name, counted ? m.cpu_seconds_per_minibatch : 0.0, m.max_cores,
                        waits ? m.service_seconds_per_minibatch : 0.0, m.max_threads});
    if (counted) {
      p.storage.bytes_per_minibatch += m.disk_bytes_per_minibatch;
      r_.cpu_seconds_per_minibatch += m.cpu_seconds_per_minibatch;
    }
  }
  r_.disk_bytes_per_minibatch = p.storage.bytes_per_minibatch;
  if (r_.disk_bandwidth && *r_.disk_bandwidth > 0) p.storage.bandwidth = *r_.disk_bandwidth;
  using Kind = lp::SteadyLimit::Kind;
  for (const auto& limit : lp::SteadyLimits(p)) {
    const double x = limit.throughput;
    if (limit.kind == Kind::kCores) r_.cpu_bound_uncapped = x;
    if ((limit.kind == Kind::kCores || limit.kind == Kind::kStage) && (!r_.cpu_bound || x < *r_.cpu_bound)) {
      r_.cpu_bound = x;
      r_.cpu_bound_limit = limit.kind == Kind::kCores ? "cores" : p.stages[limit.index].name;
    }
    if (limit.kind == Kind::kStorage) r_.disk_bound = x;
    if (!r_.predicted_throughput || x < *r_.predicted_throughput) {
      r_.predicted_throughput = x;
      r_.predicted_limit = limit.kind == Kind::kStorage ? "disk" : limit.kind == Kind::kThreads ? "wait" : "cpu";
    }
  }
}

void Modeler::Ranking() {
  for (auto& m : r_.nodes) {
    std::optional<double> cpu;
    if (m.rate_per_core) cpu = m.cores_now * *m.rate_per_core;
    // A node that waits is held by its threads: n / s_i, the whole of its
    // service, and the group's other members take their turns too.
    std::optional<double> threads;
    if (m.wait_seconds_per_minibatch > 0) threads = m.threads / m.service_seconds_per_minibatch;
    std::optional<double> storage;
    if (m.disk_bytes_per_minibatch > 0 && r_.disk_bandwidth && *r_.disk_bandwidth > 0) {
      storage = *r_.disk_bandwidth / m.disk_bytes_per_minibatch;
    }
    const auto cores = [](double c) { return FormatCount(c, "core", "cores"); };
    if (!m.reliable) {
      m.limit = Limit::kNone;
      m.limit_text = "counters went backwards: not ranked";
    } else if (!m.steady_state_cost) {
      m.limit = Limit::kCached;
      m.limit_text = "under a cache, idle in the window: no steady-state cost";
    } else if (threads && (!storage || *threads <= *storage) && (!cpu || *threads <= *cpu)) {
      m.scaled_rate = threads;
      m.limit = Limit::kWait;
      m.limit_text = "waiting: " + units::FormatSeconds(m.wait_seconds_per_minibatch) + " per minibatch (" +
                     FormatNumber(100 * m.wait_seconds_per_minibatch / m.service_seconds_per_minibatch) +
                     "% of its service) on " + FormatCount(m.threads, "thread", "threads") +
                     "; could use up to " + FormatNumber(m.max_threads);
    } else if (storage && (!cpu || *storage < *cpu)) {
      m.scaled_rate = storage;
      m.limit = Limit::kStorage;
      m.limit_text = "storage: " + units::FormatBytes(m.disk_bytes_per_minibatch) + " per minibatch at " +
                     units::FormatRate(*r_.disk_bandwidth);
    } else if (!cpu) {
      m.limit = Limit::kNone;
      m.limit_text = "nothing: no CPU cost in the window";
    } else if (m.cores_now >= m.max_cores) {
      m.scaled_rate = cpu;
      m.limit = Limit::kSequential;
      m.limit_text = "at its cap of " + cores(m.max_cores) + " (" + m.cap_reason + ")";
    } else {
      m.scaled_rate = cpu;
      m.limit = Limit::kCpu;
      m.limit_text = "CPU at " + cores(m.cores_now) + "; could use up to " + FormatNumber(m.max_cores) + " (" +
                     m.cap_reason + ")";
    }
  }
  std::vector<int> order(r_.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto key = [&](int i) {
    const NodeModel& m = r_.nodes[i];
    const int tier = !m.reliable ? 3 : !m.steady_state_cost ? 2 : m.scaled_rate ? 0 : 1;
    return std::make_tuple(tier, m.scaled_rate.value_or(0.0), i);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int i : order) r_.ranking.push_back(r_.nodes[i].name);
  if (!order.empty() && r_.nodes[order[0]].scaled_rate) r_.bottleneck = r_.nodes[order[0]].name;
}

void Modeler::Cache() {
  for (const auto& s : t_.window.end.nodes()) {
    if (g_.Find(s.name()) >= 0)
      r_.buffered_bytes += static_cast<uint64_t>(std::max<int64_t>(0, s.peak_buffered_bytes()));
  }
  const double free_bytes = static_cast<double>(r_.memory_bytes) - static_cast<double>(r_.buffered_bytes);
  r_.cache_budget_bytes = std::max(0.0, free_bytes) * opt_.cache_memory_fraction;
  int best = -1;
  for (size_t i = 0; i < r_.nodes.size(); ++i) {
    const NodeModel& m = r_.nodes[i];
    // A node inside an interleave function is one file's dataset: a cache
    // there would hold one file, not the data.
    if (!m.cacheable || !m.interleave.empty() || !m.materialized_bytes || m.depth < 0) continue;
    // No bytes counted (a DataLoader's worker queue): "0 B" would be no size
    // at all, not a small one.
    if (*m.materialized_bytes <= 0) continue;
    if (*m.materialized_bytes > r_.cache_budget_bytes) continue;
    if (best < 0 || m.depth < r_.nodes[best].depth) best = static_cast<int>(i);
  }
  if (best >= 0) {
    r_.cache_node = r_.nodes[best].name;
    r_.cache_bytes = *r_.nodes[best].materialized_bytes;
  }
}

// A PyTorch DataLoader's setting, and what its run measured beyond the nodes.
void Modeler::DataLoader() {
  double nodes_cpu = 0;
  for (const NodeWindow& s : stats_) nodes_cpu += static_cast<double>(s.Delta(&schema::NodeStats::active_cpu_ns)) * 1e-9;
  r_.dataloader = MeasureDataLoader(t_.header, t_.window, r_.minibatches, nodes_cpu);
}

StatusOr<Analysis> Modeler::Run() {
  r_.source = t_.source;
  r_.warnings = std::move(t_.window.warnings);
  if (t_.window.single_snapshot && !t_.header.has_imported()) {
    const int seen = t_.window.snapshots_seen;
    r_.warnings.push_back((seen > 1 ? "the window holds a single snapshot (of " + std::to_string(seen) +
                                          " in the trace)"
                                    : std::string("the trace has a single snapshot")) +
                          "; the window starts at the beginning of the run and includes warm-up");
  }
  PLUMBER_RETURN_IF_ERROR(Window());
  Machine();
  DataLoader();  // before the rates: the crossing is the hand-off's CPU
  Rates();
  BandwidthFromCurve();
  ModelSizes(g_, stats_, &r_);
  Groups();
  Bounds();
  AsTraced();
  Ranking();
  ThreadsToPass(&r_);
  Cache();
  r_.header = std::move(t_.header);
  r_.graph = std::move(t_.graph);
  return std::move(r_);
}

}  // namespace

const char* CoresFromName(CoresFrom from) {
  switch (from) {
    case CoresFrom::kGiven: return "given";
    case CoresFrom::kRun: return "run";
    case CoresFrom::kMachine: return "machine";
    case CoresFrom::kAssumed: return "assumed";
  }
  return "machine";
}

const char* LimitName(Limit limit) {
  switch (limit) {
    case Limit::kCpu: return "cpu";
    case Limit::kWait: return "wait";
    case Limit::kSequential: return "sequential";
    case Limit::kStorage: return "storage";
    case Limit::kNone: return "none";
    case Limit::kCached: return "cached";
  }
  return "none";
}

const NodeModel* Analysis::Find(const std::string& name) const {
  auto lookup = [&]() -> const NodeModel* {
    auto it = index_.find(name);
    if (it == index_.end() || it->second >= nodes.size() || nodes[it->second].name != name) return nullptr;
    return &nodes[it->second];
  };
  if (index_.size() == nodes.size()) {
    if (const NodeModel* n = lookup()) return n;
  }
  // Stale, or the name is absent: rebuild and look once more.
  index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) index_.emplace(nodes[i].name, i);
  return lookup();
}

StatusOr<Analysis> BuildModel(LoadedTrace trace, const AnalysisOptions& options) {
  Modeler modeler(std::move(trace), options);
  return modeler.Run();
}

}  // namespace plumber::analysis
