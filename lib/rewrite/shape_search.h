// The shape search: which moves and fusions (reshape.h, legal by the rules
// of pipeline/legal_moves.h) to make before the knobs are tuned. Greedy and
// bounded: each round prices the legal changes of the current shape (those
// that spare most first, up to the bounds below) by reshaping the trace,
// analysing it and tuning its knobs (rewriter.h), and
// keeps the change whose rewrite the model predicts fastest, when it gains
// at least `min_gain` over the rewrite without it and a run of both
// pipelines finds the same output. A change whose run differs is dropped
// and the round's next best is tried. So the search's figure is the knob
// rewrite's, on the one model, and never below the knob-only rewrite.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/trace_source.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/legal_moves.h"
#include "rewrite/reshape.h"
#include "rewrite/rewriter.h"

namespace plumber::rewrite {

// What a run of two pipelines found: `same`, and where not, how they
// differ. An error is the run's (a file that is not there).
struct ShapeVerdict {
  bool same = false;
  std::string what;  // "the first 16 elements are the same, in order", or the difference
};
using ShapeVerifier =
    std::function<StatusOr<ShapeVerdict>(const schema::Pipeline& traced, const schema::Pipeline& reshaped)>;

struct ShapeSearchOptions {
  LegalityOptions legality;
  // Least gain a change must bring over the rewrite without it.
  double min_gain = 0.01;
  // Bounds: candidate shapes priced in all and per round, changes made.
  // Candidates are priced in the order of the CPU they spare at the
  // current shape (a quick figure from its analysis), a shuffle first.
  int max_priced = 32;
  int max_priced_per_round = 8;
  int max_changes = 8;
  // Over this many nodes, a candidate's pricing (GLPK's programs and the
  // knob search on the whole program) takes seconds: at most
  // `max_priced_large` are priced in all.
  int large_program_nodes = 256;
  int max_priced_large = 2;
  // Runs the traced and the reshaped pipeline; null: changes are made
  // unverified (an imported trace has nothing to run) and say so.
  ShapeVerifier verify;
  // What the report says of a change made without `verify`.
  std::string unverified = "not verified: there is nothing to run";
  // Changes no rule allows, offered to the search as if one did: tests
  // plant an illegal move to see verification catch it.
  std::vector<ShapeChange> planted;
};

struct ShapeSearchResult {
  // The analysis of the final shape's trace (the traced one when nothing
  // changed), which the rewrite's figures rest on.
  analysis::Analysis analysis;
  RewriteResult rewrite;
};

// `trace` as loaded and `traced`, its analysis with `analysis_options`
// (solve_programs set), which each reshaped trace is analysed with; each
// shape's knobs are tuned with `rewrite_options`. The result's rewrite
// reports the traced pipeline's prediction as `predicted_before` and the
// changes in `shape`.
StatusOr<ShapeSearchResult> SearchShapes(const analysis::LoadedTrace& trace, analysis::Analysis traced,
                                         const analysis::AnalysisOptions& analysis_options,
                                         const RewriteOptions& rewrite_options, const ShapeSearchOptions& options);

}  // namespace plumber::rewrite
