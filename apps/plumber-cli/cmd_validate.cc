// plumber validate FILE: says what the file is (pipeline or trace), lists
// its nodes (and for a trace its machine and snapshots), and reports every
// problem found. Exit 0 when valid, 2 with one line per problem otherwise.
// --format json says the same as one object for scripts. The summaries are
// lib/report/validate_format.h; what the file is, traceio/validate_file.h.
#include <cstdio>
#include <iostream>

#include "base/env.h"
#include "base/number_format.h"
#include "command.h"
#include "report/validate_format.h"
#include "traceio/validate_file.h"

namespace plumber::cli {
namespace {

int Verdict(const std::string& path, const std::vector<Problem>& problems) {
  if (problems.empty()) {
    std::printf("valid\n");
    return kExitOk;
  }
  std::fflush(stdout);
  for (const auto& p : problems) std::cerr << "plumber: error: " << path << ": " << p.ToString() << "\n";
  std::cerr << "plumber: error: " << path << ": " << FormatCount(problems.size(), "problem", "problems") << "\n";
  return kExitBadInput;
}

int RunValidate(const std::string& path, bool json) {
  auto v = ValidateFile(Env::Default(), path);
  if (!v.ok()) return ReportError(v.status());
  const schema::Trace* trace = v->is_trace() ? &*v->trace : nullptr;
  if (json) {
    std::cout << report::FormatValidationJson(path, v->program, v->read.encoding, v->problems, trace,
                                              trace ? &v->read : nullptr);
    return v->problems.empty() ? kExitOk : kExitBadInput;
  }
  if (trace) {
    std::cout << report::FormatTraceSummary(path, *trace, v->read) << std::flush;
    if (!v->read.warning.empty()) Warn(v->read.warning);
  } else {
    std::cout << report::FormatPipelineSummary(path, v->program, v->read.encoding) << std::flush;
  }
  return Verdict(path, v->problems);
}

}  // namespace

Handler SetupValidate(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  app.add_option("FILE", *path, "Pipeline or trace (JSON or binary)")->required();
  app.add_option("--format", *format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [path, format] { return RunValidate(*path, *format == "json"); };
}

}  // namespace plumber::cli
