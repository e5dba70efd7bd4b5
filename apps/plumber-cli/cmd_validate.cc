// plumber validate FILE: says what the file is (pipeline or trace), lists
// its nodes (and for a trace its machine and snapshots), and reports every
// problem found. Exit 0 when valid, 2 with one line per problem otherwise.
// --format json says the same as one object for scripts. The summaries are
// lib/report/validate_format.h.
#include <cstdio>
#include <iostream>

#include "base/env.h"
#include "command.h"
#include "pipeline/validate.h"
#include "report/validate_format.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_check.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

int Verdict(const std::string& path, const std::vector<Problem>& problems) {
  if (problems.empty()) {
    std::printf("valid\n");
    return kExitOk;
  }
  std::fflush(stdout);
  for (const auto& p : problems) std::cerr << "plumber: error: " << path << ": " << p.ToString() << "\n";
  std::cerr << "plumber: error: " << path << ": " << problems.size() << " problem(s)\n";
  return kExitBadInput;
}

int ValidateFile(const std::string& path, std::string_view bytes, bool json) {
  const bool dump = DetectImportFormat(bytes) != ImportFormat::kNone;
  if (dump || IsTraceContent(bytes)) {
    TraceReadReport read;
    // A dump is validated as the trace it imports to.
    auto trace = dump ? ImportDumps({ImportInput{path, std::string(bytes), std::nullopt}}, {})
                      : ParseTrace(bytes, path, &read);
    if (!trace.ok()) return ReportError(trace.status());
    const auto problems = ValidateTrace(*trace);
    if (json) {
      std::cout << report::FormatValidationJson(path, trace->header().program(), read.encoding, problems, &*trace, &read);
      return problems.empty() ? kExitOk : kExitBadInput;
    }
    std::cout << report::FormatTraceSummary(path, *trace, read) << std::flush;
    if (!read.warning.empty()) Warn(read.warning);
    return Verdict(path, problems);
  }
  auto pipeline = ParsePipeline(bytes, path);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  const auto problems = ValidatePipeline(*pipeline);
  if (json) {
    std::cout << report::FormatValidationJson(path, *pipeline, DetectEncoding(bytes), problems, nullptr, nullptr);
    return problems.empty() ? kExitOk : kExitBadInput;
  }
  std::cout << report::FormatPipelineSummary(path, *pipeline, DetectEncoding(bytes)) << std::flush;
  return Verdict(path, problems);
}

}  // namespace

Handler SetupValidate(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  app.add_option("FILE", *path, "Pipeline or trace (JSON or binary)")->required();
  app.add_option("--format", *format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [path, format] {
    auto bytes = ReadFileToString(Env::Default(), *path);
    if (!bytes.ok()) return ReportError(bytes.status());
    if (bytes->empty()) return ReportError(Status::InvalidArgument(*path + ": the file is empty"));
    return ValidateFile(*path, *bytes, *format == "json");
  };
}

}  // namespace plumber::cli
