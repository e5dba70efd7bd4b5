// Placeholder until the importer lands (issue 14, in progress on a branch).
#include "traceio/tf_model_import.h"

namespace plumber {

bool LooksLikeTfModel(std::string_view) { return false; }

StatusOr<schema::Trace> ImportTfModel(const std::vector<ImportInput>&, const ImportOptions&) {
  return Status::Unimplemented("tf.data model import is not built yet");
}

}  // namespace plumber
