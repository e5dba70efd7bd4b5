// From the analysis model to the LP and MILP of lib/lp, and back.
#include "analysis/plan.h"

#include <algorithm>
#include <cmath>

#include "analysis/analysis.h"
#include "analysis/handoff_price.h"
#include "base/number_format.h"
#include "base/units.h"
#include "lp/cache_choice.h"
#include "lp/throughput.h"

namespace plumber::analysis {
namespace {

// Effective bandwidth of a concave curve at parallelism p.
double CurveAt(const schema::BandwidthCurve& curve, double p) {
  double best = 1e300;
  for (const auto& piece : curve.pieces()) best = std::min(best, piece.slope() * p + piece.intercept());
  return best;
}

// Solver answers carry its tolerance (about 1e-9 relative); nine
// significant digits say all they know and keep reports readable.
double Significant(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 8 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

}  // namespace

const StagePlan* Plan::Find(const std::string& name) const {
  for (const auto& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

StatusOr<PlanGraph> BuildPlanGraph(const Analysis& report, bool structural_caps) {
  const ProgramGraph& program = report.program_graph();
  const int n = program.size();
  // repeated[i]: a node that re-reads its input (a repeat) lies between i
  // and the output. Consumers come before their inputs in reverse
  // topological order, so one pass settles it.
  std::vector<bool> repeated(n, false);
  const auto& order = program.topological_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int j = *it;
    const OpDef& op = program.op(j);
    const bool rereads = op.rereads_input != nullptr && op.rereads_input(program.node(j));
    if (!rereads && !repeated[j]) continue;
    for (int i : program.children(j)) repeated[i] = true;
  }

  // Service and storage of each subtree (the node and everything it pulls),
  // inputs before consumers: what a cache there would save.
  std::vector<double> subtree_service(n, 0.0);
  std::vector<double> subtree_disk(n, 0.0);
  double total_service = 0;
  for (int j : order) {
    const NodeModel* m = report.Find(program.name(j));
    if (m == nullptr) return Status::Internal("plan: the model has no node '" + program.name(j) + "'");
    if (m->steady_state_cost) {
      subtree_service[j] += m->service_seconds_per_minibatch;
      subtree_disk[j] += m->disk_bytes_per_minibatch;
      total_service += m->service_seconds_per_minibatch;
    }
    for (int k : program.children(j)) {
      subtree_service[j] += subtree_service[k];
      subtree_disk[j] += subtree_disk[k];
    }
  }

  PlanGraph graph;
  for (int i = 0; i < n; ++i) {
    const NodeModel* m = report.Find(program.name(i));
    if (m == nullptr) return Status::Internal("plan: the model has no node '" + program.name(i) + "'");
    StagePlan stage;
    stage.name = program.name(i);
    stage.interleave = m->interleave;
    stage.parallelizable = program.op(i).parallelizable() || !m->interleave.empty();
    stage.max_cores = structural_caps ? (stage.parallelizable ? report.cores : 1.0) : m->max_cores;
    stage.cpu_seconds_per_minibatch = m->steady_state_cost ? m->cpu_seconds_per_minibatch : 0.0;
    stage.service_seconds_per_minibatch = m->steady_state_cost ? m->service_seconds_per_minibatch : 0.0;
    stage.max_threads = m->max_threads;
    graph.stages.push_back(stage);

    lp::CacheNode cn;
    cn.name = stage.name;
    cn.cpu_seconds_per_minibatch = stage.cpu_seconds_per_minibatch;
    cn.max_cores = stage.max_cores;
    cn.service_seconds_per_minibatch = stage.service_seconds_per_minibatch;
    cn.max_threads = stage.max_threads;
    cn.storage_bytes_per_minibatch = m->steady_state_cost ? m->disk_bytes_per_minibatch : 0.0;
    // Caches sit between whole datasets, never inside an interleave function;
    // an estimated size is taken at the top of its interval so the cache fits.
    const bool saves_work = subtree_disk[i] > 0 || subtree_service[i] > 0.01 * total_service;
    const bool is_cache = program.op(i).caches;
    // A cache's output is in memory already: a second cache after it would
    // replay what it replays, and counting its replay as work saved put a
    // traced cache's own cost out of the plan (the cached example traced
    // with its cache: predicted 15.6k minibatches/s, ran 10.7k).
    cn.cacheable = m->cacheable && m->interleave.empty() && m->materialized_bytes.has_value() && repeated[i] &&
                   saves_work && !is_cache;
    if (m->cacheable && m->interleave.empty() && !repeated[i]) ++graph.read_once;
    cn.materialized_bytes = cn.cacheable ? m->materialized_hi.value_or(*m->materialized_bytes) : 0.0;
    cn.consumers = program.consumers(i);
    graph.nodes.push_back(cn);
    if (is_cache && graph.traced_cache.empty()) graph.traced_cache = stage.name;
  }
  graph.root = program.output();
  return graph;
}

StatusOr<lp::ProvisionProblem> MakeProvisionProblem(const Analysis& report, double target) {
  PLUMBER_ASSIGN_OR_RETURN(PlanGraph graph, BuildPlanGraph(report, /*structural_caps=*/true));
  lp::ProvisionProblem problem;
  problem.nodes = std::move(graph.nodes);
  problem.root = graph.root;
  problem.target = target;
  problem.buffer_bytes = static_cast<double>(report.buffered_bytes);
  // Cores are what provisioning decides: a parallel stage may take any
  // number of them, but a reader inside an interleave runs once per open
  // input, so never on more cores than the interleave has inputs (files).
  // Without that cap the image example's eight files were planned 9.6
  // cores of reading for 60 minibatches/s, which no rewrite can give them.
  const ProgramGraph& g = report.program_graph();
  for (size_t i = 0; i < problem.nodes.size(); ++i) {
    if (!graph.stages[i].parallelizable) continue;
    double cap = 1e6;
    const int node = g.Find(graph.stages[i].name);
    const int owner = node >= 0 ? g.enclosing_interleave(node) : -1;
    if (owner >= 0 && !g.inputs(owner).empty()) {
      const NodeModel* inputs = report.Find(g.name(g.inputs(owner)[0]));
      if (inputs != nullptr && inputs->cardinality.finite() && inputs->cardinality.hi >= 1) {
        cap = inputs->cardinality.hi;
      }
    }
    problem.nodes[i].max_cores = cap;
  }
  return problem;
}

StatusOr<Provisioning> PlanProvisioning(const Analysis& analysis, double target, const lp::ResourcePrices& prices) {
  PLUMBER_ASSIGN_OR_RETURN(lp::ProvisionProblem problem, MakeProvisionProblem(analysis, target));
  problem.prices = prices;
  Provisioning p;
  p.target = target;
  p.prices = prices;
  PLUMBER_ASSIGN_OR_RETURN(p.machine, lp::SolveProvisioning(problem));
  if (!p.machine.cached.empty()) p.cache_node = problem.nodes[p.machine.cached.front()].name;
  // "0 B/s" alone reads as a mistake: say what makes storage free.
  if (p.machine.bandwidth < 1) {
    if (analysis.disk_bytes_per_minibatch <= 0) {
      p.bandwidth_note = "the pipeline reads nothing from storage";
    } else if (!p.cache_node.empty()) {
      p.bandwidth_note = "the cache after " + p.cache_node + " replays what is read (" +
                         units::FormatBytes(analysis.disk_bytes_per_minibatch) +
                         " per minibatch), so storage is read in the first epoch only";
    }
  }
  return p;
}

StatusOr<Plan> MakePlan(const Analysis& report, const PlanOptions& options) {
  if (report.cores <= 0) return Status::InvalidArgument("plan: the machine has no cores (give --cores)");

  Plan plan;
  plan.cores = report.cores;
  plan.cache_budget_bytes = report.cache_budget_bytes;
  plan.disk_bandwidth = report.disk_bandwidth;

  const auto& curve = report.header.machine().bandwidth_curve();
  const bool has_curve = curve.pieces_size() > 0;
  // The most readers a rewrite would open: one per core is plenty for
  // latency-bound storage, and keeps the program bounded.
  const double max_readers = std::max(1, report.cores) * 4.0;
  // A throttle or --disk-bandwidth is a hard limit; a bandwidth the analysis
  // read off the curve at the traced parallelism is not, since the rewrite
  // can open more readers.
  const double hard_limit = report.disk_bandwidth_from_curve ? 0.0 : report.disk_bandwidth.value_or(0);
  double bandwidth = hard_limit;
  if (has_curve) {
    const double curve_max = CurveAt(curve, max_readers);
    bandwidth = bandwidth > 0 ? std::min(bandwidth, curve_max) : curve_max;
  }

  PLUMBER_ASSIGN_OR_RETURN(PlanGraph graph, BuildPlanGraph(report, options.structural_caps));
  plan.stages = graph.stages;
  lp::CacheProblem cache;
  cache.cores = report.cores;
  cache.bandwidth = bandwidth;
  cache.memory_budget = options.allow_cache ? report.cache_budget_bytes : 0;
  cache.nodes = graph.nodes;
  cache.root = graph.root;
  const int read_once = graph.read_once;
  lp::ThroughputProblem throughput;
  throughput.cores = report.cores;
  for (const auto& cn : cache.nodes) {
    throughput.stages.push_back(
        {cn.name, cn.cpu_seconds_per_minibatch, cn.max_cores, cn.service_seconds_per_minibatch, cn.max_threads});
    plan.disk_bytes_per_minibatch += cn.storage_bytes_per_minibatch;
  }

  if (!options.allow_cache) plan.cache_note = "not considered (caching turned off)";
  if (options.allow_cache && !graph.traced_cache.empty()) {
    plan.cache_note = "the pipeline caches at " + graph.traced_cache + " already";
  }
  if (read_once > 0 && options.allow_cache) {
    bool any_candidate = false;
    for (const auto& cn : cache.nodes) any_candidate = any_candidate || cn.cacheable;
    if (!any_candidate) {
      plan.cache_note = FormatCount(read_once, "node", "nodes") +
                        " could be cached, but no repeat re-reads them: the data is read once, so a cache would never "
                        "be replayed";
    }
  }
  throughput.storage.bytes_per_minibatch = plan.disk_bytes_per_minibatch;
  throughput.storage.bandwidth = hard_limit;
  if (has_curve) {
    for (const auto& piece : curve.pieces()) throughput.storage.curve.push_back({piece.slope(), piece.intercept()});
    throughput.storage.max_parallelism = max_readers;
  }

  // Without a cache: the bound parallelism alone can reach. A pipeline with
  // no cost at all has nothing to bound it; the MILP's ceiling answers then.
  auto no_cache = lp::SolveThroughput(throughput, options.lp);
  if (no_cache.ok()) {
    plan.throughput_without_cache = Significant(no_cache->throughput);
    plan.binding_without_cache = no_cache->binding;
  } else if (no_cache.status().code() != Status::Code::kFailedPrecondition) {
    return no_cache.status();
  }

  // Ceiling well above anything the trace suggests, so it binds only when
  // caching removes every cost.
  cache.max_throughput = std::max(1e3, 1e3 * std::max(report.observed_throughput.value_or(0.0), plan.throughput_without_cache));
  PLUMBER_ASSIGN_OR_RETURN(lp::CachePlan chosen, lp::SolveCacheChoice(cache, options.lp));
  // A file cache may reach higher than what fits in memory; it pays when the
  // work it removes outweighs reading it back.
  if (options.allow_cache && options.file_cache_free_bytes > 0) {
    lp::CacheProblem on_disk = cache;
    on_disk.memory_budget = 0.9 * options.file_cache_free_bytes;
    auto file_plan = lp::SolveCacheChoice(on_disk, options.lp);
    if (file_plan.ok() && !file_plan->cached.empty()) {
      const int k = file_plan->cached.front();
      const NodeModel* m = report.Find(cache.nodes[k].name);
      double x = file_plan->throughput;
      if (hard_limit > 0 && m != nullptr && m->bytes_per_element) {
        // Reading the cache back: its bytes per minibatch join what the
        // nodes still working read.
        double read = *m->bytes_per_element * m->visit_ratio;
        for (size_t i = 0; i < cache.nodes.size(); ++i) {
          if (file_plan->active[i]) read += cache.nodes[i].storage_bytes_per_minibatch;
        }
        if (read > 0) x = std::min(x, hard_limit / read);
      }
      if (m != nullptr) {
        // The replay itself, on its consumer's thread (one thread, so one
        // core at most) and on the cores beside the nodes still working:
        // a read-back priced as a copy out of memory put the io example at
        // 2.09x and the cached one at 2.5x what they ran at.
        const HandoffPrice price = HandoffPriceOf(report.header.machine());
        const double epoch = m->cardinality.kind == Cardinality::Kind::kFinite ? m->cardinality.value : 0.0;
        const double replay = m->visit_ratio * price.FileReplaySeconds(m->bytes_per_element.value_or(0), epoch);
        double working = replay;
        for (size_t i = 0; i < cache.nodes.size(); ++i) {
          if (file_plan->active[i]) working += cache.nodes[i].cpu_seconds_per_minibatch;
        }
        if (replay > 0) x = std::min({x, 1 / replay, cache.cores / working});
      }
      if (x > 1.05 * chosen.throughput) {
        chosen = std::move(*file_plan);
        chosen.throughput = x;
        plan.cache_file = options.file_cache_dir + "/" + cache.nodes[k].name + ".plumber-cache";
      }
    }
  }
  plan.throughput = Significant(chosen.throughput);
  plan.unbounded = chosen.throughput >= cache.max_throughput * (1 - 1e-9);
  if (!plan.throughput_without_cache) plan.throughput_without_cache = plan.throughput;
  for (int k : chosen.cached) {
    // One cache is all the rewrite inserts; the MILP's tie-break keeps it
    // to the node nearest the output.
    if (plan.cache_node.empty()) {
      plan.cache_node = cache.nodes[k].name;
      plan.cache_bytes = cache.nodes[k].materialized_bytes;
    }
  }
  double active_disk = 0;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    plan.stages[i].active = chosen.active[i];
    // theta is not unique; the least each stage needs at the planned rate
    // (X c_i) is the allocation worth reporting, and the rewrite hands out
    // what is left over as spare cores.
    plan.stages[i].cores =
        chosen.active[i] ? Significant(std::min(plan.stages[i].max_cores, plan.throughput * plan.stages[i].cpu_seconds_per_minibatch))
                         : 0.0;
    plan.stages[i].threads = chosen.active[i] ? Significant(plan.throughput * plan.stages[i].service_seconds_per_minibatch) : 0.0;
    if (chosen.active[i]) active_disk += cache.nodes[i].storage_bytes_per_minibatch;
  }
  if (has_curve && active_disk > 0) {
    // The least p with curve(p) >= X * D: every piece must reach it.
    const double need = plan.throughput * active_disk;
    double p = 1;
    for (const auto& piece : curve.pieces()) {
      if (piece.slope() > 0) p = std::max(p, (need - piece.intercept()) / piece.slope());
    }
    plan.read_parallelism = static_cast<int>(std::ceil(std::min(p, max_readers) - 1e-9));
  }
  return plan;
}

}  // namespace plumber::analysis
