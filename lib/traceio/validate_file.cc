// Sniffs and validates one file for `plumber validate`; see validate_file.h.
#include "traceio/validate_file.h"

#include "pipeline/validate.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_check.h"

namespace plumber {
namespace {

// A well-formed trace can still hold nothing to measure; plumber analyze
// refuses it, and validate says so too rather than call it valid.
void AddUnmeasurable(const schema::Trace& trace, std::vector<Problem>* problems) {
  if (!trace.has_header()) return;  // ValidateTrace has said so
  if (trace.snapshots_size() == 0) {
    problems->push_back({"", "", "the trace has no snapshots: nothing ran long enough to measure"});
    return;
  }
  const std::string output = OutputNodeName(trace.header().program());
  for (const auto& snap : trace.snapshots()) {
    for (const auto& node : snap.nodes()) {
      if (node.name() == output && node.elements_produced() > 0) return;
    }
  }
  problems->push_back({output, "", "the output node produced no element in any snapshot: there is nothing to measure"});
}

}  // namespace

StatusOr<FileValidation> ValidateFileContents(const std::string& path, std::string_view bytes) {
  if (bytes.empty()) return Status::InvalidArgument(path + ": the file is empty");
  FileValidation v;
  const bool dump = DetectImportFormat(bytes) != ImportFormat::kNone;
  if (dump || IsTraceContent(bytes)) {
    // A dump is validated as the trace it imports to.
    PLUMBER_ASSIGN_OR_RETURN(v.trace, dump ? ImportDumps({ImportInput{path, std::string(bytes), std::nullopt}}, {})
                                           : ParseTrace(bytes, path, &v.read));
    v.program = v.trace->header().program();
    v.problems = ValidateTrace(*v.trace);
    AddUnmeasurable(*v.trace, &v.problems);
    return v;
  }
  PLUMBER_ASSIGN_OR_RETURN(v.program, ParsePipeline(bytes, path));
  v.read.encoding = DetectEncoding(bytes);
  v.problems = ValidatePipeline(v.program);
  return v;
}

StatusOr<FileValidation> ValidateFile(Env* env, const std::string& path) {
  PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path));
  return ValidateFileContents(path, bytes);
}

}  // namespace plumber
