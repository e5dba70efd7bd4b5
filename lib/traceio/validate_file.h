// `plumber validate`'s reading of one file: what it is (a pipeline, a
// plumber trace, or a dump the importers read, validated as the trace it
// imports to), in which encoding, and every problem found. It lives here
// because traceio owns the file formats and so the sniffing of which one a
// file holds; lib/report/validate_format.h prints the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/param_check.h"
#include "trace.pb.h"
#include "traceio/format.h"
#include "traceio/trace_io.h"

namespace plumber {

struct FileValidation {
  // Set for a trace or an imported dump; unset for a pipeline.
  std::optional<schema::Trace> trace;
  // How the trace was read (its encoding, a torn tail); for a pipeline only
  // `encoding` is set.
  TraceReadReport read;
  // The pipeline as written, or the trace's program.
  schema::Pipeline program;
  // Empty when the file is valid.
  std::vector<Problem> problems;

  bool is_trace() const { return trace.has_value(); }
};

// Reads `path` through `env` and validates it. Fails (naming the file) only
// when the file cannot be read or parsed at all, or is empty; problems of a
// file that parses come back in `problems`.
StatusOr<FileValidation> ValidateFile(Env* env, const std::string& path);

// The same over bytes already read; `path` names them in messages.
StatusOr<FileValidation> ValidateFileContents(const std::string& path, std::string_view bytes);

}  // namespace plumber
