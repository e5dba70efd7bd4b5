// tf.data's autotuning model (tensorflow.data.model.ModelProto) as a plumber
// trace: the map form of TF 2.7+ and the nested form of TF 2.5-2.6, binary
// or text. Each dump becomes one snapshot; the program is rebuilt from the
// model's nodes (an interleave's per-input nodes folded into one function,
// types plumber has no op for kept as opaque nodes). docs/tf-import.md.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "traceio/import.h"
#include "trace.pb.h"

namespace plumber {

// True when the bytes parse as a ModelProto in either form and encoding and
// hold at least one node.
bool LooksLikeTfModel(std::string_view bytes);

// Dumps of one run in the order they were taken.
StatusOr<schema::Trace> ImportTfModel(const std::vector<ImportInput>& inputs, const ImportOptions& options);

}  // namespace plumber
