// Consistency checks of a whole trace beyond its framing: the program is a
// valid pipeline, snapshots move forward in time, cumulative counters never
// go backwards, and every counter belongs to a node of the program.
#pragma once

#include <vector>

#include "trace.pb.h"
#include "pipeline/validate.h"

namespace plumber {

// Every problem found; fields are JSON paths such as
// "snapshots[3].nodes[1].elements_produced".
std::vector<Problem> ValidateTrace(const schema::Trace& trace);

}  // namespace plumber
