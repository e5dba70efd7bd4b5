// The shape changes themselves, applied to a pipeline definition: move an
// op above its input, fuse two maps. They check only that the nodes are
// where the edit needs them; whether the edit keeps the output is
// legal_moves.h's question, and a run of both pipelines
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
// order unless both maps were told they need not. InvalidArgument unless
// both are maps and `lower` is `upper`'s only input.
Status FuseMaps(schema::Pipeline* program, const std::string& upper, const std::string& lower);

}  // namespace plumber::rewrite
