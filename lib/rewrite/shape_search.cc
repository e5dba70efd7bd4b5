// The greedy, bounded shape search; see shape_search.h.
#include "rewrite/shape_search.h"

#include <algorithm>
#include <optional>
#include <set>

#include "analysis/analyze.h"
#include "analysis/handoff_price.h"

namespace plumber::rewrite {
namespace {

std::string Key(const ShapeChange& c) { return std::to_string(static_cast<int>(c.kind)) + c.upper + "/" + c.lower; }

// A planted change applies where its nodes are adjacent as it needs.
bool Applies(const ProgramGraph& g, const ShapeChange& c) {
  const int upper = g.Find(c.upper), lower = g.Find(c.lower);
  return upper >= 0 && lower >= 0 && g.inputs(upper).size() == 1 && g.inputs(upper)[0] == lower;
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
  while (static_cast<int>(report.applied.size()) < options.max_changes && report.priced < options.max_priced) {
    std::vector<ShapeChange> changes = LegalShapeChanges(*current.graph, options.legality);
    for (const ShapeChange& c : options.planted) {
      if (Applies(*current.graph, c)) changes.push_back(c);
    }
    std::vector<Candidate> priced;
    report.below_threshold = 0;
    for (const ShapeChange& c : changes) {
      if (dropped.count(Key(c)) || report.priced >= options.max_priced) continue;
      auto reshaped = Reshape(current, c, price);
      if (!reshaped.ok()) continue;
      auto a = analysis::Analyze(*reshaped, analysis_options);
      if (!a.ok()) continue;
      auto r = Rewrite(*a, rewrite_options);
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
      if (options.verify) {
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
    current = std::move(taken->trace);
    best = {std::move(*taken->analysis), std::move(taken->rewrite)};
  }
  best.rewrite.predicted_before = as_traced;
  best.rewrite.shape = std::move(report);
  return best;
}

}  // namespace plumber::rewrite
