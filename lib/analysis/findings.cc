// The sentences of findings.h, in the order a reader needs them: what was
// measured, what holds it back, what the machine allows, what the data is.
#include "analysis/findings.h"

#include <algorithm>

#include "analysis/handoff_price.h"
#include "analysis/thread_groups.h"
#include "base/number_format.h"
#include "base/units.h"
#include "pipeline/legal_moves.h"

namespace plumber::analysis {
namespace {

// The consumer's wait as a share of the window: "90% of the window". A
// wait is counted when the consumer's call returns, so one begun before the
// window opened counts whole and can put the share a little over 1: that
// reads "all of the window", not "100.3%".
std::string WindowShare(double share) {
  return share >= 0.9995 ? std::string("all of the window") : FormatPercent(share) + " of the window";
}

// A filter that drops much of what the map below it made: moving it above
// the map would spare the map the dropped elements' work. Said with the
// rule's verdict, since a move that changes the output is no saving.
void MisplacedFilters(const Analysis& r, std::vector<std::string>* f) {
  const ProgramGraph& g = r.program_graph();
  for (int i = 0; i < g.size(); ++i) {
    if (g.op(i).moves_above_map != MovesAboveMap::kPredicate || g.inputs(i).size() != 1) continue;
    const int below = g.inputs(i)[0];
    const NodeModel* filter = r.Find(g.name(i));
    const NodeModel* map = r.Find(g.name(below));
    if (filter == nullptr || map == nullptr || map->visit_ratio <= 0 || !map->reliable || !map->steady_state_cost ||
        map->cpu_seconds_per_minibatch <= 0 || r.cpu_seconds_per_minibatch <= 0 || g.op(below).udf == nullptr) {
      continue;
    }
    const double keep = std::clamp(filter->visit_ratio / map->visit_ratio, 0.0, 1.0);
    const double saved = (1 - keep) * map->cpu_seconds_per_minibatch;
    // Worth a sentence when it spares a tenth of the map and a twentieth of
    // the pipeline's CPU.
    if (keep > 0.9 || saved < 0.05 * r.cpu_seconds_per_minibatch) continue;
    const std::string saving = filter->name + " keeps " + FormatPercent(keep) + " of the elements " + map->name +
                               " makes: moved above " + map->name + ", it would spare it " + FormatPercent(1 - keep) +
                               " of its CPU (" + units::FormatSeconds(saved) + " per minibatch, " +
                               FormatPercent(saved / r.cpu_seconds_per_minibatch) + " of the pipeline's). ";
    // An imported pipeline's functions are opaque: the move is the user's
    // to check, on the conditions plumber's own rows would declare.
    if (!r.imported_from.empty()) {
      if (const MoveVerdict c = ImportedMoveConditions(g, i, below); c.legal) {
        f->push_back(saving + "plumber cannot see inside tf.data functions: the move keeps the output " + c.reason +
                     ".");
        continue;
      }
    }
    const MoveVerdict v = CanMoveAbove(g, i, below);
    // Refused only because the map fails on bad data: the user can vouch.
    const bool vouch = !v.legal && CanMoveAbove(g, i, below, {.assume_valid_data = true}).legal;
    f->push_back(saving + (v.legal ? "The move keeps the output: " : "The move is not made: ") + v.reason + "." +
                 (vouch ? " If every record decodes, `plumber rewrite --assume-valid-data` makes it." : ""));
  }
}

// Adjacent maps whose lower one hands each element to the upper across
// threads: one map would do both steps on one thread and spare that
// hand-off (its calibrated price). Maps on one thread already cost what a
// fused map would, so they are not named.
void UnfusedChains(const Analysis& r, std::vector<std::string>* f) {
  const HandoffPrice price = HandoffPriceOf(r.header.machine());
  if (!price.known || r.cpu_seconds_per_minibatch <= 0) return;
  const ProgramGraph& g = r.program_graph();
  const ThreadGroups threads = BuildThreadGroups(g);
  for (int i = 0; i < g.size(); ++i) {
    if (g.inputs(i).size() != 1) continue;
    const int below = g.inputs(i)[0];
    const NodeModel* m = r.Find(g.name(below));
    if (!threads.HandsOff(below) || m == nullptr || !CanFuseMaps(g, i, below).legal) continue;
    const double saved = price.MinibatchSeconds(m->visit_ratio, m->bytes_per_element.value_or(0),
                                                std::max(m->cpu_seconds_per_minibatch, m->service_seconds_per_minibatch));
    if (saved < 0.02 * r.cpu_seconds_per_minibatch) continue;
    f->push_back(g.name(below) + " hands each element to " + g.name(i) + " on other threads: fused into one map, " +
                 "they would spare that hand-off, about " + units::FormatSeconds(saved) + " of CPU per minibatch (" +
                 FormatPercent(saved / r.cpu_seconds_per_minibatch) + " of the pipeline's). The fusion keeps the " +
                 "output: each element meets the same steps in the same order.");
  }
}

// A filter whose predicate is a real share of the work, run on one thread
// (a filter spreads over no cores) above a map it could fuse into: the
// map's pool, which a knob sizes, would then run the predicate too.
void UnfusedFilters(const Analysis& r, std::vector<std::string>* f) {
  // An imported filter never fuses (its predicate is opaque).
  if (r.cpu_seconds_per_minibatch <= 0 || !r.imported_from.empty()) return;
  const ProgramGraph& g = r.program_graph();
  for (int i = 0; i < g.size(); ++i) {
    if (g.inputs(i).size() != 1) continue;
    const int below = g.inputs(i)[0];
    const NodeModel* filter = r.Find(g.name(i));
    if (filter == nullptr || !filter->reliable) continue;
    const double cost = filter->cpu_seconds_per_minibatch;
    // Worth a sentence when it is a tenth of the pipeline's CPU.
    if (cost < 0.1 * r.cpu_seconds_per_minibatch) continue;
    const MoveVerdict v = CanFuseFilter(g, i, below);
    if (!v.legal) continue;
    const GroupModel* group =
        filter->group >= 0 && filter->group < static_cast<int>(r.thread_groups.size()) ? &r.thread_groups[filter->group]
                                                                                       : nullptr;
    const std::string where = group == nullptr || group->owner.empty() ? "the consumer's thread" : group->name;
    f->push_back(filter->name + "'s predicate costs " + units::FormatSeconds(cost) + " of CPU per minibatch (" +
                 FormatPercent(cost / r.cpu_seconds_per_minibatch) + " of the pipeline's) on " + where +
                 ", where no knob spreads it over cores: fused into " + g.name(below) + ", it would run in " +
                 g.name(below) + "'s pool. The fusion keeps the output: " + v.reason + ".");
  }
}

}  // namespace

std::vector<std::string> WriteFindings(const Analysis& r) {
  std::vector<std::string> f;
  auto rate = [](double x) { return FormatNumber(x) + " minibatches/s"; };
  // " (2.1x observed)", or nothing when the observed rate is unknown.
  auto vs_observed = [&](double x) {
    return r.observed_throughput && *r.observed_throughput > 0
               ? " (" + FormatNumber(x / *r.observed_throughput) + "x observed)"
               : std::string();
  };
  if (!r.imported_from.empty()) f.push_back("Imported from " + r.imported_from + ".");
  if (r.observed_throughput) {
    f.push_back("Observed " + rate(*r.observed_throughput) + " (" + std::to_string(r.minibatches) +
                " minibatches in " + units::FormatSeconds(r.window_seconds) + ", from " +
                units::FormatSeconds(r.window_start_seconds) + " to " + units::FormatSeconds(r.window_end_seconds) +
                ").");
  } else {
    f.push_back("Throughput not observed: " + std::to_string(r.minibatches) +
                " minibatches over a time the source does not record; costs are per minibatch.");
  }
  if (r.consumer_wait_seconds) {
    // The paper counts a job input-bound once the mean wait per step passes
    // tens of microseconds.
    const bool stalled = *r.consumer_wait_seconds > 50e-6;
    f.push_back("The consumer waited " + units::FormatSeconds(*r.consumer_wait_seconds) + " per minibatch on average" +
                (r.consumer_wait_fraction ? " (" + WindowShare(*r.consumer_wait_fraction) + ")" : std::string()) +
                ": " + (stalled ? "the input pipeline holds training back." : "the input pipeline keeps up."));
  }
  if (const NodeModel* b = r.Find(r.bottleneck)) {
    // "limited by CPU at 1 core", but "at its cap of 4 cores" on its own.
    f.push_back(b->name + " (" + b->op + ") is the bottleneck: as configured it keeps up with at most " +
                rate(*b->scaled_rate) + (b->limit == Limit::kSequential ? "; " : "; limited by ") + b->limit_text +
                ".");
  }
  if (r.as_traced.throughput) {
    std::string s = "As configured it should run at " + rate(*r.as_traced.throughput) +
                    vs_observed(*r.as_traced.throughput) + ", held by ";
    if (r.as_traced.limit == "threads") {
      const NodeModel* b = r.Find(r.as_traced.bottleneck);
      const GroupModel* g = b && b->group >= 0 ? &r.thread_groups[b->group] : nullptr;
      s += g ? (g->owner.empty() ? std::string("the consumer's thread") : g->name) + " (" +
                   FormatCount(g->threads, "thread", "threads") + ", " +
                   units::FormatSeconds(g->service_seconds_per_minibatch) + " of service per minibatch, " +
                   r.as_traced.bottleneck + " the most)"
             : r.as_traced.bottleneck;
    } else {
      s += r.as_traced.limit == "storage" ? "storage" : r.cores == 1 ? "the one core" : "the cores";
    }
    f.push_back(s + ".");
  }
  const auto& restart = r.as_traced.restart;
  if (restart && r.as_traced.throughput && r.as_traced.steady_throughput &&
      *r.as_traced.throughput < 0.99 * *r.as_traced.steady_throughput && r.dataloader) {
    // A DataLoader's restart is its workers' (dataloader_model.h).
    const double start = r.dataloader->RestartSeconds(r.dataloader->traced);
    f.push_back("Each epoch (" + FormatNumber(restart->minibatches_per_epoch) + " minibatches) costs " +
                FormatNumber(100 * (1 - *r.as_traced.throughput / *r.as_traced.steady_throughput)) +
                "% of the steady " + rate(*r.as_traced.steady_throughput) + ": " +
                (start > 0 ? "the workers restart (" + units::FormatSeconds(start) +
                                 ": their start, their late first batches, their shutdown), then "
                           : "") +
                "an uneven last round of batches idles some workers; longer epochs lose less.");
  } else if (restart && r.as_traced.throughput && r.as_traced.steady_throughput &&
             *r.as_traced.throughput < 0.99 * *r.as_traced.steady_throughput) {
    f.push_back("Each epoch (" + FormatNumber(restart->minibatches_per_epoch) + " minibatches) " + restart->repeat +
                " restarts its input, which costs " +
                FormatNumber(100 * (1 - *r.as_traced.throughput / *r.as_traced.steady_throughput)) +
                "% of the steady " + rate(*r.as_traced.steady_throughput) + ": the threads under it end together, " +
                units::FormatSeconds(restart->drain_seconds) + " of CPU after their last waits, and the first " +
                "element waits " + units::FormatSeconds(restart->fill_wait_seconds) +
                " with the cores idle; longer epochs lose less.");
  }
  // Stages that mostly wait: what their threads give now and what more
  // would give (Little's law: in flight = rate x time held).
  for (const auto& m : r.nodes) {
    if (!m.reliable || !m.steady_state_cost || m.service_seconds_per_minibatch <= 0) continue;
    if (m.wait_seconds_per_minibatch < 0.2 * m.service_seconds_per_minibatch) continue;
    const double now = m.threads / m.service_seconds_per_minibatch;
    const double more = std::min(4.0 * m.threads, m.max_threads);
    std::string s = m.name + " waits";
    if (m.request_latency_seconds && m.storage_requests > 0) {
      const double per_minibatch = static_cast<double>(m.storage_requests) / static_cast<double>(r.minibatches);
      s += " " + units::FormatSeconds(*m.request_latency_seconds) + " per read request (" +
           FormatNumber(per_minibatch) + " requests per minibatch)";
    } else {
      s += " " + units::FormatSeconds(m.wait_seconds_per_minibatch) + " per minibatch inside its own work";
    }
    s += ": " + FormatNumber(100 * m.wait_seconds_per_minibatch / m.service_seconds_per_minibatch) +
         "% of the time it holds a thread, using no core. " + std::to_string(m.threads) +
         (m.threads == 1 ? " thread gives" : " threads in flight give") + " at most " + rate(now);
    if (more > m.threads) s += "; " + FormatNumber(more) + " would give " + rate(more / m.service_seconds_per_minibatch);
    f.push_back(s + ".");
  }
  const NodeModel* top = nullptr;
  for (const auto& m : r.nodes) {
    if (m.steady_state_cost && (!top || m.cpu_seconds_per_minibatch > top->cpu_seconds_per_minibatch)) top = &m;
  }
  if (top && r.cpu_seconds_per_minibatch > 0) {
    f.push_back(top->name + " is " + FormatNumber(100.0 * top->cpu_seconds_per_minibatch / r.cpu_seconds_per_minibatch) +
                "% of the CPU per minibatch (" + units::FormatSeconds(top->cpu_seconds_per_minibatch) + " of " +
                units::FormatSeconds(r.cpu_seconds_per_minibatch) + ").");
  }
  for (const auto& m : r.nodes) {
    // Said where it moves the numbers: a twentieth of the node's CPU.
    if (m.handoff_cpu_seconds <= 0.05 * m.cpu_seconds || r.minibatches <= 0) continue;
    if (r.dataloader) {
      f.push_back("Each batch's crossing from a worker to the main process costs " +
                  units::FormatSeconds(m.handoff_cpu_seconds / static_cast<double>(r.minibatches)) +
                  " of CPU beyond the stages' (pickling, shared memory, the queues, and the training loop's and "
                  "tracer's own): it shares the cores with the workers, so the model charges it to " + m.name + ".");
      continue;
    }
    f.push_back(m.name + "'s CPU includes " +
                units::FormatSeconds(m.handoff_cpu_seconds / static_cast<double>(r.minibatches)) +
                " per minibatch (" + FormatNumber(100.0 * m.handoff_cpu_seconds / m.cpu_seconds) +
                "%) of hand-off work that tracing charged to no node (threads parked and woken, results freed on "
                "another core): the process spent it, so the model counts it.");
  }
  if (r.cores_from == CoresFrom::kRun && r.effective_cores) {
    // A busy machine: the plan is for what the run could get, which the
    // user may know to be temporary.
    f.push_back("The run had " + FormatSignificant(*r.effective_cores, 3) + " of the machine's " +
                FormatCount(r.machine_cores, "core", "cores") + " (other processes used the rest), so everything here "
                "is planned for " + FormatCount(r.cores, "core", "cores") + "; give --cores " +
                std::to_string(r.machine_cores) + " to plan for the whole machine.");
  }
  if (r.cpu_bound) {
    std::string s = "At " + FormatCount(r.cores, "core", "cores") + " the CPU bound is " + rate(*r.cpu_bound);
    if (r.cpu_bound_limit == "cores") {
      s += r.cores == 1 ? " (the core busy)" : " (all cores busy)";
    } else if (const NodeModel* m = r.Find(r.cpu_bound_limit)) {
      s += ", held by " + m->name + " at its cap of " + FormatCount(m->max_cores, "core", "cores") + " (" +
           m->cap_reason + "); without caps it would be " + rate(*r.cpu_bound_uncapped);
    }
    f.push_back(s + ".");
  }
  if (r.disk_bytes_per_minibatch > 0) {
    std::string s = "Storage: " + units::FormatBytes(r.disk_bytes_per_minibatch) + " read per minibatch, " +
                    FormatNumber(100e6 / r.disk_bytes_per_minibatch) + " minibatches/s per 100 MB/s";
    if (r.disk_bound) {
      s += "; at " + units::FormatRate(*r.disk_bandwidth) + " (" + r.disk_bandwidth_from + ") the storage bound is " +
           rate(*r.disk_bound);
    } else {
      s += "; the storage bandwidth is unknown (give --disk-bandwidth)";
    }
    f.push_back(s + ".");
  }
  if (r.predicted_throughput) {
    f.push_back("Predicted " + rate(*r.predicted_throughput) + " with the best parallelism, " +
                (r.predicted_limit == "disk"   ? "storage-bound"
                 : r.predicted_limit == "wait" ? "held by the threads its waiting stages may have"
                                               : "CPU-bound") +
                vs_observed(*r.predicted_throughput) + ".");
  }
  for (const auto& s : r.sources) {
    if (!s.dataset_bytes) continue;
    std::string t = "The files read by node " + s.node + " total " + units::FormatBytes(*s.dataset_bytes);
    if (s.exact) {
      t += *s.files == 1 ? std::string(" (its one file read)") : " (all " + std::to_string(*s.files) + " files read)";
    } else if (!s.interval_known) {
      t += " (estimated from a single file of " + std::to_string(*s.files) +
           ", which says nothing about their spread: read more files for an interval)";
    } else {
      t += " (95% interval " + units::FormatBytes(s.dataset_bytes_lo) + " to " +
           units::FormatBytes(s.dataset_bytes_hi) + ", estimated from " + std::to_string(s.files_completed) + " of " +
           FormatCount(*s.files, "file", "files") + ")";
    }
    f.push_back(t + ".");
  }
  MisplacedFilters(r, &f);
  UnfusedChains(r, &f);
  UnfusedFilters(r, &f);
  for (const auto& m : r.nodes) {
    if (m.random) f.push_back(m.name + " is random, so nothing at or above it can be cached.");
  }
  const std::string& output = r.program_graph().name(r.program_graph().output());
  for (const auto& m : r.nodes) {
    if (m.cardinality.kind == Cardinality::Kind::kUnknown && !m.cardinality.why.empty() && m.name == output) {
      f.push_back("The dataset size is unknown: " + m.cardinality.why + ".");
    }
  }
  if (!r.cache_node.empty()) {
    f.push_back("The dataset after " + r.cache_node + " is " + units::FormatBytes(r.cache_bytes) +
                " and fits the cache budget of " + units::FormatBytes(r.cache_budget_bytes) +
                ": the place to cache it when the data is read more than once (a repeat above it; see the plan).");
  }
  // The largest finite, deterministic candidate that does not fit says what
  // more memory would buy.
  for (const auto& m : r.nodes) {
    if (m.cacheable && m.materialized_bytes && *m.materialized_bytes > r.cache_budget_bytes && m.interleave.empty()) {
      f.push_back("The dataset after " + m.name + " is " + units::FormatBytes(*m.materialized_bytes) +
                  " and does not fit the cache budget of " + units::FormatBytes(r.cache_budget_bytes) + ".");
    }
  }
  if (r.cache_node.empty()) f.push_back("Nothing cacheable fits in memory.");
  return f;
}

}  // namespace plumber::analysis
