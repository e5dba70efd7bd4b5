// Importing what other systems wrote about a pipeline run as a plumber
// trace: tf.data's autotuning model dumps (ModelProto, binary or text, map
// or nested form) and the Plumber fork's PipelineSnapshot stats. The result
// is an ordinary schema::Trace whose header says where it came from and
// what the source could not tell (TraceHeader.imported), so the analysis
// and every report work on it unchanged and state those limits.
//
// Formats are told apart by content, never by file name. docs/tf-import.md
// explains the mapping of each source onto plumber's program and counters.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "trace.pb.h"

namespace plumber {

enum class ImportFormat {
  kNone,              // not something an importer reads
  kTfModel,           // tensorflow.data.model.ModelProto, any form or encoding
  kPipelineSnapshot,  // tensorflow.PipelineSnapshot (the Plumber fork)
};

// One file to import, already read.
struct ImportInput {
  std::string path;
  std::string bytes;
  // Modification time, seconds since the epoch; nullopt when unknown.
  std::optional<double> mtime_seconds;
};

struct ImportOptions {
  // `--window SECONDS`: the time the counters cover. With one dump, since
  // the iterator was created; with two or more, between the first and the
  // last. Overrides every other source of time.
  std::optional<double> window_seconds;
};

// What the bytes are. Never fails: kNone for anything unrecognised,
// including plumber's own traces and pipelines.
ImportFormat DetectImportFormat(std::string_view bytes);

// A plumber trace or a dump an importer reads: what analyze, diff and check
// accept.
bool IsTraceOrDump(std::string_view bytes);

// What `bytes` (read from `path`) are, for a reader that expected a trace
// or dump and got something else (bytes IsTraceOrDump refuses): a
// pipeline definition, JSON cut short or with a syntax error (its line and
// column), a dump cut short, a PipelineSnapshot in text form, or none of
// these. Always an InvalidArgument naming the path.
Status NotATraceOrDump(const std::string& path, std::string_view bytes);

// For a reader of pipelines and traces (convert) given a dump the
// importers read: says so, and that plumber import turns it into a trace.
// OK for anything else.
Status RefuseDump(const std::string& path, std::string_view bytes);

// Imports dumps of one run, in the order they were taken (all of one
// format). Errors (InvalidArgument) name the file and the place: a wrong
// enum value, a missing output node, a cycle, a repeated id, a count or
// time out of range. Never allocates in proportion to a number read from
// the file before checking it against the file's size.
StatusOr<schema::Trace> ImportDumps(const std::vector<ImportInput>& inputs, const ImportOptions& options);

// Reads the files (and their modification times) through `env`, then
// ImportDumps.
StatusOr<schema::Trace> ImportFiles(Env* env, const std::vector<std::string>& paths, const ImportOptions& options);

}  // namespace plumber
