// Shape changes run for real (optimize/output_check.h): a move the rules
// allow keeps the first elements identical; a move they refuse, planted on
// purpose, is caught by the comparison; two maps fused, and a filter fused
// into a map, yield what the pair did. On generated images and on ranges, a few hundred elements each.
#include <catch2/catch.hpp>

#include <string>

#include "harness.h"
#include "optimize/output_check.h"
#include "pipeline/legal_moves.h"
#include "rewrite/shape_edits.h"
#include "runtime/datagen.h"
#include "traceio/pipeline_io.h"

namespace plumber {
namespace {

schema::Pipeline Parse(const std::string& json) {
  auto p = ParsePipeline(json, "test pipeline");
  INFO(json);
  REQUIRE(p.ok());
  runtime::testing::Graph(*p);  // valid
  return *p;
}

MoveVerdict Verdict(const schema::Pipeline& p, const std::string& upper, const std::string& lower) {
  const ProgramGraph g = runtime::testing::Graph(p);
  return CanMoveAbove(g, g.Find(upper), g.Find(lower));
}

// range -> map(m) -> filter(f) -> batch 4.
schema::Pipeline RangePipeline(const std::string& map_steps, const std::string& predicate) {
  return Parse(R"({"name": "r", "nodes": [
    {"name": "src", "op": "range", "range": {"stop": 400}},
    {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [)" + map_steps + R"(]}},
    {"name": "f", "op": "filter", "inputs": ["m"], "filter": {"predicate": [)" + predicate + R"(]}},
    {"name": "b", "op": "batch", "inputs": ["f"], "batch": {"batch_size": 4}}]})");
}

optimize::OutputCheck Compare(const schema::Pipeline& a, const schema::Pipeline& b, const std::string& dir = "",
                              int64_t n = 1000) {
  auto check = optimize::CompareOutputs(Env::Default(), a, b, dir, n, /*any_order=*/false);
  INFO(check.status().ToString());
  REQUIRE(check.ok());
  return *check;
}

TEST_CASE("a filter the rules move above a map keeps every element, in order", "[output_check]") {
  const schema::Pipeline naive = RangePipeline(R"({"op": "cpu_burn", "args": {"micros": 1}})",
                                               R"({"op": "label_in", "args": {"min": 10, "max": 90}})");
  REQUIRE(Verdict(naive, "f", "m").legal);
  schema::Pipeline moved = naive;
  REQUIRE(rewrite::MoveAbove(&moved, "f", "m").ok());
  // The filter now reads the source and the map reads the filter.
  CHECK(moved.nodes(1).name() == "f");
  CHECK(moved.nodes(1).inputs(0) == "src");
  CHECK(moved.nodes(2).name() == "m");
  CHECK(moved.nodes(2).inputs(0) == "f");
  const auto check = Compare(naive, moved);
  CHECK(check.same);
  CHECK(check.compared == 21);  // 81 elements in batches of 4, the last short
}

TEST_CASE("a move the rules refuse, made anyway, is caught by running both", "[output_check]") {
  // The map writes the component the predicate reads.
  const schema::Pipeline naive =
      RangePipeline(R"({"op": "add", "args": {"value": 5}})", R"({"op": "label_in", "args": {"values": [7, 12, 40]}})");
  const auto verdict = Verdict(naive, "f", "m");
  REQUIRE_FALSE(verdict.legal);
  schema::Pipeline moved = naive;
  REQUIRE(rewrite::MoveAbove(&moved, "f", "m").ok());
  const auto check = Compare(naive, moved);
  CHECK_FALSE(check.same);
  // 2, 7 and 35 pass before the map: 7, 12 and 40; moved, 7, 12 and 40
  // pass and become 12, 17 and 45. One batch each.
  CHECK(check.difference == "element 0 differs");
}

// Generated images: parse -> crop (decode, a seeded random crop) -> keep (a
// label_in filter whose arguments and the rest of the JSON follow `tail`).
std::string CropThenKeep(const std::string& tail) {
  return R"({"name": "img", "nodes": [
    {"name": "read", "op": "tfrecord", "tfrecord": {"files": ["train-00000-of-00001.tfrecord"]}},
    {"name": "parse", "op": "map", "inputs": ["read"], "map": {"udf": [
      {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}}]}},
    {"name": "crop", "op": "map", "inputs": ["parse"], "map": {"udf": [
      {"op": "decode_jpeg"}, {"op": "random_crop", "args": {"height": 32, "width": 32, "seed": 7}}]}},
    {"name": "keep", "op": "filter", "inputs": ["crop"], "filter": {"predicate": [
      {"op": "label_in", "args": {"component": 1, )" +
         tail;
}

TEST_CASE("a filter moved above a random crop changes the crops, and the rules refuse it", "[output_check]") {
  const ScopedTempDir dir = runtime::testing::ImageDir("plumber-output-check-", 24, 48, 5);
  // Keep the labels of every other record, so the filter drops some.
  const std::string json_head = CropThenKeep(R"("values": [)");
  // Every label the data has, then all but one of them.
  auto labels = [&](const schema::Pipeline& p) {
    runtime::testing::Harness h(p, {}, false, dir.path());
    REQUIRE(h.build_status().ok());
    std::vector<int64_t> out;
    for (const auto& e : h.All()) out.push_back(static_cast<int64_t>(e[1].GetDouble(0)));
    return out;
  };
  const schema::Pipeline all = Parse(R"({"name": "img", "nodes": [
    {"name": "read", "op": "tfrecord", "tfrecord": {"files": ["train-00000-of-00001.tfrecord"]}},
    {"name": "parse", "op": "map", "inputs": ["read"], "map": {"udf": [
      {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}}]}}]})");
  const std::vector<int64_t> seen = labels(all);
  REQUIRE(seen.size() == 24);
  std::string values;
  for (size_t i = 0; i < seen.size(); i += 2) values += (values.empty() ? "" : ",") + std::to_string(seen[i]);
  const schema::Pipeline naive = Parse(json_head + values + "]}}]}}]}");
  REQUIRE(labels(naive).size() < 24);

  const auto verdict = Verdict(naive, "keep", "crop");
  REQUIRE_FALSE(verdict.legal);
  CHECK_THAT(verdict.reason, Catch::StartsWith("crop is random (random_crop)"));
  schema::Pipeline moved = naive;
  REQUIRE(rewrite::MoveAbove(&moved, "keep", "crop").ok());
  const auto check = Compare(naive, moved, dir.path());
  CHECK_FALSE(check.same);
  // The same records pass; what differs is the window each was cut at.
  CHECK_THAT(check.difference, Catch::EndsWith("differs"));
}

TEST_CASE("a filter fused into a random crop's map, pooled, yields what the pair did", "[output_check]") {
  const ScopedTempDir dir = runtime::testing::ImageDir("plumber-output-check-", 24, 48, 5);
  const schema::Pipeline naive = Parse(CropThenKeep(R"("max": 499}}]}}], "output": "keep"})"));
  const ProgramGraph g = runtime::testing::Graph(naive);
  // Where the move is refused (the crop is random), the fusion is not: the
  // predicate still runs after the crop, with the crop's index.
  REQUIRE_FALSE(CanMoveAbove(g, g.Find("keep"), g.Find("crop")).legal);
  REQUIRE(CanFuseFilter(g, g.Find("keep"), g.Find("crop")).legal);
  schema::Pipeline fused = naive;
  REQUIRE(rewrite::FuseFilter(&fused, "keep", "crop").ok());
  REQUIRE(fused.nodes_size() == 3);
  CHECK(fused.output() == "crop");
  CHECK(fused.nodes(2).map().keep_if_size() == 1);
  fused.mutable_nodes(2)->mutable_map()->set_parallelism(3);
  const auto check = Compare(naive, fused, dir.path());
  CHECK(check.same);
  CHECK(check.compared > 0);
  CHECK(check.compared < 24);  // the filter dropped some
  // The map below fuses into the fused map, whose filter stays last.
  schema::Pipeline twice = fused;
  REQUIRE(rewrite::FuseMaps(&twice, "crop", "parse").ok());
  REQUIRE(twice.nodes_size() == 2);
  CHECK(twice.nodes(1).map().keep_if_size() == 1);
  CHECK(Compare(naive, twice, dir.path()).same);
  // The edits refuse what is not a filter, and a lower map with a filter
  // (its filter would have to run between the two maps' steps).
  CHECK_THAT(rewrite::FuseFilter(&fused, "crop", "parse").message(), Catch::Contains("only a filter fuses"));
  schema::Node* more = fused.add_nodes();
  more->set_name("more");
  more->set_op("map");
  more->add_inputs("crop");
  more->mutable_map()->add_udf()->set_op("normalize");
  CHECK_THAT(rewrite::FuseMaps(&fused, "more", "crop").message(), Catch::Contains("only two maps fuse"));
}

TEST_CASE("two maps fused yield what the pair did, random steps included", "[output_check]") {
  const schema::Pipeline pair = Parse(R"({"name": "f", "nodes": [
    {"name": "src", "op": "range", "range": {"stop": 300}},
    {"name": "a", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "add", "args": {"value": 3}}]}},
    {"name": "b", "op": "map", "inputs": ["a"], "map": {"parallelism": 2, "udf": [{"op": "add", "args": {"value": 4}}]}},
    {"name": "out", "op": "batch", "inputs": ["b"], "batch": {"batch_size": 8}}]})");
  const ProgramGraph g = runtime::testing::Graph(pair);
  REQUIRE(CanFuseMaps(g, g.Find("b"), g.Find("a")).legal);
  schema::Pipeline fused = pair;
  REQUIRE(rewrite::FuseMaps(&fused, "b", "a").ok());
  REQUIRE(fused.nodes_size() == 3);
  CHECK(fused.nodes(1).name() == "b");
  CHECK(fused.nodes(1).inputs(0) == "src");
  REQUIRE(fused.nodes(1).map().udf_size() == 2);
  CHECK(fused.nodes(1).map().parallelism() == 2);
  const auto check = Compare(pair, fused);
  CHECK(check.same);
  CHECK(check.compared == 38);  // 300 elements in batches of 8, the last short

  // A different pipeline is told apart: the comparison can fail.
  schema::Pipeline other = fused;
  (*other.mutable_nodes(1)->mutable_map()->mutable_udf(1)->mutable_args())["value"].set_number_value(5);
  CHECK_FALSE(Compare(pair, other).same);
}

TEST_CASE("the edits refuse nodes that are not where they need them", "[output_check]") {
  schema::Pipeline p = RangePipeline(R"({"op": "add"})", R"({"op": "label_in", "args": {"min": 1}})");
  CHECK_THAT(rewrite::MoveAbove(&p, "b", "m").message(), Catch::Contains("'m' is not the only input of 'b'"));
  CHECK_THAT(rewrite::MoveAbove(&p, "f", "nope").message(), Catch::Contains("no node 'nope'"));
  CHECK_THAT(rewrite::FuseMaps(&p, "f", "m").message(), Catch::Contains("only two maps fuse"));
  // The declared output moves with the node that was it.
  p.set_output("b");
  schema::Pipeline q = p;
  REQUIRE(rewrite::MoveAbove(&q, "b", "f").ok());
  CHECK(q.output() == "f");
}

}  // namespace
}  // namespace plumber
