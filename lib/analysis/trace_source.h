// Reading a trace for the analysis: telling a binary trace from a JSON one
// (and from a pipeline), refusing input over the memory ceiling before it
// is allocated, streaming a binary trace record by record, building the
// traced program's graph (validated: a cyclic or dangling program is
// refused here, naming the file and the node) and choosing the window. A
// torn or corrupt tail becomes a warning; what came before it is used.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/window.h"
#include "base/env.h"
#include "base/status.h"
#include "pipeline/program_graph.h"
#include "trace.pb.h"

namespace plumber::analysis {

// A trace ready to be modelled: its header (program moved into `graph`),
// the program graph, the window's bounding snapshots, and what reading it
// found wrong.
struct LoadedTrace {
  std::string source;
  schema::TraceHeader header;
  std::shared_ptr<const ProgramGraph> graph;
  SelectedWindow window;
  // Problems with the file itself (a torn tail, a corrupt record), before
  // the window's own warnings.
  std::vector<std::string> warnings;
};

// Reads the file at `path` (binary: streamed; JSON: parsed whole, within
// `max_memory_bytes`).
StatusOr<LoadedTrace> LoadTraceFile(Env* env, const std::string& path, const WindowSpec& window,
                                    uint64_t max_memory_bytes);

// The same over a whole trace in memory; `source` names it in messages.
StatusOr<LoadedTrace> LoadTrace(const schema::Trace& trace, const WindowSpec& window, const std::string& source);

}  // namespace plumber::analysis
