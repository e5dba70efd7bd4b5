// Shape changes priced on the trace itself: a move or a fusion is applied
// to the traced program, and the traced counters move with the work, as if
// the reshaped program had run. A map below a filter that keeps a quarter
// of the elements did a quarter of its traced work; a filter above a decode
// tests the encoded elements, as many as before; two fused maps do both
// maps' work on one node, less the hand-off between them; a filter fused
// into a map adds its work to the map's and the map hands over only what
// it keeps. The reshaped
// trace is then analysed and rewritten as any trace is, so the one model
// (and the one evaluator under it) prices every candidate shape, and its
// prediction for the emitted pipeline is the evaluator's.
//
// What the counters cannot tell is assumed: a filter keeps the same share
// of the elements wherever it stands (its measured selectivity), and a map
// costs the same per element over the subset a filter keeps.
#pragma once

#include <string>
#include <vector>

#include "analysis/handoff_price.h"
#include "analysis/trace_source.h"
#include "base/status.h"
#include "pipeline/legal_moves.h"
#include "pipeline/program_graph.h"
#include "rewrite/measured_costs.h"

namespace plumber::rewrite {

enum class ShapeKind {
  kMoveAbove,  // `upper` moves above its input `lower`
  kFuseMaps,   // map `lower` fuses into map `upper`, which keeps its name
  kFuseFilter, // filter `upper` fuses into map `lower`, which keeps its name
};

struct ShapeChange {
  ShapeKind kind = ShapeKind::kMoveAbove;
  std::string upper, lower;
  // The legality rule's reason (pipeline/legal_moves.h).
  std::string reason;
  // "filter above map", "take above map", "shuffle above map", "map fusion",
  // "map and filter fusion": the rule, as the reports name it.
  std::string rule;
  // An imported program's move: possible where `reason`'s conditions hold,
  // which plumber cannot check (ImportedMoveConditions).
  bool conditional = false;
};

// A change the shape search made, with what the model predicts for the
// rewrite (knobs tuned) without it and with it, and what the run of both
// pipelines found ("the first 16 elements are the same, in order").
struct AppliedShape {
  ShapeChange change;
  double predicted_before = 0;
  double predicted_after = 0;
  std::string verification;
};

// A change the search would have made and did not: verification found
// another output, or the run could not be made.
struct DroppedShape {
  ShapeChange change;
  double predicted_after = 0;
  std::string why;
};

struct ShapeReport {
  std::vector<AppliedShape> applied;
  std::vector<DroppedShape> dropped;
  // The knob rewrite of the traced shape, for comparison; 0 when the
  // search did not run.
  double predicted_knobs_only = 0;
  // Candidate shapes priced (each one analysis and knob rewrite).
  int priced = 0;
  // Changes priced in the search's last round that gained less than its
  // threshold.
  int below_threshold = 0;
};

// "move 'keep' above 'decode'", "fuse 'decode' into 'augment'".
std::string DescribeChange(const ShapeChange& change);

// Every change the rules allow on `g`, in program order: each node that
// may move above its input, each pair of adjacent maps that may fuse, each
// filter that may fuse into the map below it.
std::vector<ShapeChange> LegalShapeChanges(const ProgramGraph& g, const LegalityOptions& options);

// The moves of a program imported from tf.data: each filter, take, skip or
// shuffle directly above a map, with the conditions the user must check.
std::vector<ShapeChange> ImportedShapeChanges(const ProgramGraph& g);

// Drops from `costs` what was measured of the nodes `change` touches: a
// moved or fused node does other work under its old name.
void ForgetChanged(const ShapeChange& change, MeasuredCosts* costs);

// `change` applied to a pipeline definition (rewrite/shape_edits.h):
// InvalidArgument when the nodes are not where it needs them; legality is
// not checked here.
Status ApplyShapeChange(schema::Pipeline* program, const ShapeChange& change);

// `trace` with `change` applied to its program and its window's counters
// moved to where the change puts the work. `price` prices the hand-off a
// fusion removes (the trace's calibration). InvalidArgument when the nodes
// are not where the change needs them; legality is not checked here.
StatusOr<analysis::LoadedTrace> Reshape(const analysis::LoadedTrace& trace, const ShapeChange& change,
                                        const analysis::HandoffPrice& price);

}  // namespace plumber::rewrite
