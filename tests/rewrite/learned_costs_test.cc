// What the optimize loop learns: a stage's cost per
// element measured at each parallelism prices later rewrites. Two synthetic
// traces of one pipeline on 2 cores: at 1 thread the map costs 10 us per
// element; given 2 threads it measured 30 us per element (hand-offs,
// contention). Every cost is stated in the test.
#include <catch2/catch.hpp>

#include "pipeline/op_table.h"
#include "rewrite/emitted_model.h"
#include "rewrite/measured_costs.h"
#include "rewrite/rewriter.h"
#include "trace_builder.h"

using namespace plumber;
using namespace plumber::rewrite;
using analysis::testing::Parallelism;
using analysis::testing::TraceBuilder;

namespace {

// src -> work (a map at `parallelism` threads, `work_ns` CPU per element)
// -> batch(8), `elements` elements in a 10 s window, 2 cores, no hand-off
// calibration (so the only price of a thread is what was measured).
TraceBuilder Traced(int parallelism, int64_t work_ns, int64_t elements) {
  TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 100000000}},
    {"name": "work", "op": "map", "inputs": ["src"], "map": {"parallelism": )" +
                     std::to_string(parallelism) + R"(, "udf": [{"op": "cpu_burn", "args": {"micros": 10}}]}},
    {"name": "batch", "op": "batch", "inputs": ["work"], "batch": {"batch_size": 8}}]})",
                 2);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  // src and batch: 10 ns per element each, next to nothing.
  TraceBuilder::Node(s, "src", {elements, elements * 8, elements * 10, 0, 0});
  TraceBuilder::Node(s, "work", {elements, elements * 8, elements * work_ns, 0, elements});
  TraceBuilder::Node(s, "batch", {elements / 8, elements * 8, elements * 10, 0, elements});
  return b;
}

// At 1 thread: 10 us per element, 800,000 elements in 10 s (8 s of CPU).
TraceBuilder Inline() { return Traced(1, 10'000, 800'000); }
// At 2 threads: 30 us per element, 640,000 elements in 10 s (19.2 s of CPU
// on 2 cores): slower than inline.
TraceBuilder Pooled() { return Traced(2, 30'000, 640'000); }


schema::Pipeline WithParallelism(schema::Pipeline p, const std::string& name, int parallelism) {
  for (auto& n : *p.mutable_nodes()) {
    if (n.name() == name) n.mutable_map()->set_parallelism(parallelism);
  }
  return p;
}

}  // namespace

TEST_CASE("measured costs: per element, by stage and parallelism, merged by elements", "[rewrite][learned]") {
  auto inline_report = Inline().AnalyzeWithPlan();
  auto pooled_report = Pooled().AnalyzeWithPlan();
  REQUIRE(inline_report.ok());
  REQUIRE(pooled_report.ok());
  MeasuredCosts learned;
  learned.Add(*inline_report);
  learned.Add(*pooled_report);
  const MeasuredCost* at1 = learned.Find("work", 1);
  const MeasuredCost* at2 = learned.Find("work", 2);
  REQUIRE(at1 != nullptr);
  REQUIRE(at2 != nullptr);
  CHECK(at1->cpu_seconds_per_element == Approx(10e-6));
  CHECK(at1->service_seconds_per_element == Approx(10e-6));
  CHECK(at1->elements == 800'000);
  CHECK(at2->cpu_seconds_per_element == Approx(30e-6));
  CHECK(at2->elements == 640'000);
  CHECK(learned.Find("work", 3) == nullptr);
  CHECK(learned.Find("batch", 1)->cpu_seconds_per_element == Approx(80e-9));  // 8 elements' 10 ns each

  // A second run at 1 thread of 200,000 elements at 20 us: weighted 4 to 1.
  auto again = Traced(1, 20'000, 200'000).AnalyzeWithPlan();
  REQUIRE(again.ok());
  learned.Add(*again);
  CHECK(learned.Find("work", 1)->cpu_seconds_per_element == Approx(0.8 * 10e-6 + 0.2 * 20e-6));
  CHECK(learned.Find("work", 1)->elements == 1'000'000);
}

TEST_CASE("a parallelism that measured costlier per element is not proposed again", "[rewrite][learned]") {
  auto inline_report = Inline().AnalyzeWithPlan();
  auto pooled_report = Pooled().AnalyzeWithPlan();
  REQUIRE(inline_report.ok());
  REQUIRE(pooled_report.ok());
  MeasuredCosts learned;
  learned.Add(*inline_report);
  learned.Add(*pooled_report);
  RewriteOptions with_learned;
  with_learned.learned = &learned;

  SECTION("the first trace alone: 2 threads, as the model assumes the cost the same at any parallelism") {
    auto r = Rewrite(*inline_report);
    REQUIRE(r.ok());
    CHECK(Parallelism(r->pipeline, "work") == 2);
    CHECK(r->learned.empty());
  }

  SECTION("the first trace with what both runs measured: the map stays inline") {
    auto r = Rewrite(*inline_report, with_learned);
    REQUIRE(r.ok());
    CHECK(Parallelism(r->pipeline, "work") == 1);
    // The search priced 2 threads with the measurement at 2.
    REQUIRE(r->learned.size() == 1);
    CHECK(r->learned[0].stage == "work");
    CHECK(r->learned[0].parallelism == 2);
    // What the model now says of 2 threads: 2 / (8 x 30 us) minibatches/s,
    // below the 1 / (8 x 10 us) of one thread (the src and batch share the
    // consumer's thread: 12,500 less a hair).
    const EmittedModel model(*inline_report, r->plan, &learned);
    std::set<LearnedUse> used;
    auto pooled = model.Predict(WithParallelism(inline_report->program_graph().program(), "work", 2), true, &used);
    REQUIRE(pooled.ok());
    CHECK(*pooled == Approx(2.0 / (8 * 30e-6)).epsilon(0.01));
    CHECK(used == std::set<LearnedUse>{{"work", 2}});
    auto as_given = model.Predict(inline_report->program_graph().program(), true);
    REQUIRE(as_given.ok());
    CHECK(*as_given == Approx(1.0 / (8 * 10e-6)).epsilon(0.01));
    CHECK(r->predicted_after == Approx(*as_given));
  }

  SECTION("the second trace with what both runs measured: back to one thread") {
    auto alone = Rewrite(*pooled_report);
    REQUIRE(alone.ok());
    // Alone, the trace says 30 us per element at either parallelism.
    CHECK(Parallelism(alone->pipeline, "work") == 2);
    auto r = Rewrite(*pooled_report, with_learned);
    REQUIRE(r.ok());
    CHECK(Parallelism(r->pipeline, "work") == 1);
    REQUIRE(r->learned.size() == 1);
    CHECK(r->learned[0].parallelism == 1);
    REQUIRE(!r->changes.empty());
    CHECK(r->changes[0].node == "work");
    CHECK(r->changes[0].why.find("it costs what it measured there in an earlier run") != std::string::npos);
    // One thread at the 10 us measured inline; the traced hand-off of the
    // pool is not subtracted again (no calibration here: it is 0 anyway).
    CHECK(r->predicted_after == Approx(1.0 / (8 * 10e-6)).epsilon(0.01));
    CHECK(r->predicted_before == Approx(2.0 / (8 * 30e-6)).epsilon(0.01));
  }
}

TEST_CASE("costs learned at the traced parallelism change nothing", "[rewrite][learned]") {
  auto report = Inline().AnalyzeWithPlan();
  REQUIRE(report.ok());
  // Another run at 1 thread measured the map at twice the cost: the trace
  // being rewritten is the newer measurement at that parallelism, and wins.
  auto other = Traced(1, 20'000, 400'000).AnalyzeWithPlan();
  REQUIRE(other.ok());
  MeasuredCosts learned;
  learned.Add(*report);
  learned.Add(*other);
  RewriteOptions options;
  options.learned = &learned;
  auto plain = Rewrite(*report);
  auto with = Rewrite(*report, options);
  REQUIRE(plain.ok());
  REQUIRE(with.ok());
  CHECK(with->learned.empty());
  CHECK(Parallelism(with->pipeline, "work") == Parallelism(plain->pipeline, "work"));
  CHECK(with->pipeline.SerializeAsString() == plain->pipeline.SerializeAsString());
  CHECK(with->predicted_after == plain->predicted_after);
  CHECK(with->predicted_before == plain->predicted_before);
  REQUIRE(with->changes.size() == plain->changes.size());
  for (size_t i = 0; i < with->changes.size(); ++i) {
    CHECK(with->changes[i].predicted_after == plain->changes[i].predicted_after);
  }
  CHECK(with->notes == plain->notes);
}
