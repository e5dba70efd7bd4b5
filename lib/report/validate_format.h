// What `plumber validate` prints about a file: what it is (pipeline or
// trace, which encoding), its nodes and, for a trace, its machine and
// snapshots. The summary is shown for invalid files too (that is when it
// helps most), so it reads the program as written, without a graph.
#pragma once

#include <string>
#include <vector>

#include "pipeline.pb.h"
#include "pipeline/param_check.h"
#include "trace.pb.h"
#include "traceio/format.h"
#include "traceio/trace_io.h"

namespace plumber::report {

// "<path>: pipeline 'NAME' (JSON), N node(s), output 'OUT'" and the node
// table.
std::string FormatPipelineSummary(const std::string& path, const schema::Pipeline& pipeline, Encoding encoding);
// "<path>: trace (binary), N record(s), written by plumber V", the program,
// machine and snapshots, and the node table.
std::string FormatTraceSummary(const std::string& path, const schema::Trace& trace, const TraceReadReport& read);

// The same as one JSON object: {"path", "kind", "encoding", "valid",
// "problems": [...], "program": {"name", "output", "nodes": [...]}} plus
// "machine", "snapshots", "end" and "warning" for a trace (`trace` null for
// a pipeline).
std::string FormatValidationJson(const std::string& path, const schema::Pipeline& program, Encoding encoding,
                                 const std::vector<Problem>& problems, const schema::Trace* trace,
                                 const TraceReadReport* read);

}  // namespace plumber::report
