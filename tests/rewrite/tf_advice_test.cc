// The rewrite of an imported tf.data pipeline, said as tf.data edits, on
// testdata/traces/imported-hand.json (worked out in testdata/traces/README.md):
// 100 minibatches; per minibatch ParallelMapV2.6 64 ms of service on 2
// threads, TFRecord.5 16 ms on the interleave's 2 workers, the interleave,
// the batch 1 ms each; 8 cores.
#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "base/env.h"
#include "rewrite/tf_advice.h"

using namespace plumber;

namespace {

std::string Testdata(const std::string& name) { return std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/" + name; }

const rewrite::TfAdvice* Find(const std::vector<rewrite::TfAdvice>& advice, const std::string& node) {
  for (const auto& a : advice) {
    if (a.node == node) return &a;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("An imported trace is analysed without a made-up throughput", "[rewrite][tf]") {
  analysis::AnalysisOptions opt;
  auto a = analysis::AnalyzeTraceFile(Env::Default(), Testdata("imported-hand.json"), opt);
  REQUIRE(a.ok());
  CHECK_FALSE(a->observed_throughput);
  CHECK(a->cpu_is_wall_time);
  CHECK_FALSE(a->source_limits.empty());
  CHECK(a->minibatches == 100);
  // Two map workers over the map's 64 ms and its input's 1.001 ms.
  REQUIRE(a->as_traced.throughput);
  CHECK(*a->as_traced.throughput == Approx(2 / 0.065001).epsilon(1e-9));
  CHECK(a->as_traced.bottleneck == "ParallelMapV2.6");
  // Wall time taken as CPU: 8 cores over 82.101 ms.
  REQUIRE(a->cpu_bound);
  CHECK(*a->cpu_bound == Approx(8 / 0.082101).epsilon(1e-9));
  const auto* opaque = a->Find("TensorSlice.2");
  REQUIRE(opaque != nullptr);
  CHECK(opaque->imported_type == "TensorSlice");
  CHECK_FALSE(opaque->cores_used);
}

TEST_CASE("Rewriting an imported trace gives tf.data edits with their predictions", "[rewrite][tf]") {
  analysis::AnalysisOptions opt;
  opt.solve_programs = true;
  auto a = analysis::AnalyzeTraceFile(Env::Default(), Testdata("imported-hand.json"), opt);
  REQUIRE(a.ok());
  auto r = rewrite::Rewrite(*a);
  REQUIRE(r.ok());
  const auto advice = rewrite::TfDataAdvice(*a, *r);
  const auto* map = Find(advice, "ParallelMapV2.6");
  REQUIRE(map != nullptr);
  CHECK(map->tf_type == "ParallelMapV2");
  CHECK(map->edit == ".map(f, num_parallel_calls=6)");
  CHECK(map->before == "num_parallel_calls=2");
  // 6 threads over the map's group: 6 / 65.001 ms.
  CHECK(map->predicted_after == Approx(6 / 0.065001).epsilon(1e-9));
  // Never an edit of the opaque node.
  CHECK(Find(advice, "TensorSlice.2") == nullptr);
  // The budgets come last, with the cores planned for.
  REQUIRE_FALSE(advice.empty());
  CHECK(advice.back().node == "options");
  CHECK(advice.back().edit.find("options.autotune.cpu_budget = 8;") != std::string::npos);
  CHECK(advice.back().predicted_after == Approx(r->predicted_after));
  CHECK(r->predicted_after == Approx(6 / 0.065001).epsilon(1e-9));
}
