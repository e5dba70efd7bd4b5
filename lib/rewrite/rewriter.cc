// Applies a plan to the traced program: parallelism, cache, readers,
// prefetch; then checks the result is a valid pipeline.
#include "rewrite/rewriter.h"

#include "rewrite/emitted_model.h"
#include "rewrite/knobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include "base/number_format.h"
#include "base/units.h"
#include "analysis/thread_groups.h"
#include "pipeline/op_table.h"
#include "pipeline/param_check.h"
#include "pipeline/validate.h"

namespace plumber::rewrite {
namespace {

std::string UniqueName(const schema::Pipeline& p, const std::string& base) {
  std::set<std::string> names;
  for (const auto& n : p.nodes()) names.insert(n.name());
  std::string name = base;
  for (int i = 2; names.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

// The plan's cache as a node of `p`, named after the node it serves; an
// empty file name caches in memory. The search tries it and the rewrite
// emits it: one node, built in one place.
schema::Node PlanCacheNode(const schema::Pipeline& p, const analysis::Plan& plan) {
  return MakeCacheNode(UniqueName(p, plan.cache_node + "_cache"), plan.cache_node, plan.cache_file);
}

// Programs up to this size get a prediction after each knob's change;
// larger ones one per phase of the rewrite (see `stamp` in Rewrite).
constexpr int kStampEachKnobNodes = 256;

// A configuration must beat the one it replaces by this much for the
// model to call it a gain: below it, an added thread, cache or prefetch
// costs memory and hand-offs for nothing the model can see.
constexpr double kGain = 0.01;

// A pool the rewrite adds to a stage that ran inline must gain this much:
// the model prices its hand-offs from a calibration on a cheap op, and real
// ops cost more once their elements cross threads (on the text example
// with tokenize pooled, its source 3x, tokenize 1.7x, its consumer's filter
// 3.7x the CPU they took inline), so it over-predicts a new pool. On the
// text example at the hand-off price CI's machine measured, the model
// predicted pooling tokenize 4-10% faster, and it ran 2-8% slower. A pool
// the trace already had is measured, not priced, and needs only kGain.
constexpr double kPoolGain = 0.15;

// A stage on one thread busy this share of it at the predicted rate gets a
// second thread as a hedge when the model says that costs under kGain: at
// half busy, a queue in front of one server already waits as long as an
// element takes (M/M/1), and a cost under-estimated by 2x makes it the
// bottleneck.
constexpr double kHedgeBusy = 0.5;

struct SearchResult {
  bool cache = false;
  bool kept_as_given = false;
  double given = 0;
  double with_cache = 0;
  double without_cache = 0;
};

// Moving `k` from `from` to `to` threads makes a stage the trace ran
// inline a pool.
bool AddsPool(const Knob& k, int from, int to) { return k.current == 1 && from == 1 && to >= 2; }

// Whether a slow run of `node`'s elements in `program` can stall other
// threads: its input or consumer runs on threads other than its own, or
// its own are several (a pool's workers waiting on its input lock). On
// one thread shared with both sides, it only takes its time, once.
StatusOr<bool> CanStallOthers(const schema::Pipeline& program, const std::string& node) {
  auto graph = ProgramGraph::Build(program, "the rewritten pipeline");
  if (!graph.ok()) return Status::Internal(graph.status().message());
  const int i = graph->Find(node);
  if (i < 0) return false;
  const analysis::ThreadGroups tg = analysis::BuildThreadGroups(*graph);
  const int own = tg.group_of[i];
  if (own < 0 || tg.groups[own].threads > 1) return own >= 0;
  auto elsewhere = [&](int other) { return tg.group_of[other] >= 0 && tg.group_of[other] != own; };
  return std::any_of(graph->inputs(i).begin(), graph->inputs(i).end(), elsewhere) ||
         std::any_of(graph->consumers(i).begin(), graph->consumers(i).end(), elsewhere);
}

// A knob the search moves: it has work, and it does not wait (a waiting
// stage's threads come from Little's law, AddWaitThreads).
bool Searchable(const Knob& k) { return k.active && k.cost > 0 && k.wait_threads == 0; }

// Hill-climbs the knobs' integer parallelism from the rounded plan with
// `predict(pipeline, cached)`: each step takes the best single move (a
// knob one thread up or down, down to inline) that gains kGain, under the
// core budget; then gives back every thread the model says gains nothing.
// With `cache_choice`, does so with and without the plan's cache and
// keeps the cache only if it gains. Finally compares with the pipeline as
// given, which wins unless beaten by kGain. Sets the knobs' parallelism.
template <typename Predict, typename PredictWorst>
StatusOr<SearchResult> SearchParallelism(const ProgramGraph& graph, std::vector<Knob>& knobs, int budget,
                                         bool cache_choice, bool cached_as_given, const analysis::Plan& plan,
                                         Predict&& predict, PredictWorst&& predict_worst) {
  auto build = [&](const std::vector<int>& par, bool insert_cache) {
    schema::Pipeline p = graph.program();
    for (size_t j = 0; j < knobs.size(); ++j) {
      schema::Node* node = p.mutable_nodes(knobs[j].node);
      if (knobs[j].op->has_function() && par[j] > knobs[j].op->cycle_length(*node)) {
        knobs[j].op->set_cycle_length(node, par[j]);
      }
      knobs[j].op->set_parallelism(node, par[j]);
    }
    if (insert_cache) {
      InsertAbove(&p, plan.cache_node, PlanCacheNode(p, plan));
    }
    return p;
  };
  auto holds = [&](const std::vector<int>& par) {
    int t = 0;
    for (size_t j = 0; j < knobs.size(); ++j) {
      const int p = par[j] - knobs[j].wait_threads;
      t += par[j] > 1 && p > 1 ? p : 0;
    }
    return t;
  };
  std::vector<int> start;
  for (const auto& k : knobs) start.push_back(k.parallelism);

  struct Best {
    std::vector<int> par;
    double x = 0;
  };
  auto climb = [&](bool cached) -> StatusOr<Best> {
    const bool insert = cached && cache_choice;
    Best best{start, 0};
    PLUMBER_ASSIGN_OR_RETURN(best.x, predict(build(best.par, insert), cached));
    // Each step moves one knob: a few dozen steps cover any plausible
    // distance from the rounded plan.
    for (int step = 0; step < 32; ++step) {
      std::optional<Best> move;
      for (size_t j = 0; j < knobs.size(); ++j) {
        if (!Searchable(knobs[j])) continue;
        for (int delta : {+1, -1}) {
          std::vector<int> q = best.par;
          q[j] += delta;
          if (q[j] < 1 || q[j] > knobs[j].max_threads) continue;
          if (delta > 0 && holds(q) > std::max(budget, holds(best.par))) continue;
          PLUMBER_ASSIGN_OR_RETURN(double x, predict(build(q, insert), cached));
          const bool adds_pool = AddsPool(knobs[j], best.par[j], q[j]);
          const double gain = adds_pool ? kPoolGain : kGain;
          if (!(x > best.x * (1 + gain) && (!move || x > move->x))) continue;
          if (adds_pool) {
            // A new pool must gain at the hand-off prices' worst trial too
            // (HandoffPrice::AtWorst): a decision the calibration's noise
            // can flip is not one.
            PLUMBER_ASSIGN_OR_RETURN(double worst, predict_worst(build(q, insert), cached));
            if (!(worst > best.x * (1 + gain))) continue;
          }
          move = Best{q, x};
        }
      }
      if (!move) break;
      best = std::move(*move);
    }
    // Threads the model says gain nothing go back, down to what the
    // pipeline had: each may cost at most kGain of the peak, in all.
    const double peak = best.x;
    for (size_t j = 0; j < knobs.size(); ++j) {
      if (!Searchable(knobs[j])) continue;
      while (best.par[j] > std::max(1, knobs[j].current)) {
        std::vector<int> q = best.par;
        --q[j];
        PLUMBER_ASSIGN_OR_RETURN(double x, predict(build(q, insert), cached));
        // Back to inline, the stage gives up a pool it must gain kPoolGain
        // by, at the worst prices too.
        if (AddsPool(knobs[j], q[j], best.par[j])) {
          if (x * (1 + kPoolGain) < peak) {
            PLUMBER_ASSIGN_OR_RETURN(double worst, predict_worst(build(best.par, insert), cached));
            if (x * (1 + kPoolGain) < worst) break;
          }
        } else if (x < peak * (1 - kGain)) {
          break;
        }
        best = Best{q, x};
      }
    }
    return best;
  };

  SearchResult r;
  Best chosen;
  if (cache_choice) {
    PLUMBER_ASSIGN_OR_RETURN(Best with, climb(true));
    PLUMBER_ASSIGN_OR_RETURN(Best without, climb(false));
    r.with_cache = with.x;
    r.without_cache = without.x;
    r.cache = with.x > without.x * (1 + kGain);
    chosen = r.cache ? with : without;
  } else {
    PLUMBER_ASSIGN_OR_RETURN(chosen, climb(cached_as_given));
  }
  PLUMBER_ASSIGN_OR_RETURN(r.given, predict(graph.program(), cached_as_given));
  if (!(chosen.x > r.given * (1 + kGain))) {
    r.kept_as_given = true;
    r.cache = false;
    for (auto& k : knobs) {
      k.parallelism = k.current;
      k.wait_threads = 0;
      k.why = "kept as given";
    }
    return r;
  }
  // Hedging (the paper, section 6): a stage left on one thread that is
  // busy most of it stalls its neighbours on other threads whenever a run
  // of slow elements comes, which mean costs do not show, or when its cost
  // was under-estimated. When the model predicts a second thread within
  // kGain of the best, it costs almost nothing, so the stage gets it. A
  // stage on one thread with its input and its consumer stalls nothing: a
  // slow element there costs the thread its time once, which the mean
  // counts.
  const bool cached = cache_choice ? r.cache : cached_as_given;
  std::vector<bool> hedged(knobs.size(), false);
  for (size_t j = 0; j < knobs.size(); ++j) {
    const Knob& k = knobs[j];
    if (!Searchable(k) || chosen.par[j] != 1 || k.max_threads < 2 || chosen.x * k.service < kHedgeBusy) continue;
    PLUMBER_ASSIGN_OR_RETURN(bool stalls, CanStallOthers(build(chosen.par, cache_choice && cached), k.name));
    if (!stalls) continue;
    std::vector<int> q = chosen.par;
    q[j] = 2;
    if (holds(q) > std::max(budget, holds(chosen.par))) continue;
    PLUMBER_ASSIGN_OR_RETURN(double x, predict(build(q, cache_choice && cached), cached));
    if (x < chosen.x * (1 - kGain) || x < r.given) continue;
    hedged[j] = true;
    chosen.par = std::move(q);
  }
  for (size_t j = 0; j < knobs.size(); ++j) {
    Knob& k = knobs[j];
    if (hedged[j]) {
      // The search gave its threads back to one; the hedge gives a second.
      k.why += "; searching whole threads, one is enough by the model, but as a hedge it gets two: busy " +
               FormatSignificant(100 * chosen.x * k.service, 3) +
               "% of one thread, it would stall what follows on a run of slow elements, and the model predicts "
               "two within 1% of the best";
      k.parallelism = chosen.par[j];
      continue;
    }
    if (chosen.par[j] == k.parallelism) continue;
    const std::string n = std::to_string(chosen.par[j]);
    if (chosen.par[j] > k.parallelism) {
      k.why += "; searching whole threads, the model predicts more with " + n;
    } else if (chosen.par[j] == 1) {
      k.why += "; searching whole threads, the model predicts as much or more inline (no hand-offs to pay)";
    } else {
      k.why += "; searching whole threads, the model predicts under 1% from threads past " + n;
    }
    k.parallelism = chosen.par[j];
  }
  return r;
}

}  // namespace

StatusOr<RewriteResult> Rewrite(const analysis::Analysis& analysis, const RewriteOptions& options) {
  const ProgramGraph& graph = analysis.program_graph();
  RewriteResult result;
  if (!analysis.plan)
    return Status::FailedPrecondition("the analysis has no plan to apply: analyse with AnalysisOptions::solve_programs");
  result.plan = *analysis.plan;
  const analysis::Plan& plan = result.plan;
  result.pipeline = graph.program();
  schema::Pipeline& out = result.pipeline;

  // ---- Predicted throughput as traced -----------------------------------
  // Set below to the model's value for the pipeline as given, so that
  // before and after come from one model (the analysis' as-traced figure
  // is its own LP, which prices no hand-offs).
  result.predicted_before = analysis.as_traced.throughput.value_or(plan.throughput);

  // What each change buys. The emitted pipeline is modelled with the
  // plan's costs (the stages under the cache idle) and ceiling; before a
  // new cache goes in, every stage works at its traced cost and the plan
  // without a cache bounds it.
  bool already_cached = false;
  for (int i = 0; i < graph.size(); ++i) {
    const auto& in = graph.inputs(i);
    if (graph.op(i).caches &&
        (graph.name(i) == plan.cache_node || (in.size() == 1 && graph.name(in[0]) == plan.cache_node))) {
      already_cached = true;
    }
  }
  const EmittedModel model(analysis, plan, options.learned);
  std::set<LearnedUse> learned_used;
  // The cache the plan places, if the model says it pays (decided below).
  bool adds_cache = !plan.cache_node.empty() && !already_cached;
  bool before_new_cache = adds_cache;  // while the cache the plan adds is not in yet
  auto predict = [&](const schema::Pipeline& p, bool cached) { return model.Predict(p, cached, &learned_used); };
  const EmittedModel worst_prices = model.AtWorstPrices();
  auto predict_worst = [&](const schema::Pipeline& p, bool cached) { return worst_prices.Predict(p, cached); };
  auto predict_now = [&]() -> StatusOr<double> { return predict(out, !before_new_cache); };
  PLUMBER_ASSIGN_OR_RETURN(result.predicted_before, predict_now());
  // Stamps the changes made since the last call with the model's value now.
  // Each value builds the program's graph: per knob on programs of up to
  // kStampEachKnobNodes nodes, else once per phase (parallelism, cache,
  // prefetch), so a program of thousands of knobs is not rebuilt thousands
  // of times.
  size_t stamped = 0;
  const bool small_program = graph.size() <= kStampEachKnobNodes;
  auto stamp = [&](bool phase_end) -> Status {
    if (stamped == result.changes.size() || (!phase_end && !small_program)) return Status::OK();
    PLUMBER_ASSIGN_OR_RETURN(double x, predict_now());
    for (; stamped < result.changes.size(); ++stamped) result.changes[stamped].predicted_after = x;
    return Status::OK();
  };

  // ---- Parallelism ---------------------------------------------------------
  std::vector<Knob> knobs;
  std::unordered_map<std::string, int> knob_of;
  for (int i = 0; i < graph.size(); ++i) {
    if (!graph.op(i).parallelizable()) continue;
    Knob k;
    k.node = i;
    k.name = graph.name(i);
    k.op = &graph.op(i);
    k.current = NodeParallelism(graph.node(i));
    knob_of[k.name] = static_cast<int>(knobs.size());
    knobs.push_back(k);
  }
  for (const auto& stage : plan.stages) {
    auto it = knob_of.find(stage.interleave.empty() ? stage.name : stage.interleave);
    if (it == knob_of.end()) continue;  // a sequential stage: one core, nothing to set
    Knob& k = knobs[it->second];
    if (!stage.active) continue;
    k.active = true;
    k.cost += stage.cpu_seconds_per_minibatch;
    k.service += stage.service_seconds_per_minibatch;
    k.cores += stage.cores;
    k.max_threads = std::min(k.max_threads, stage.max_threads);
  }
  // What validation accepts bounds every knob, so that a budget of more
  // cores than any pipeline may use (--cores 10000) neither emits a
  // pipeline its own check refuses nor hands out spare cores one by one
  // for as long as the budget lasts.
  for (auto& k : knobs) k.max_threads = std::min(k.max_threads, static_cast<double>(kMaxParallelism));
  AssignParallelism(knobs, analysis.cores);
  AddWaitThreads(knobs, plan.unbounded ? 0.0 : plan.throughput);

  // The LP's answer rounded is a start, not the answer: the model prices
  // each hand-off the rounding adds, so the rewrite searches the integer
  // neighbourhood with it (SearchParallelism) and keeps a cache only if the
  // model says it pays. On programs of over kStampEachKnobNodes nodes each
  // evaluation builds a large graph, and the rounded plan stands.
  if (small_program) {
    PLUMBER_ASSIGN_OR_RETURN(SearchResult searched, SearchParallelism(graph, knobs, analysis.cores, adds_cache,
                                                                      !before_new_cache, plan, predict,
                                                                      predict_worst));
    if (adds_cache && !searched.cache) {
      if (!searched.kept_as_given) {
        result.notes.push_back("no cache after " + plan.cache_node + ": the model predicts " +
                               FormatNumber(searched.without_cache) + " minibatches/s without it and " +
                               FormatNumber(searched.with_cache) + " with it");
      }
      adds_cache = false;  // and before_new_cache stays true: the traced costs hold
    }
    if (searched.kept_as_given) {
      result.notes.push_back("the pipeline's parallelism is kept as given: the model predicts no configuration it "
                             "searched above the " +
                             FormatNumber(searched.given) + " minibatches/s of the pipeline as given");
    }
  }

  for (const auto& k : knobs) {
    schema::Node* node = out.mutable_nodes(k.node);
    int p = k.parallelism;
    std::string why = k.why;
    if (k.op->has_function()) {
      // Latency-bound storage wants more files in flight than CPU needs
      // threads: the extra readers wait on I/O, so they sit outside the
      // core budget, and the result says so.
      const int readers =
          plan.read_parallelism ? static_cast<int>(std::min<int64_t>(*plan.read_parallelism, kMaxParallelism)) : 0;
      if (readers > p && k.wait_threads == 0) {
        result.io_readers += readers - p;
        why += "; " + FormatCount(readers - p, "more reader", "more readers") +
               " for the bandwidth curve (I/O threads, outside the core budget)";
        p = readers;
      }
      const int cycle = k.op->cycle_length(*node);
      if (p > cycle) {
        k.op->set_cycle_length(node, p);
        result.changes.push_back({k.name, "cycle_length", std::to_string(cycle), std::to_string(p),
                                  "room for " + FormatCount(p, "file", "files") + " read at once"});
      }
    }
    result.parallel_cores += Holds(k);
    result.io_readers += k.wait_threads;
    if (p != k.current) {
      if (learned_used.count({k.name, p})) {
        why += "; at " + FormatCount(p, "thread", "threads") + " it costs what it measured there in an earlier run";
      }
      result.changes.push_back({k.name, "parallelism", std::to_string(k.current), std::to_string(p), why});
      k.op->set_parallelism(node, p);
    }
    PLUMBER_RETURN_IF_ERROR(stamp(/*phase_end=*/false));
  }
  PLUMBER_RETURN_IF_ERROR(stamp(/*phase_end=*/true));

  // ---- Cache -----------------------------------------------------------
  // The output node; a cache inserted above it becomes the output.
  std::string root = graph.name(graph.output());
  result.memory_bytes = static_cast<double>(analysis.buffered_bytes);
  if (!plan.cache_node.empty()) {
    if (adds_cache) {
      before_new_cache = false;
      schema::Node cache = PlanCacheNode(out, plan);
      int removed = 0;
      for (const auto& s : plan.stages) removed += s.active ? 0 : 1;
      const std::string where = plan.cache_file.empty() ? "in memory" : "in the file " + plan.cache_file;
      const std::string fits = plan.cache_file.empty()
                                   ? "fits the budget of " + units::FormatBytes(plan.cache_budget_bytes)
                                   : "does not fit in memory (" + units::FormatBytes(plan.cache_budget_bytes) +
                                         ") but fits on disk, and reading it back beats recomputing it";
      result.changes.push_back({cache.name(), "cache", "", where + " after " + plan.cache_node,
                                "the output of " + plan.cache_node + " (" + units::FormatBytes(plan.cache_bytes) +
                                    ") " + fits + "; the " + FormatCount(removed, "node", "nodes") + " below it do" +
                                    (removed == 1 ? "es" : "") + " no work after the first epoch"});
      if (plan.cache_node == root) root = cache.name();
      InsertAbove(&out, plan.cache_node, std::move(cache));
    }
    PLUMBER_RETURN_IF_ERROR(stamp(/*phase_end=*/true));
    if (plan.cache_file.empty() && (adds_cache || already_cached)) result.memory_bytes += plan.cache_bytes;
  }

  // ---- Prefetch at the output --------------------------------------------
  if (options.allow_prefetch) {
    const analysis::NodeModel* root_model = analysis.Find(root);
    // A consumer's wait is counted when its call returns, so one begun
    // before the window opened can put the share a little above 1.
    const double idle = std::clamp(analysis.consumer_wait_fraction.value_or(0.0), 0.0, 1.0);
    // Proportional to the idleness, as the paper does: double buffering when
    // the consumer never waited, up to 16 batches when it waited always.
    int buffer = std::clamp(static_cast<int>(std::ceil(2 + 14 * idle)), 2, 16);
    const double element_bytes = root_model && root_model->bytes_per_element ? *root_model->bytes_per_element : 0.0;
    // Never let the buffer push the pipeline past the memory it may use.
    // (An imported dump may not record the memory at all: then nothing is
    // known to cap it.)
    while (analysis.memory_bytes > 0 && buffer > 1 &&
           result.memory_bytes + buffer * element_bytes > static_cast<double>(analysis.memory_bytes)) {
      --buffer;
    }
    // Nodes of the traced program keep their index in `out`; a cache
    // inserted above the output is never a prefetch.
    // An imported program may end in TensorFlow's own wrapper (an opaque
    // node of one input, e.g. Root): the prefetch the user wrote is under it.
    int output = graph.output();
    if (root == graph.name(output)) {
      while (graph.op(output).imported_only && graph.inputs(output).size() == 1) output = graph.inputs(output)[0];
    }
    const OpDef& output_op = graph.op(output);
    schema::Node* existing = (root == graph.name(graph.output()) && output_op.prefetches) ? out.mutable_nodes(output)
                                                                                          : nullptr;
    const std::string why = (analysis.consumer_wait_fraction
                                 ? "the consumer waited " +
                                       (idle >= 0.995 ? std::string("all") : FormatFixed(100 * idle, 0) + "%") +
                                       " of the window; "
                                 : std::string("the consumer's waiting is not recorded; double buffering: ")) +
                            std::to_string(buffer) + " batches of " + units::FormatBytes(element_bytes) +
                            " keep it fed";
    if (existing != nullptr) {
      const int64_t had = output_op.buffer_size(*existing);
      if (had < buffer) {
        result.changes.push_back({graph.name(output), "buffer_size", std::to_string(had), std::to_string(buffer), why});
        output_op.set_buffer_size(existing, buffer);
      }
      result.memory_bytes += std::max<int64_t>(buffer, had) * element_bytes;
    } else if (root_model != nullptr) {
      // A new prefetch gives the pipeline above it a thread of its own and
      // pays a hand-off per batch: added only where the model says the
      // thread gains (a consumer with a step to overlap, or a pipeline
      // whose groups it splits), on programs small enough to ask it.
      schema::Node prefetch = MakePrefetchNode(UniqueName(out, root + "_prefetch"), root, buffer);
      schema::Pipeline with_prefetch = out;
      InsertAbove(&with_prefetch, root, prefetch);
      // It must gain kGain, as every thread the rewrite adds. plumber's
      // own run without --step-time measured the pipeline alone: nothing
      // for a prefetch to overlap, so it gains only by splitting a thread
      // group. (Added regardless once, the paper's double buffering made
      // the text example's rewrite, tiny ops and three threads on two cores
      // already, 0.86x the naive pipeline, the model pricing it at 1%.) An
      // imported dump comes from training whose step it does not record:
      // there double buffering stands unless the model says it costs.
      const bool step_known = analysis.header.options().step_time_seconds() > 0;
      const bool step_unrecorded = !step_known && !analysis.imported_from.empty();
      bool pays = true;
      std::string gain;
      if (small_program) {
        PLUMBER_ASSIGN_OR_RETURN(double without, predict_now());
        PLUMBER_ASSIGN_OR_RETURN(double with, predict(with_prefetch, !before_new_cache));
        pays = step_unrecorded ? with >= without * (1 - kGain) : with > without * (1 + kGain);
        if (!step_unrecorded) {
          gain = "; the model predicts " + FormatNumber(with) + " minibatches/s with it, " +
                 FormatNumber(without) + " without";
        }
        if (!pays) {
          result.notes.push_back("no prefetch at the output: the model predicts " + FormatNumber(with) +
                                 " minibatches/s with it and " + FormatNumber(without) + " without" +
                                 (step_known || step_unrecorded
                                      ? ""
                                      : " (the run had no model step for it to overlap: `plumber run --step-time`)"));
        }
      }
      if (pays) {
        result.changes.push_back({prefetch.name(), "prefetch", "", "buffer_size " + std::to_string(buffer), why + gain});
        out = std::move(with_prefetch);
        result.memory_bytes += buffer * element_bytes;
      }
    }
  }

  auto problems = ValidatePipeline(out);
  if (!problems.empty()) return Status::Internal("the rewritten pipeline is invalid: " + problems.front().ToString());

  // ---- Predicted throughput after -------------------------------------------
  // The model of exactly the emitted pipeline.
  PLUMBER_ASSIGN_OR_RETURN(result.predicted_after, predict_now());
  result.predicted_unbounded = plan.unbounded && result.predicted_after >= plan.throughput * (1 - 1e-9);
  // The prefetch, the last change if any, is priced by that same model.
  for (; stamped < result.changes.size(); ++stamped) result.changes[stamped].predicted_after = result.predicted_after;

  for (const auto& [stage, p] : learned_used) {
    result.learned.push_back({stage, p});
    const MeasuredCost* c = options.learned->Find(stage, p);
    const analysis::NodeModel* m = analysis.Find(stage);
    const int at = graph.Find(stage);
    if (c == nullptr || m == nullptr || m->visit_ratio <= 0 || at < 0) continue;
    result.notes.push_back(stage + " at " + FormatCount(p, "thread", "threads") +
                           " priced as measured in an earlier run: " +
                           units::FormatSeconds(c->cpu_seconds_per_element) + " CPU per element (" +
                           units::FormatSeconds(m->cpu_seconds_per_minibatch / m->visit_ratio) + " as traced at " +
                           std::to_string(StageParallelism(graph, at)) + ")");
  }
  return result;
}

}  // namespace plumber::rewrite
