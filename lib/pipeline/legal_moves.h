// Which changes of a pipeline's shape keep its output, decided from what
// each op's row declares (pipeline/op_table.h: what a dataset op keeps;
// pipeline/udf_table.h: what a UDF op reads, writes, and whether it is
// random or can fail). The reorder and fuse rewrite asks these before it
// prices a candidate; each rule is one function here with its reason, and
// anything no rule allows is refused: nothing crosses a shuffle, batch,
// repeat, interleave, cache or prefetch, and an imported op or a UDF op
// without a row never moves.
#pragma once

#include <string>

#include "pipeline/program_graph.h"

namespace plumber {

// A rule's answer, with the reason a report gives either way.
struct MoveVerdict {
  bool legal = false;
  std::string reason;
};

// What the user vouches for beyond the rows.
struct LegalityOptions {
  // The data is valid (every record parses and decodes): an op that fails
  // only on bad data counts as one that cannot fail. A filter moved above a
  // decode then keeps the output on this data, and on data with a corrupt
  // record the rewrite no longer stops where the original would (it drops
  // that record's failure with the record). `rewrite --assume-valid-data`.
  bool assume_valid_data = false;
};

// Whether node `upper` may move above its only input `lower`, which then
// reads what `upper` read. Rules:
//  - a filter above a map: the map is deterministic (its random draws
//    follow the element's index, which the filter would change), cannot
//    fail on bad data (the filter would hide failures on what it drops),
//    and writes nothing the predicate reads;
//  - a take above a map: the first n elements are the same elements with
//    the same indices, so even a random or failing map keeps its output;
//  - a skip above a map: as a filter, the skipped elements' indices shift
//    and their failures vanish, so the map must be deterministic and
//    unable to fail;
//  - a shuffle above a map: its draws depend on its seed and how many
//    elements it has buffered, never on what they hold, so it hands out
//    the same permutation of the map's inputs as of its outputs; the map
//    must be deterministic (its draws follow the index, which the shuffle
//    changes) and unable to fail (a bad record would stop the pipeline at
//    another place in the output). The shuffle's buffer then holds the
//    map's inputs: the smaller ones when the map decodes or expands.
// Always: `lower` feeds nothing but `upper` (another consumer would see
// the moved op's effect), and neither is imported.
MoveVerdict CanMoveAbove(const ProgramGraph& g, int upper, int lower, const LegalityOptions& options = {});

// For a program imported from tf.data, whose functions plumber cannot see:
// whether `upper` (a filter, take, skip or shuffle) may move above its only
// input, the map `lower`, and on what the user must check first. `legal`
// says the move is possible when the reason's conditions hold (a take's
// has none); the rewrite gives it as advice, never as a proven move.
MoveVerdict ImportedMoveConditions(const ProgramGraph& g, int upper, int lower);

// Whether map `upper` and its only input, map `lower`, may become one map
// running lower's steps then upper's: each element meets the same steps in
// the same order with the same index, so random ops draw the same values.
// `lower` must feed nothing else.
MoveVerdict CanFuseMaps(const ProgramGraph& g, int upper, int lower);

// Whether filter `upper` may fuse into its only input, map `lower`: the
// map then tests each element it made with the filter's predicate and
// drops those that fail (MapParams.keep_if). The predicate meets the same
// elements, made by the same steps, in the same order; its index is the
// element's position in the filter's input, which a one-to-one map's
// input index equals. A random predicate draws by that index, so the map
// must also keep order (deterministic) for it. Nothing need be known of
// what the map writes: the predicate still runs after it.
MoveVerdict CanFuseFilter(const ProgramGraph& g, int upper, int lower);

}  // namespace plumber
