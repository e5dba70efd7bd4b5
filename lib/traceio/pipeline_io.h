// Reading and writing pipeline definitions. Reading detects the encoding by
// content; LoadProgram also validates and builds the program graph, so a
// program it returns is safe to analyse, rewrite or run.
#pragma once

#include <string>
#include <string_view>

#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/program_graph.h"
#include "traceio/format.h"

namespace plumber {

// Parses bytes (JSON or binary) without validating. `source` names the file
// in errors.
StatusOr<schema::Pipeline> ParsePipeline(std::string_view bytes, const std::string& source);

// Reads, parses, validates and indexes; the first problem becomes an
// InvalidArgument naming the file, node and field.
StatusOr<ProgramGraph> LoadProgram(Env* env, const std::string& path);

std::string SerializePipeline(const schema::Pipeline& pipeline, Encoding encoding);
// Atomic: the file is whole or untouched.
Status WritePipeline(Env* env, const std::string& path, const schema::Pipeline& pipeline, Encoding encoding);

}  // namespace plumber
