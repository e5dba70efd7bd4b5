// `plumber demo`: everything the demo needs that is not terminal output.
// It writes a small image dataset (the datagen library, as `plumber gen`
// would) and the naive image pipeline of examples/image.json into a
// directory, and says how the optimize loop should run over it, so a new
// user sees plumber find the bottleneck and fix it with no files of theirs.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"
#include <memory>

#include "optimize/optimize_loop.h"
#include "pipeline/program_graph.h"

namespace plumber::optimize {

struct DemoSetup {
  std::shared_ptr<const ProgramGraph> program;  // the naive image pipeline
  std::string pipeline_path;    // DIR/image.json
  std::string data_summary;     // "8 TFRecord shards, 512 JPEGs of 256x256, 9.1 MiB"
  OptimizeOptions options;      // base_dir and run lengths set; trace_dir DIR/traces
};

// Prepares the demo in `dir` (which must exist). `small`: a dataset and
// runs sized for the test suite (a few seconds in all) instead of the
// under-a-minute default.
StatusOr<DemoSetup> PrepareDemo(Env* env, const std::string& dir, bool small);

}  // namespace plumber::optimize
