// Pipeline validation: every rule reports the node and the JSON field path
// it concerns. The rules of each op's parameters live in its row
// (op_table.h); the rules here are the ones about the whole program: names,
// known ops and their arity, inputs and function edges that exist, no
// cycles, exactly one output.
#pragma once

#include <string>
#include <vector>

#include "pipeline.pb.h"
#include "pipeline/param_check.h"

namespace plumber {

// Every problem found, in node order; empty when the pipeline is valid.
// Checks: names unique and well-formed, ops and UDF ops known with their
// arguments, inputs exist with the op's arity, interleave functions exist,
// no cycles, exactly one output node, parameters in range.
std::vector<Problem> ValidatePipeline(const schema::Pipeline& pipeline);

// The name of the output node as a summary of a possibly invalid pipeline
// shows it: the declared output, else the first node nothing consumes; ""
// when every node is consumed. Analysis and rewriting use
// ProgramGraph::output() of a validated program instead.
std::string OutputNodeName(const schema::Pipeline& pipeline);

}  // namespace plumber
