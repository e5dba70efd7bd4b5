// Reading, writing and validating pipeline definitions. Reading detects the
// encoding by content; LoadPipeline also validates, so a pipeline it returns
// is safe to analyse, rewrite or run.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "traceio/format.h"

namespace plumber {

// One thing wrong with a pipeline, located by node and field.
struct Problem {
  std::string node;   // empty for pipeline-wide problems
  std::string field;  // JSON path within the node, e.g. "map.udf[1].op"
  std::string message;

  // "node 'decode': field 'map.parallelism': must be >= 1, got 0"
  std::string ToString() const;
};

// The most threads (or interleave cycle slots) one node may ask for.
inline constexpr int64_t kMaxParallelism = 1024;

// Every problem found, in node order; empty when the pipeline is valid.
// Checks: names unique and well-formed, ops and UDF ops known with their
// arguments, inputs exist with the op's arity, interleave functions exist,
// no cycles, exactly one output node, parameters in range.
std::vector<Problem> ValidatePipeline(const schema::Pipeline& pipeline);

// Parses bytes (JSON or binary) without validating. `source` names the file
// in errors.
StatusOr<schema::Pipeline> ParsePipeline(std::string_view bytes, const std::string& source);

// Reads, parses and validates; the first problem becomes an InvalidArgument
// naming the file, node and field.
StatusOr<schema::Pipeline> LoadPipeline(Env* env, const std::string& path);

std::string SerializePipeline(const schema::Pipeline& pipeline, Encoding encoding);
// Atomic: the file is whole or untouched.
Status WritePipeline(Env* env, const std::string& path, const schema::Pipeline& pipeline, Encoding encoding);

// The name of the output node of a valid pipeline.
std::string OutputNodeName(const schema::Pipeline& pipeline);

}  // namespace plumber
