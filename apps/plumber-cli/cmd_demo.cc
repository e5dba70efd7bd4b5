// plumber demo [--small]: shows the whole product with no files of the
// user's. It generates a small image dataset and the naive image pipeline
// in a temporary directory (lib/optimize/demo.h), runs the optimize loop on
// it, and prints the throughput before and after, the bottleneck found and
// the changes made. Under a minute on 2 cores; --small takes a few seconds
// (the test suite runs it).
#include <algorithm>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "base/env.h"
#include "command.h"
#include "loop_ui.h"
#include "optimize/demo.h"
#include "optimize/optimize_loop.h"
#include "report/optimize_format.h"
#include "version.h"

namespace plumber::cli {
namespace {

struct DemoFlags {
  bool small = false;
  std::string keep;
};

int RunDemo(const DemoFlags& f) {
  Env* env = Env::Default();
  ScopedTempDir temp;
  auto made = optimize::WorkingDirectory(env, f.keep, "plumber-demo-", &temp);
  if (!made.ok()) return ReportError(made.status());
  const std::string dir = *made;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::cout << fmt::format("plumber demo: a naive image pipeline, optimized for this machine ({} cores)\n", cores);
  auto setup = optimize::PrepareDemo(env, dir, f.small);
  if (!setup.ok()) return ReportError(setup.status());
  std::cout << fmt::format("data:     {}\n", setup->data_summary);
  std::cout << fmt::format("pipeline: {} (parallelism 1, no prefetch: as first written)\n",
                           f.keep.empty() ? "image.json" : setup->pipeline_path);
  std::cout << fmt::format("loop:     trace {} s, analyze, rewrite, run again; at most {} runs\n\n",
                           setup->options.seconds_per_run, setup->options.max_steps);
  std::cout.flush();
  setup->options.tool_version = kPlumberVersion;
  setup->options.argv = {"plumber", "demo"};
  setup->options.stop = InstallLoopStopHandler();
  setup->options.handoff = runtime::CalibrateHandoff();

  auto result = optimize::Optimize(env, *setup->program, setup->options, LoopProgress());
  ClearLoopProgress();
  if (!result.ok()) return ReportError(result.status());
  const optimize::OptimizeResult& r = *result;
  std::cout << report::StepTable(r) << "\n";
  if (!r.has_best()) {
    Warn("interrupted before any run completed");
    return kExitFailure;
  }
  std::cout << report::DemoSummary(r);
  if (!f.keep.empty()) std::cout << fmt::format("\nfiles kept in {}\n", dir);
  std::cout << "\nOn your own pipeline: plumber optimize PIPELINE.json (man plumber-optimize)\n";
  if (!r.failure.ok()) return ReportError(r.failure);
  if (r.interrupted) {
    Warn("interrupted; the numbers above are from the runs that completed");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Handler SetupDemo(CLI::App& app) {
  auto f = std::make_shared<DemoFlags>();
  app.add_flag("--small", f->small, "A tiny dataset and one-second runs (a few seconds in all)");
  app.add_option("--keep", f->keep, "Generate into this directory and keep it (default: a temporary one)");
  return [f] { return RunDemo(*f); };
}

}  // namespace plumber::cli
