// Placeholder until the importer lands (issue 14, in progress on a branch).
#include "traceio/pipeline_snapshot_import.h"

namespace plumber {

bool LooksLikePipelineSnapshot(std::string_view) { return false; }

StatusOr<schema::Trace> ImportPipelineSnapshot(const std::vector<ImportInput>&, const ImportOptions&) {
  return Status::Unimplemented("PipelineSnapshot import is not built yet");
}

}  // namespace plumber
