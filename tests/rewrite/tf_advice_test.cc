// The rewrite of an imported tf.data pipeline, said as tf.data edits, on
// testdata/traces/imported-hand.json (worked out in testdata/traces/README.md):
// 100 minibatches; per minibatch ParallelMapV2.6 64 ms of service on 2
// threads, TFRecord.5 16 ms on the interleave's 2 workers, the interleave,
// the batch 1 ms each; 8 cores.
#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "base/env.h"
#include "rewrite/tf_advice.h"
#include "traceio/trace_io.h"

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
  // Old and new in words that cannot be read the other way round.
  CHECK(map->change == "num_parallel_calls from 2 to 6");
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

TEST_CASE("A cache the plan places is advised as .cache() after the node, with its size", "[rewrite][tf]") {
  // Imported: 3,200 elements of 1 kB from a range, a deterministic map of
  // 1 ms each, repeated forever, batched by 32: the map's output (3.2 MB)
  // fits in memory and is replayed every epoch after the first.
  const std::string json = R"({
    "header": {
      "program": {"name": "tf", "imported_from": "test", "output": "BatchV2.4", "nodes": [
        {"name": "Range.1", "op": "range", "imported_type": "Range", "range": {"stop": 3200}},
        {"name": "ParallelMapV2.2", "op": "map", "imported_type": "ParallelMapV2", "inputs": ["Range.1"], "map": {}},
        {"name": "Repeat.3", "op": "repeat", "imported_type": "Repeat", "inputs": ["ParallelMapV2.2"], "repeat": {}},
        {"name": "BatchV2.4", "op": "batch", "imported_type": "BatchV2", "inputs": ["Repeat.3"], "batch": {"batch_size": 32}}]},
      "machine": {"cores": 8, "memory_bytes": "17179869184", "available_memory_bytes": "17179869184"},
      "imported": {"format": "test", "thread_cpu": false, "window_known": true, "window_from": "test"}},
    "snapshots": [{"wall_ns": "10000000000", "nodes": [
      {"name": "Range.1", "elements_produced": 3200, "bytes_produced": 25600, "active_cpu_ns": "3200000", "self_wall_ns": "3200000"},
      {"name": "ParallelMapV2.2", "elements_produced": 3200, "elements_consumed": 3200, "bytes_produced": 3276800, "active_cpu_ns": "3200000000", "self_wall_ns": "3200000000", "parallelism": 1},
      {"name": "Repeat.3", "elements_produced": 3200, "elements_consumed": 3200, "bytes_produced": 3276800},
      {"name": "BatchV2.4", "elements_produced": 100, "elements_consumed": 3200, "bytes_produced": 3276800, "active_cpu_ns": "10000000", "self_wall_ns": "10000000"}]}]})";
  auto trace = ParseTrace(json, "cache.json");
  REQUIRE(trace.ok());
  analysis::AnalysisOptions opt;
  opt.solve_programs = true;
  auto a = analysis::AnalyzeTrace(*trace, opt, "cache.json");
  REQUIRE(a.ok());
  auto r = rewrite::Rewrite(*a);
  REQUIRE(r.ok());
  REQUIRE(r->plan.cache_node == "ParallelMapV2.2");
  const auto advice = rewrite::TfDataAdvice(*a, *r);
  const auto* cache = Find(advice, "ParallelMapV2.2");
  // The map's own edit (if any) comes first; the cache names the same node.
  const rewrite::TfAdvice* edit = nullptr;
  for (const auto& e : advice) {
    if (e.edit.rfind(".cache()", 0) == 0) edit = &e;
  }
  REQUIRE(cache != nullptr);
  REQUIRE(edit != nullptr);
  CHECK(edit->node == "ParallelMapV2.2");
  CHECK(edit->tf_type == "ParallelMapV2");
  CHECK(edit->edit == ".cache() right after it: about 3.28 MB of memory");
  CHECK(edit->where.find("read by Repeat Repeat.3") != std::string::npos);
  // After the cache the map idles: only the batch and the repeat's replay remain.
  CHECK(edit->predicted_after > 10 * r->predicted_before);
}
