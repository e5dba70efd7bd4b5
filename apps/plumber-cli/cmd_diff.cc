// plumber diff A B: what changed between two traces or two pipelines (or a
// trace's program and a pipeline). Exit 0 whether or not anything changed,
// like `git diff`; 2 for unreadable input. The comparison is lib/report/diff.h.
#include <iostream>

#include "base/env.h"
#include "command.h"
#include "report/diff.h"

namespace plumber::cli {
namespace {

struct DiffFlags {
  std::string a;
  std::string b;
  std::string format = "text";
};

int RunDiff(const DiffFlags& f) {
  std::vector<std::string> warnings;
  auto diff = report::DiffFiles(Env::Default(), f.a, f.b, &warnings);
  if (!diff.ok()) return ReportError(diff.status());
  for (const auto& w : warnings) Warn(w);
  std::cout << (f.format == "json" ? report::FormatDiffJson(*diff) : report::FormatDiffText(*diff));
  return kExitOk;
}

}  // namespace

Handler SetupDiff(CLI::App& app) {
  auto f = std::make_shared<DiffFlags>();
  app.add_option("A", f->a, "The old trace or pipeline")->required();
  app.add_option("B", f->b, "The new trace or pipeline")->required();
  app.add_option("--format", f->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [f] { return RunDiff(*f); };
}

}  // namespace plumber::cli
