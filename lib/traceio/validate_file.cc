// Sniffs and validates one file for `plumber validate`; see validate_file.h.
#include "traceio/validate_file.h"

#include "pipeline/validate.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_check.h"

namespace plumber {

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
