// The greedy, bounded shape search; see shape_search.h.
#include "rewrite/shape_search.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "analysis/analyze.h"
#include "analysis/handoff_price.h"
#include "analysis/thread_groups.h"
#include "pipeline/op_table.h"

namespace plumber::rewrite {
namespace {

std::string Key(const ShapeChange& c) { return std::to_string(static_cast<int>(c.kind)) + c.upper + "/" + c.lower; }

// A planted change applies where its nodes are adjacent as it needs.
bool Applies(const ProgramGraph& g, const ShapeChange& c) {
  const int upper = g.Find(c.upper), lower = g.Find(c.lower);
  return upper >= 0 && lower >= 0 && g.inputs(upper).size() == 1 && g.inputs(upper)[0] == lower;
}

// CPU per minibatch a change spares at the current shape, from the
// current analysis alone: what a move above a map spares the map (the share
// of its elements the mover drops), what a fusion spares in hand-offs (the
// lower map's, when its pool hands over), what a filter fused into its map
// takes off the thread it ran on, and for a shuffle, whose gain is
// memory for a cache, more than anything else (there is one per shuffle).
// It orders the candidates; the model prices those it picks.
double QuickSaving(const analysis::Analysis& a, const analysis::ThreadGroups& threads, const ShapeChange& c,
                   const analysis::HandoffPrice& price) {
  const ProgramGraph& g = a.program_graph();
  const int upper = g.Find(c.upper), lower = g.Find(c.lower);
  const analysis::NodeModel* u = a.Find(c.upper);
  const analysis::NodeModel* l = a.Find(c.lower);
  if (upper < 0 || lower < 0 || u == nullptr || l == nullptr || l->visit_ratio <= 0) return 0;
  if (c.kind == ShapeKind::kMoveAbove) {
    if (g.op(upper).moves_above_map == MovesAboveMap::kPermutes) return std::numeric_limits<double>::infinity();
    return (1 - std::clamp(u->visit_ratio / l->visit_ratio, 0.0, 1.0)) * l->cpu_seconds_per_minibatch;
  }
  // A fused filter's work joins the map's, which a pool can spread over
  // cores, and the map hands over only what it keeps.
  if (c.kind == ShapeKind::kFuseFilter) {
    const double dropped = std::max(l->visit_ratio - u->visit_ratio, 0.0);
    return u->cpu_seconds_per_minibatch +
           (threads.HandsOff(lower) ? price.MinibatchSeconds(dropped, l->bytes_per_element.value_or(0),
                                                             l->cpu_seconds_per_minibatch)
                                    : 0);
  }
  if (!threads.HandsOff(lower)) return 0;
  return price.MinibatchSeconds(l->visit_ratio, l->bytes_per_element.value_or(0),
                                std::max(l->cpu_seconds_per_minibatch, l->service_seconds_per_minibatch));
}

struct Candidate {
  ShapeChange change;
  analysis::LoadedTrace trace;
  std::optional<analysis::Analysis> analysis;
  RewriteResult rewrite;
};

}  // namespace

StatusOr<ShapeSearchResult> SearchShapes(const analysis::LoadedTrace& trace, analysis::Analysis traced,
                                         const analysis::AnalysisOptions& analysis_options,
                                         const RewriteOptions& rewrite_options, const ShapeSearchOptions& options) {
  auto knobs = Rewrite(traced, rewrite_options);
  if (!knobs.ok()) return knobs.status();
  ShapeReport report;
  report.predicted_knobs_only = knobs->predicted_after;
  const double as_traced = knobs->predicted_before;
  ShapeSearchResult best{std::move(traced), std::move(*knobs)};
  const analysis::HandoffPrice price = analysis::HandoffPriceOf(trace.header.machine());
  analysis::LoadedTrace current = trace;
  std::set<std::string> dropped;
  // Costs the optimize loop measured in earlier steps price a node by its
  // name; a node a change moves or fuses does other work under that name,
  // so its costs are left out of the candidates' pricing.
  std::optional<MeasuredCosts> learned;
  if (rewrite_options.learned != nullptr) learned = *rewrite_options.learned;
  auto pricing = [&](const ShapeChange& c, MeasuredCosts* pruned) {
    RewriteOptions o = rewrite_options;
    if (learned) {
      *pruned = *learned;
      ForgetChanged(c, pruned);
      o.learned = pruned;
    }
    return o;
  };
  while (static_cast<int>(report.applied.size()) < options.max_changes && report.priced < options.max_priced &&
         (best.analysis.program_graph().size() <= options.large_program_nodes ||
          report.priced < options.max_priced_large)) {
    // An imported program's functions are opaque: its moves are the ones
    // the user can check, given as advice.
    std::vector<ShapeChange> changes = trace.header.has_imported() ? ImportedShapeChanges(*current.graph)
                                                                   : LegalShapeChanges(*current.graph, options.legality);
    for (const ShapeChange& c : options.planted) {
      if (Applies(*current.graph, c)) changes.push_back(c);
    }
    // Each candidate priced is an analysis with its programs and a knob
    // rewrite, seconds on a program of thousands of nodes: there, the
    // quick saving picks the few that are.
    const bool large = current.graph->size() > options.large_program_nodes;
    const int max_priced = large ? std::min(options.max_priced, options.max_priced_large) : options.max_priced;
    std::erase_if(changes, [&](const ShapeChange& c) { return dropped.count(Key(c)) != 0; });
    std::vector<double> saving;
    const analysis::ThreadGroups threads = analysis::BuildThreadGroups(best.analysis.program_graph());
    for (const ShapeChange& c : changes) saving.push_back(QuickSaving(best.analysis, threads, c, price));
    std::vector<size_t> order(changes.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return saving[x] > saving[y]; });
    std::vector<Candidate> priced;
    report.below_threshold = 0;
    int this_round = 0;
    for (const size_t k : order) {
      const ShapeChange& c = changes[k];
      if (report.priced >= max_priced || this_round >= options.max_priced_per_round) break;
      ++this_round;
      auto reshaped = Reshape(current, c, price);
      if (!reshaped.ok()) continue;
      auto a = analysis::Analyze(*reshaped, analysis_options);
      if (!a.ok()) continue;
      MeasuredCosts pruned;
      auto r = Rewrite(*a, pricing(c, &pruned));
      ++report.priced;
      if (!r.ok()) continue;
      priced.push_back({c, std::move(*reshaped), std::move(*a), std::move(*r)});
    }
    std::sort(priced.begin(), priced.end(), [](const Candidate& x, const Candidate& y) {
      return x.rewrite.predicted_after > y.rewrite.predicted_after;
    });
    const double now = best.rewrite.predicted_after;
    Candidate* taken = nullptr;
    for (Candidate& c : priced) {
      // Below the threshold the model cannot tell a gain from its noise;
      // a change that gains nothing is a change the user must read for
      // nothing.
      if (!(c.rewrite.predicted_after >= now * (1 + options.min_gain))) {
        ++report.below_threshold;
        continue;
      }
      if (taken != nullptr) continue;
      std::string verification = options.unverified;
      if (options.verify && !c.change.conditional) {
        auto v = options.verify(trace.graph->program(), c.trace.graph->program());
        if (!v.ok() || !v->same) {
          dropped.insert(Key(c.change));
          report.dropped.push_back({c.change, c.rewrite.predicted_after,
                                    !v.ok() ? "could not be verified: " + v.status().ToString()
                                            : "rule '" + c.change.rule + "' failed verification: " + v->what});
          continue;
        }
        verification = v->what;
      }
      report.applied.push_back({c.change, now, c.rewrite.predicted_after, verification});
      taken = &c;
    }
    if (taken == nullptr) break;
    if (learned) ForgetChanged(taken->change, &*learned);
    current = std::move(taken->trace);
    best = {std::move(*taken->analysis), std::move(taken->rewrite)};
  }
  best.rewrite.predicted_before = as_traced;
  best.rewrite.shape = std::move(report);
  return best;
}

}  // namespace plumber::rewrite
