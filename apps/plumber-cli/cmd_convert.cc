// plumber convert IN OUT: pipeline or trace, JSON <-> binary. The kind of
// file is read from its content; the output encoding from --to or OUT's
// extension. Pipelines are validated first: convert never writes an invalid
// one. A torn trace converts with a warning, keeping its complete records.
#include <iostream>

#include <spdlog/spdlog.h>

#include "base/env.h"
#include "base/output_path.h"
#include "command.h"
#include "pipeline/validate.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

struct ConvertOptions {
  std::string in;
  std::string out;
  std::string to;
};

int RunConvert(const ConvertOptions& opt) {
  Env* env = Env::Default();
  StatusOr<Encoding> encoding = opt.to.empty() ? EncodingForPath(opt.out) : ParseEncodingName(opt.to);
  if (!encoding.ok()) return ReportError(encoding.status());
  if (Status s = CheckOutputPath(opt.out, {opt.in}); !s.ok()) return ReportError(s);
  auto bytes = ReadFileToString(env, opt.in);
  if (!bytes.ok()) return ReportError(bytes.status());
  if (IsTraceContent(*bytes)) {
    TraceReadReport report;
    auto trace = ParseTrace(*bytes, opt.in, &report);
    if (!trace.ok()) return ReportError(trace.status());
    if (!report.warning.empty()) Warn(report.warning);
    if (!trace->has_header()) return ReportError(Status::InvalidArgument(opt.in + ": no complete header to convert"));
    if (Status s = WriteTrace(env, opt.out, *trace, *encoding); !s.ok()) return ReportError(s);
    spdlog::debug("wrote trace {} ({} snapshots)", opt.out, trace->snapshots_size());
    return kExitOk;
  }
  if (Status s = RefuseDump(opt.in, *bytes); !s.ok()) return ReportError(s);
  auto pipeline = ParsePipeline(*bytes, opt.in);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  auto problems = ValidatePipeline(*pipeline);
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "plumber: error: " << opt.in << ": " << p.ToString() << "\n";
    return kExitBadInput;
  }
  if (Status s = WritePipeline(env, opt.out, *pipeline, *encoding); !s.ok()) return ReportError(s);
  return kExitOk;
}

}  // namespace

Handler SetupConvert(CLI::App& app) {
  auto opt = std::make_shared<ConvertOptions>();
  app.add_option("IN", opt->in, "Pipeline or trace to read (JSON or binary)")->required();
  app.add_option("OUT", opt->out, "File to write")->required();
  app.add_option("--to", opt->to, "Output encoding: json or pb (default: from OUT's extension)")
      ->check(CLI::IsMember({"json", "pb"}));
  return [opt] { return RunConvert(*opt); };
}

}  // namespace plumber::cli
