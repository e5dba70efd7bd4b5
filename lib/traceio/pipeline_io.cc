// Pipeline files: parse (JSON or binary by content), load into a validated
// program graph, write atomically.
#include "traceio/pipeline_io.h"

namespace plumber {

StatusOr<schema::Pipeline> ParsePipeline(std::string_view bytes, const std::string& source) {
  schema::Pipeline p;
  if (DetectEncoding(bytes) == Encoding::kJson) {
    PLUMBER_RETURN_IF_ERROR(JsonToMessage(bytes, source, &p));
  } else if (bytes.empty()) {
    return Status::InvalidArgument(source + ": the file is empty");
  } else if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::InvalidArgument(source + ": neither JSON nor a binary pipeline definition");
  } else {
    // Fields this version does not know cannot be shown in JSON or checked;
    // keeping them would make the binary and JSON forms disagree.
    p.DiscardUnknownFields();
  }
  return p;
}

StatusOr<ProgramGraph> LoadProgram(Env* env, const std::string& path) {
  PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path, uint64_t{1} << 30));
  PLUMBER_ASSIGN_OR_RETURN(schema::Pipeline p, ParsePipeline(bytes, path));
  return ProgramGraph::Build(std::move(p), path);
}

std::string SerializePipeline(const schema::Pipeline& pipeline, Encoding encoding) {
  if (encoding == Encoding::kJson) return MessageToJson(pipeline);
  return SerializeDeterministic(pipeline);
}

Status WritePipeline(Env* env, const std::string& path, const schema::Pipeline& pipeline, Encoding encoding) {
  return WriteFileAtomically(env, path, SerializePipeline(pipeline, encoding));
}

}  // namespace plumber
