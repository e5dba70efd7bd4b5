// The Plumber fork's stats (tensorflow.PipelineSnapshot) as a plumber
// trace: per-op thread CPU, elements, bytes, disk bytes, parallelism and
// cardinality, the machine, file sizes and the root's wait. Each snapshot
// becomes one of ours. docs/tf-import.md.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "traceio/import.h"
#include "trace.pb.h"

namespace plumber {

// True when the bytes parse as a PipelineSnapshot holding at least one op.
bool LooksLikePipelineSnapshot(std::string_view bytes);
// A PipelineSnapshot in protobuf text format (the fixtures' .pbtxt), which
// the importer does not read: it takes the binary form the fork writes.
bool LooksLikePipelineSnapshotText(std::string_view bytes);

// Snapshots of one run in the order they were taken.
StatusOr<schema::Trace> ImportPipelineSnapshot(const std::vector<ImportInput>& inputs, const ImportOptions& options);

}  // namespace plumber
