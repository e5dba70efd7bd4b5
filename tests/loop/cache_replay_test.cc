// A cache's replay priced as measured (the fidelity issue's first item):
// the cached example is run naive and traced as `plumber run` traces it
// (with the machine's calibrations), rewritten with room for a cache in
// memory or, with the memory budget below the data, only in a file, and
// the rewritten pipeline is run: after the epoch that fills the cache, its
// throughput (the median of five runs) must come within 15% of what the
// rewrite predicted, in one of two attempts (CheckWithinTarget says why).
// Before the file replay was calibrated its prediction was 2.5x the run.
// Runs are seconds long and compare speeds, so these cases run alone
// (RUN_SERIAL).
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "harness.h"
#include "pipeline/validate.h"
#include "rewrite/cache_placement.h"
#include "rewrite/rewriter.h"
#include "runtime/datagen.h"
#include "runtime/run.h"
#include "traceio/pipeline_io.h"

namespace plumber {
namespace {

struct Replayed {
  std::string cache;  // the rewrite's cache change, "" when none
  std::string changes;
  double predicted = 0;
  double measured = 0;  // median of five runs of the rewritten pipeline
};

// The cached example over 128 images of 128x128 (6.3 MB decoded), rewritten
// with `memory_bytes` for a cache (0: the machine's) and a file cache's
// directory beside the data.
Replayed RewriteAndRun(uint64_t memory_bytes) {
  Env* env = Env::Default();
  auto dir = ScopedTempDir::Make(env, "plumber-cache-replay-");
  REQUIRE(dir.ok());
  const std::string base = dir->path();
  REQUIRE(env->CreateDirectories(base + "/data").ok());
  runtime::ImageGenOptions gen;
  gen.files = 4;
  gen.records_per_file = 32;
  gen.width = gen.height = 128;
  REQUIRE(runtime::GenerateImages(env, base + "/data", gen).ok());
  auto naive = LoadProgram(env, std::string(PLUMBER_SOURCE_DIR) + "/examples/cached.json");
  REQUIRE(naive.ok());

  runtime::RunConfig config;
  config.seconds = 1.5;
  config.warmup_seconds = 0.25;
  config.snapshot_every_seconds = 0.1;
  config.base_dir = base;
  config.trace_path = base + "/naive.pb";
  config.handoff = runtime::CalibrateHandoff();
  auto naive_run = runtime::RunPipeline(env, *naive, config);
  REQUIRE(naive_run.ok());
  REQUIRE(naive_run->end_status == "ok");

  analysis::AnalysisOptions aopt;
  aopt.solve_programs = true;
  if (memory_bytes > 0) aopt.memory_bytes = memory_bytes;
  rewrite::PlaceFileCache(env, base, "", &aopt.plan);
  auto report = analysis::AnalyzeTraceFile(env, config.trace_path, aopt);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  auto rewritten = rewrite::Rewrite(*report);
  REQUIRE(rewritten.ok());
  REQUIRE(ValidatePipeline(rewritten->pipeline).empty());
  Replayed r;
  r.predicted = rewritten->predicted_after;
  for (const auto& c : rewritten->changes) {
    if (c.what == "cache") r.cache = c.after;
    r.changes += c.node + " " + c.what + " " + c.after + "; ";
  }

  // Each run fills the cache in its first epoch (a few hundred ms of
  // decoding); the warm-up leaves it out.
  std::vector<double> runs;
  // The median of five: single runs of the file cache's pipeline spread by
  // a fifth on this kind of machine.
  for (int i = 0; i < 5; ++i) {
    runtime::RunConfig fast;
    fast.seconds = 1.5;
    fast.warmup_seconds = 0.5;
    fast.snapshot_every_seconds = 0.25;
    fast.base_dir = base;
    fast.tracing = false;
    // A file cache left by the run before would skip the fill.
    auto left = env->Glob(base + "/*.plumber-cache*");
    REQUIRE(left.ok());
    for (const auto& f : *left) REQUIRE(env->RemoveFile(f).ok());
    auto run = runtime::RunPipeline(env, runtime::testing::Graph(rewritten->pipeline), fast);
    REQUIRE(run.ok());
    REQUIRE(run->end_status == "ok");
    runs.push_back(run->measured_seconds > 0 ? static_cast<double>(run->measured_batches) / run->measured_seconds
                                             : 0.0);
  }
  std::sort(runs.begin(), runs.end());
  r.measured = runs[2];
  return r;
}

// Whether one of two attempts (each a calibration, a naive trace, its
// rewrite and five runs of it) comes within 15%. A single attempt failed
// about one time in five inside the full suite: the calibration and the
// runs are seconds apart, and this kind of machine changes pace by a fifth
// over seconds (a memory replay calibrated at 122 us a minibatch where
// the runs right after took 96). A model that is off fails both.
void CheckWithinTarget(uint64_t memory_bytes, const std::string& cache_prefix) {
  std::string attempts;
  bool within = false;
  for (int attempt = 0; attempt < 2 && !within; ++attempt) {
    const Replayed r = RewriteAndRun(memory_bytes);
    // An instrumented build copies and decodes at no speed the plan can
    // weigh a cache by (under ASan it chose decode threads over a file
    // cache): there the pipelines only run.
    if (runtime::testing::kSanitized) return;
    INFO(r.changes);
    CHECK_THAT(r.cache, Catch::StartsWith(cache_prefix));
    attempts += "predicted " + std::to_string(r.predicted) + "/s, measured " + std::to_string(r.measured) + "/s; ";
    within = r.predicted == Approx(r.measured).epsilon(0.15);
  }
  INFO(attempts);
  CHECK(within);
}

TEST_CASE("cache replay: a memory cache's rewrite runs as predicted", "[cache_replay]") {
  CheckWithinTarget(0, "in memory after decode");
}

TEST_CASE("cache replay: a file cache's rewrite runs as predicted", "[cache_replay]") {
  // 1 MB for a cache: the decoded images (6.3 MB) fit only on disk.
  CheckWithinTarget(1'000'000, "in the file");
}

}  // namespace
}  // namespace plumber
