// The shape search on synthetic traces (rewrite/reshape.h,
// rewrite/shape_search.h): a reshaped trace's counters are those the
// reshaped program would have measured, the search makes a change the
// model says gains and a verifier passes, drops one the verifier fails,
// and its prediction is the one evaluator's for the emitted pipeline.
// Runs of real pipelines are tests/loop/shape_verify_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>

#include "analysis/trace_source.h"
#include "pipeline/op_table.h"
#include "rewrite/emitted_model.h"
#include "rewrite/reshape.h"
#include "rewrite/shape_search.h"
#include "trace_builder.h"

using namespace plumber;
using namespace plumber::rewrite;
using analysis::testing::TraceBuilder;

namespace {

// range -> burn (1 ms a element) -> keep (a quarter: 0..1999 of 8000) ->
// batch 32, over a 10 s window on 4 cores.
TraceBuilder FilterAfterBurn() {
  TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 8000}},
    {"name": "burn", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 1000}}]}},
    {"name": "keep", "op": "filter", "inputs": ["burn"],
     "filter": {"predicate": [{"op": "label_in", "args": {"max": 1999}}]}},
    {"name": "batch", "op": "batch", "inputs": ["keep"], "batch": {"batch_size": 32}}]})",
                 4);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  TraceBuilder::Node(s, "src", {8000, 8000 * 8, 8'000'000, 0, 0});
  TraceBuilder::Node(s, "burn", {8000, 8000 * 8, 8'000'000'000, 0, 8000}).set_bytes_consumed(8000 * 8);
  TraceBuilder::Node(s, "keep", {2000, 2000 * 8, 20'000'000, 0, 8000}).set_bytes_consumed(8000 * 8);
  TraceBuilder::Node(s, "batch", {62, 62 * 256, 6'200'000, 0, 1984});
  return b;
}

analysis::LoadedTrace Load(TraceBuilder b) {
  auto loaded = analysis::LoadTrace(b.trace(), analysis::WindowSpec{}, "synthetic.json");
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

const schema::NodeStats& Stats(const analysis::LoadedTrace& t, const std::string& name) {
  for (const auto& n : t.window.end.nodes()) {
    if (n.name() == name) return n;
  }
  FAIL("no stats for " << name);
  return t.window.end.nodes(0);
}

StatusOr<ShapeSearchResult> Search(TraceBuilder b, const ShapeSearchOptions& options) {
  analysis::AnalysisOptions aopt;
  aopt.solve_programs = true;
  const analysis::LoadedTrace trace = Load(b);
  auto traced = analysis::Analyze(trace, aopt);
  REQUIRE(traced.ok());
  return SearchShapes(trace, std::move(*traced), aopt, RewriteOptions{}, options);
}

}  // namespace

TEST_CASE("a filter moved above a map: the map does the kept share of its work, the filter sees every input",
          "[rewrite][shape]") {
  const TraceBuilder b = FilterAfterBurn();
  const analysis::LoadedTrace trace = Load(b);
  const auto changes = LegalShapeChanges(*trace.graph, {});
  // The move, then the fusion of the filter into the map.
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].rule == "map and filter fusion");
  CHECK(changes[0].rule == "filter above map");
  CHECK(DescribeChange(changes[0]) == "move 'keep' above 'burn'");
  auto moved = Reshape(trace, changes[0], analysis::HandoffPrice{});
  REQUIRE(moved.ok());
  const ProgramGraph& g = *moved->graph;
  CHECK(g.name(g.inputs(g.Find("keep"))[0]) == "src");
  CHECK(g.name(g.inputs(g.Find("burn"))[0]) == "keep");
  CHECK(g.name(g.inputs(g.Find("batch"))[0]) == "burn");
  const auto& burn = Stats(*moved, "burn");
  CHECK(burn.elements_produced() == 2000);
  CHECK(burn.elements_consumed() == 2000);
  CHECK(burn.active_cpu_ns() == 2'000'000'000);
  const auto& keep = Stats(*moved, "keep");
  CHECK(keep.elements_consumed() == 8000);
  CHECK(keep.elements_produced() == 2000);
  CHECK(keep.bytes_produced() == 2000 * 8);
  CHECK(keep.active_cpu_ns() == 20'000'000);  // one test per input, as many as before
  // The model sees the map's visits per minibatch fall to a quarter.
  auto before = analysis::Analyze(trace, {});
  auto after = analysis::Analyze(*moved, {});
  REQUIRE((before.ok() && after.ok()));
  CHECK(after->Find("burn")->visit_ratio == Approx(before->Find("burn")->visit_ratio / 4).epsilon(0.02));
  // The filter yields what it yielded, testing as many elements per
  // minibatch as before.
  CHECK(after->Find("keep")->visit_ratio == Approx(before->Find("keep")->visit_ratio));
  CHECK(after->Find("keep")->cpu_seconds_per_minibatch == Approx(before->Find("keep")->cpu_seconds_per_minibatch));
}

TEST_CASE("two fused maps: one node with both maps' work, less the hand-off between them", "[rewrite][shape]") {
  TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 100000}},
    {"name": "a", "op": "map", "inputs": ["src"], "map": {"parallelism": 2, "udf": [{"op": "add"}]}},
    {"name": "b", "op": "map", "inputs": ["a"], "map": {"parallelism": 2, "udf": [{"op": "add"}]}},
    {"name": "batch", "op": "batch", "inputs": ["b"], "batch": {"batch_size": 100}}]})",
                 4);
  b.Snapshot(0);
  auto& s = b.Snapshot(1);
  TraceBuilder::Node(s, "src", {10000, 80000, 1'000'000, 0, 0});
  TraceBuilder::Node(s, "a", {10000, 80000, 200'000'000, 0, 10000}).set_bytes_consumed(80000);
  TraceBuilder::Node(s, "b", {10000, 80000, 300'000'000, 0, 10000}).set_bytes_consumed(80000);
  TraceBuilder::Node(s, "batch", {100, 80000, 1'000'000, 0, 10000});
  const analysis::LoadedTrace trace = Load(b);
  const auto changes = LegalShapeChanges(*trace.graph, {});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].rule == "map fusion");
  CHECK(DescribeChange(changes[0]) == "fuse 'a' into 'b'");
  analysis::HandoffPrice price;
  price.known = true;
  price.per_handoff_ns = 10'000;
  price.chunked_ns = 30;
  price.payload_ns = 150;
  // a's elements (8 bytes, 20 us of work) cross threads at a price each.
  const double handoff_ns = 1e9 * price.SecondsPerElement(8, 20'000);
  REQUIRE(handoff_ns > 0);
  auto fused = Reshape(trace, changes[0], price);
  REQUIRE(fused.ok());
  const ProgramGraph& g = *fused->graph;
  CHECK(g.Find("a") < 0);
  CHECK(g.name(g.inputs(g.Find("b"))[0]) == "src");
  CHECK(g.node(g.Find("b")).map().udf_size() == 2);
  const auto& stats = Stats(*fused, "b");
  CHECK(stats.elements_consumed() == 10000);
  CHECK(stats.active_cpu_ns() == Approx(500'000'000 - 10000 * handoff_ns).epsilon(1e-6));
  for (const auto& n : fused->window.end.nodes()) CHECK(n.name() != "a");
  // Without a calibration nothing is taken off.
  auto unpriced = Reshape(trace, changes[0], analysis::HandoffPrice{});
  REQUIRE(unpriced.ok());
  CHECK(Stats(*unpriced, "b").active_cpu_ns() == 500'000'000);
}

// range -> decode (pooled, 4 threads, 400 us an element, 512 bytes out)
// -> check (a predicate costing 200 us on the consumer's thread, keeping
// half) -> batch 32, over 1 s on 4 cores: the check's one thread is what
// holds the pipeline back, and a filter does not spread over cores.
TraceBuilder CostlyCheckAfterPool(int decode_parallelism = 4) {
  TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 100000}},
    {"name": "decode", "op": "map", "inputs": ["src"], "map": {"parallelism": )" +
                     std::to_string(decode_parallelism) + R"(, "udf": [
      {"op": "cpu_burn", "args": {"micros": 400}}]}},
    {"name": "check", "op": "filter", "inputs": ["decode"], "filter": {"predicate": [
      {"op": "cpu_burn", "args": {"micros": 200}}, {"op": "label_in", "args": {"max": 49999}}]}},
    {"name": "batch", "op": "batch", "inputs": ["check"], "batch": {"batch_size": 32}}]})",
                 4);
  b.Snapshot(0);
  auto& s = b.Snapshot(1);
  TraceBuilder::Node(s, "src", {5000, 5000 * 8, 5'000'000, 0, 0});
  TraceBuilder::Node(s, "decode", {5000, 5000 * 512, 2'000'000'000, 0, 5000}).set_bytes_consumed(5000 * 8);
  TraceBuilder::Node(s, "check", {2500, 2500 * 512, 1'000'000'000, 0, 5000}).set_bytes_consumed(5000 * 512);
  TraceBuilder::Node(s, "batch", {78, 78 * 32 * 512, 2'000'000, 0, 2496});
  return b;
}

TEST_CASE("a filter fused into a map: the map does both nodes' work and hands over what the filter kept",
          "[rewrite][shape]") {
  const analysis::LoadedTrace trace = Load(CostlyCheckAfterPool());
  const auto changes = LegalShapeChanges(*trace.graph, {});
  const auto fusion = std::find_if(changes.begin(), changes.end(),
                                   [](const ShapeChange& c) { return c.kind == ShapeKind::kFuseFilter; });
  REQUIRE(fusion != changes.end());
  CHECK(fusion->rule == "map and filter fusion");
  CHECK(DescribeChange(*fusion) == "fuse 'check' into 'decode'");
  analysis::HandoffPrice price;
  price.known = true;
  price.per_handoff_ns = 10'000;
  price.chunked_ns = 30;
  price.payload_ns = 150;
  price.per_byte_ns = 0.05;
  // decode's elements (512 bytes, 400 us of work) cross threads at a price each.
  const double handoff_ns = 1e9 * price.SecondsPerElement(512, 400'000);
  REQUIRE(handoff_ns > 0);
  auto fused = Reshape(trace, *fusion, price);
  REQUIRE(fused.ok());
  const ProgramGraph& g = *fused->graph;
  CHECK(g.Find("check") < 0);
  CHECK(g.name(g.inputs(g.Find("batch"))[0]) == "decode");
  const schema::Node& decode = g.node(g.Find("decode"));
  REQUIRE(decode.map().keep_if_size() == 2);
  CHECK(decode.map().keep_if(1).op() == "label_in");
  CHECK(decode.map().parallelism() == 4);
  const auto& stats = Stats(*fused, "decode");
  CHECK(stats.elements_consumed() == 5000);
  CHECK(stats.elements_produced() == 2500);
  CHECK(stats.bytes_produced() == 2500 * 512);
  // Both nodes' work, less the hand-offs of the 2500 elements dropped.
  CHECK(stats.active_cpu_ns() == Approx(3'000'000'000 - 2500 * handoff_ns).epsilon(1e-6));
  for (const auto& n : fused->window.end.nodes()) CHECK(n.name() != "check");
  // The model now charges the predicate to decode's pool.
  auto after = analysis::Analyze(*fused, {});
  REQUIRE(after.ok());
  CHECK(after->Find("decode")->visit_ratio == Approx(32).epsilon(0.02));
}

TEST_CASE("the search fuses a costly filter into the pool below it, and the fused map keeps its knobs",
          "[rewrite][shape]") {
  int runs = 0;
  ShapeSearchOptions options;
  options.verify = [&](const schema::Pipeline&, const schema::Pipeline& reshaped) -> StatusOr<ShapeVerdict> {
    ++runs;
    CHECK(reshaped.nodes_size() == 3);
    return ShapeVerdict{true, "same"};
  };
  auto r = Search(CostlyCheckAfterPool(), options);
  REQUIRE(r.ok());
  const ShapeReport& shape = r->rewrite.shape;
  REQUIRE(shape.applied.size() == 1);
  CHECK(runs == 1);
  CHECK(shape.applied[0].change.kind == ShapeKind::kFuseFilter);
  // The knobs alone are held to one core's 200 us a check: 1 / (200 us x
  // 64 checks a minibatch), 78 a second. Fused, the 4 cores share 600 us x
  // 64 a minibatch: about 1.3x.
  CHECK(shape.predicted_knobs_only == Approx(78).epsilon(0.1));
  CHECK(r->rewrite.predicted_after / shape.predicted_knobs_only > 1.2);
  const EmittedModel model(r->analysis, r->rewrite.plan);
  auto predicted = model.PredictEmitted(r->rewrite.pipeline);
  REQUIRE(predicted.ok());
  CHECK(*predicted == Approx(r->rewrite.predicted_after).epsilon(1e-9));
  const schema::Pipeline& p = r->rewrite.pipeline;
  REQUIRE(p.nodes_size() >= 3);
  CHECK(p.nodes(1).name() == "decode");
  CHECK(p.nodes(1).map().keep_if_size() == 2);
}

TEST_CASE("costs learned of a node before a change do not price it after the change", "[rewrite][shape]") {
  auto search = [](const MeasuredCosts* learned) {
    analysis::AnalysisOptions aopt;
    aopt.solve_programs = true;
    // Traced on one thread, so the rewrite gives decode others, where
    // learned costs would price it.
    const analysis::LoadedTrace trace = Load(CostlyCheckAfterPool(1));
    auto traced = analysis::Analyze(trace, aopt);
    REQUIRE(traced.ok());
    RewriteOptions ropt;
    ropt.learned = learned;
    auto r = SearchShapes(trace, std::move(*traced), aopt, ropt, {});
    REQUIRE(r.ok());
    REQUIRE(r->rewrite.shape.applied.size() == 1);
    return r->rewrite.shape.applied[0].predicted_after;
  };
  // An earlier step measured decode, before the fusion, at 1 ms an element
  // on 2 to 8 threads: that is not what the fused decode costs.
  MeasuredCosts learned;
  for (int p = 2; p <= 8; ++p) learned.stages["decode"][p] = {1e-3, 1e-3, 5000};
  CHECK(search(&learned) == Approx(search(nullptr)).epsilon(1e-9));
}

TEST_CASE("the search moves the filter when the model says it gains and the run agrees", "[rewrite][shape]") {
  int runs = 0;
  ShapeSearchOptions options;
  options.verify = [&](const schema::Pipeline& traced, const schema::Pipeline& reshaped) -> StatusOr<ShapeVerdict> {
    ++runs;
    CHECK(traced.nodes(1).name() == "burn");  // always the traced program
    CHECK(reshaped.nodes(1).name() == "keep");
    return ShapeVerdict{true, "the first 16 outputs are the same, in order"};
  };
  auto r = Search(FilterAfterBurn(), options);
  REQUIRE(r.ok());
  const ShapeReport& shape = r->rewrite.shape;
  REQUIRE(shape.applied.size() == 1);
  CHECK(runs == 1);
  CHECK(shape.applied[0].change.rule == "filter above map");
  CHECK(shape.applied[0].verification == "the first 16 outputs are the same, in order");
  // burn was 128 ms of each minibatch's 128.6 on 4 cores; a quarter of it
  // leaves the model about 3.9x the knobs alone.
  CHECK(shape.predicted_knobs_only > 0);
  CHECK(r->rewrite.predicted_after / shape.predicted_knobs_only == Approx(3.9).epsilon(0.05));
  CHECK(shape.applied[0].predicted_before == Approx(shape.predicted_knobs_only));
  CHECK(shape.applied[0].predicted_after == Approx(r->rewrite.predicted_after));
  // The emitted pipeline is the reshaped one with its knobs tuned.
  const schema::Pipeline& p = r->rewrite.pipeline;
  CHECK(p.nodes(1).name() == "keep");
  CHECK(p.nodes(1).inputs(0) == "src");
  CHECK(NodeParallelism(p.nodes(2)) > 1);
  // The traced pipeline's prediction stays the before figure.
  auto traced = analysis::Analyze(Load(FilterAfterBurn()), {});
  REQUIRE(traced.ok());
  CHECK(r->rewrite.predicted_before == Approx(traced->as_traced.throughput.value_or(0)));
}

TEST_CASE("the search's figure is the one evaluator's for the pipeline it emits", "[rewrite][shape]") {
  auto r = Search(FilterAfterBurn(), {});
  REQUIRE(r.ok());
  REQUIRE(r->rewrite.shape.applied.size() == 1);
  CHECK(r->rewrite.shape.applied[0].verification == "not verified: there is nothing to run");
  const EmittedModel model(r->analysis, r->rewrite.plan);
  auto predicted = model.PredictEmitted(r->rewrite.pipeline);
  REQUIRE(predicted.ok());
  CHECK(*predicted == Approx(r->rewrite.predicted_after).epsilon(1e-9));
}

TEST_CASE("a change the run finds changes the output is dropped, with its rule, and the shape kept",
          "[rewrite][shape]") {
  ShapeSearchOptions options;
  options.verify = [](const schema::Pipeline&, const schema::Pipeline&) -> StatusOr<ShapeVerdict> {
    return ShapeVerdict{false, "element 0 differs"};
  };
  auto r = Search(FilterAfterBurn(), options);
  REQUIRE(r.ok());
  const ShapeReport& shape = r->rewrite.shape;
  CHECK(shape.applied.empty());
  REQUIRE(shape.dropped.size() == 1);
  CHECK(shape.dropped[0].why == "rule 'filter above map' failed verification: element 0 differs");
  CHECK(r->rewrite.predicted_after == Approx(shape.predicted_knobs_only));
  CHECK(r->rewrite.pipeline.nodes(1).name() == "burn");
  // A run that cannot be made drops the change too, saying why.
  options.verify = [](const schema::Pipeline&, const schema::Pipeline&) -> StatusOr<ShapeVerdict> {
    return Status::NotFound("data/train-0.tfrecord: no such file");
  };
  auto missing = Search(FilterAfterBurn(), options);
  REQUIRE(missing.ok());
  REQUIRE(missing->rewrite.shape.dropped.size() == 1);
  CHECK_THAT(missing->rewrite.shape.dropped[0].why, Catch::StartsWith("could not be verified: "));
}

TEST_CASE("a change below the threshold is not made", "[rewrite][shape]") {
  ShapeSearchOptions options;
  options.min_gain = 10;  // 11x: more than the move's 3.9x
  auto r = Search(FilterAfterBurn(), options);
  REQUIRE(r.ok());
  CHECK(r->rewrite.shape.applied.empty());
  // The move and the fusion of the filter into the map.
  CHECK(r->rewrite.shape.priced == 2);
  CHECK(r->rewrite.shape.below_threshold == 2);
  CHECK(r->rewrite.pipeline.nodes(1).name() == "burn");
}

TEST_CASE("on a program of hundreds of nodes the search prices a bounded few, those that spare most first",
          "[rewrite][shape]") {
  // range -> 149 pairs of (map of 1 us, filter keeping all but the last
  // pair's, which keeps a tenth) -> batch: 300 nodes.
  std::string json = R"({"nodes": [{"name": "n0", "op": "range", "range": {"stop": 1000000000}})";
  const int pairs = 149;
  for (int k = 0; k < pairs; ++k) {
    const int m = 1 + 2 * k, f = m + 1;
    json += R"(, {"name": "n)" + std::to_string(m) + R"(", "op": "map", "inputs": ["n)" + std::to_string(m - 1) +
            R"("], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 1}}]}})";
    json += R"(, {"name": "n)" + std::to_string(f) + R"(", "op": "filter", "inputs": ["n)" + std::to_string(m) +
            R"("], "filter": {"predicate": [{"op": "label_in", "args": {"min": 0}}]}})";
  }
  json += R"(, {"name": "out", "op": "batch", "inputs": ["n)" + std::to_string(2 * pairs) +
          R"("], "batch": {"batch_size": 32}}]})";
  // One core: whatever spares CPU gains.
  TraceBuilder b(json, 1);
  b.Snapshot(0);
  auto& s = b.Snapshot(1);
  // 32,000 elements through each pair (320,000 into the last, which keeps
  // a tenth): the last map does ten times the work of any other.
  TraceBuilder::Node(s, "n0", {320000, 320000 * 8, 1'000'000, 0, 0});
  for (int k = 0; k < pairs; ++k) {
    const int64_t in = k == pairs - 1 ? 320000 : 32000, out = 32000;
    const std::string m = "n" + std::to_string(1 + 2 * k), f = "n" + std::to_string(2 + 2 * k);
    TraceBuilder::Node(s, m, {in, in * 8, in * 1000, 0, in}).set_bytes_consumed(in * 8);
    TraceBuilder::Node(s, f, {out, out * 8, in * 10, 0, in}).set_bytes_consumed(in * 8);
  }
  TraceBuilder::Node(s, "out", {1000, 32000 * 8, 1'000'000, 0, 32000});
  REQUIRE(b.trace().header().program().nodes_size() == 300);
  auto r = Search(b, {});
  REQUIRE(r.ok());
  const ShapeReport& shape = r->rewrite.shape;
  CHECK(shape.priced == 2);
  // The last filter, which spares its map nine tenths of the work (6% of
  // the pipeline's), was priced first and made.
  INFO("knobs alone " << shape.predicted_knobs_only << ", after " << r->rewrite.predicted_after << ", below threshold " << shape.below_threshold);
  REQUIRE_FALSE(shape.applied.empty());
  CHECK(DescribeChange(shape.applied[0].change) == "move 'n298' above 'n297'");
}

TEST_CASE("a moved filter whose steps cost by the byte is charged for the map's inputs' bytes", "[rewrite][shape]") {
  // The filter adds 1 to a copy (by the byte) before it tests; the map's
  // elements are 32 bytes out of 8 in (as if it widened them).
  auto trace = [](const std::string& predicate) {
    TraceBuilder b(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 8000}},
      {"name": "burn", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 10}}]}},
      {"name": "keep", "op": "filter", "inputs": ["burn"], "filter": {"predicate": [)" +
                       predicate + R"(]}},
      {"name": "batch", "op": "batch", "inputs": ["keep"], "batch": {"batch_size": 32}}]})",
                   4);
    b.Snapshot(0);
    auto& s = b.Snapshot(1);
    TraceBuilder::Node(s, "src", {8000, 8000 * 8, 8'000'000, 0, 0});
    TraceBuilder::Node(s, "burn", {8000, 8000 * 32, 80'000'000, 0, 8000}).set_bytes_consumed(8000 * 8);
    TraceBuilder::Node(s, "keep", {2000, 2000 * 32, 40'000'000, 0, 8000}).set_bytes_consumed(8000 * 32);
    TraceBuilder::Node(s, "batch", {62, 62 * 1024, 1'000'000, 0, 1984});
    return b;
  };
  const std::string label = R"({"op": "label_in", "args": {"max": 1999}})";
  auto moved_cpu = [&](const std::string& predicate) {
    const analysis::LoadedTrace t = Load(trace(predicate));
    const auto changes = LegalShapeChanges(*t.graph, {});
    REQUIRE(!changes.empty());
    REQUIRE(changes[0].kind == ShapeKind::kMoveAbove);
    auto moved = Reshape(t, changes[0], analysis::HandoffPrice{});
    REQUIRE(moved.ok());
    return Stats(*moved, "keep").active_cpu_ns();
  };
  // By the byte: a quarter of the bytes, a quarter of the work.
  CHECK(moved_cpu(R"({"op": "add", "args": {"value": 1}}, )" + label) == 10'000'000);
  // By the element: the same work.
  CHECK(moved_cpu(label) == 40'000'000);
}
