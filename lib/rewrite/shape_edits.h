// The shape changes themselves, applied to a pipeline definition: move an
// op above its input, fuse two maps, fuse a filter into a map. They check
// only that the nodes are where the edit needs them; whether the edit keeps
// the output is legal_moves.h's question, and a run of both pipelines
// (optimize/output_check.h) is the proof.
#pragma once

#include <string>

#include "base/status.h"
#include "pipeline.pb.h"

namespace plumber::rewrite {

// `upper` takes `lower`'s place: it reads what `lower` read, `lower` reads
// it, and whatever read `upper` (as an input, an interleave's function or
// the declared output) reads `lower`. InvalidArgument unless `lower` is
// `upper`'s only input.
Status MoveAbove(schema::Pipeline* program, const std::string& upper, const std::string& lower);

// Map `upper` and its only input, map `lower`, become one map named
// `upper` that runs `lower`'s steps then its own, reads what `lower` read,
// with the larger of their parallelisms; `lower` is removed. It keeps
// order unless both maps were told they need not, and `upper`'s fused
// filter (keep_if) if it has one. InvalidArgument unless both are maps,
// `lower` without a fused filter, and `lower` is `upper`'s only input.
Status FuseMaps(schema::Pipeline* program, const std::string& upper, const std::string& lower);

// Filter `upper` fuses into its only input, map `lower`: the map keeps an
// element only when the filter's predicate holds (MapParams.keep_if),
// whatever read `upper` reads `lower`, and `upper` is removed. The map
// keeps its name and knobs. InvalidArgument unless `upper` is a filter,
// `lower` a map without a keep_if, and `lower` is `upper`'s only input.
Status FuseFilter(schema::Pipeline* program, const std::string& upper, const std::string& lower);

}  // namespace plumber::rewrite
