// plumber import FILE... -o TRACE: what TensorFlow wrote about a run (tf.data
// autotuning model dumps, the Plumber fork's PipelineSnapshot stats), as a
// plumber trace that every other subcommand reads. Several files are dumps
// of one run in the order they were taken; --window gives the time their
// counters cover when the files do not tell. analyze, rank, check, diff
// and rewrite also read one dump directly; import is for several, and for
// committing the result.
#include <iostream>

#include "base/env.h"
#include "base/number_format.h"
#include "base/output_path.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"
#include "pipeline/op_table.h"
#include "traceio/import.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

struct ImportFlags {
  std::vector<std::string> files;
  std::string out;
  std::string window;
  std::string to;
};

int RunImport(const ImportFlags& f) {
  Env* env = Env::Default();
  StatusOr<Encoding> encoding = f.to.empty() ? EncodingForPath(f.out) : ParseEncodingName(f.to);
  if (!encoding.ok()) return ReportError(encoding.status());
  if (Status s = CheckOutputPath(f.out, f.files); !s.ok()) return ReportError(s);
  ImportOptions options;
  if (!f.window.empty()) {
    auto seconds = units::ParseSeconds(f.window);
    if (!seconds.ok() || !(*seconds > 0)) {
      return ReportError(Status::InvalidArgument("--window '" + f.window +
                                                 "': expected the positive time the counters cover, e.g. 30s"));
    }
    options.window_seconds = *seconds;
  }
  auto trace = ImportFiles(env, f.files, options);
  if (!trace.ok()) return ReportError(trace.status());
  if (Status s = WriteTrace(env, f.out, *trace, *encoding); !s.ok()) return ReportError(s);
  const schema::ImportInfo& info = trace->header().imported();
  int opaque = 0;
  for (const auto& n : trace->header().program().nodes()) {
    const OpDef* def = FindOp(n.op());
    if (def != nullptr && def->imported_only) ++opaque;
  }
  std::cout << "imported " << FormatCount(f.files.size(), "dump", "dumps") << " of " << info.format() << " to " << f.out << ": "
            << FormatCount(trace->header().program().nodes_size(), "node", "nodes") << " (" << opaque << " opaque), "
            << (info.window_known() ? "time from " + info.window_from() : std::string("time unknown")) << "\n";
  if (!info.window_known() && f.files.size() == 1) {
    std::cout << "  note: one dump gives per-element costs, visit ratios and the ranking, not throughput: give two "
                 "dumps of the same run, or --window SECONDS (the time its counters cover)\n";
  }
  for (const auto& note : info.notes()) std::cout << "  note: " << note << "\n";
  return kExitOk;
}

}  // namespace

Handler SetupImport(CLI::App& app) {
  auto f = std::make_shared<ImportFlags>();
  app.add_option("FILE", f->files, "Dumps of one run, in the order they were taken")->required();
  app.add_option("-o,--output", f->out, "Trace to write (.json or .pb)")->required();
  app.add_option("--window", f->window, "Time the counters cover: since the start for one dump, between the first "
                                        "and last for several (e.g. 30s), up to 100 days")
      ->check(Duration());
  app.add_option("--to", f->to, "Output encoding: json or pb (default: from the output's extension)")
      ->check(CLI::IsMember({"json", "pb"}));
  return [f] { return RunImport(*f); };
}

}  // namespace plumber::cli
