// Shape changes proven by running both pipelines: the shape search with the
// verifier `plumber rewrite --verify` uses (optimize::CompareOutputs) drops
// an illegal move planted on purpose and keeps a legal one; and a property
// test: random legal move sequences on random valid programs keep the
// first elements identical, in order.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>

#include "analysis/analyze.h"
#include "harness.h"
#include "optimize/output_check.h"
#include "pipeline/legal_moves.h"
#include "rewrite/reshape.h"
#include "rewrite/shape_edits.h"
#include "rewrite/shape_search.h"
#include "runtime/datagen.h"
#include "trace_builder.h"
#include "traceio/pipeline_io.h"

namespace plumber {
namespace {

using analysis::testing::TraceBuilder;

rewrite::ShapeVerifier RunBoth(const std::string& dir, int n) {
  return [dir, n](const schema::Pipeline& traced,
                  const schema::Pipeline& reshaped) -> StatusOr<rewrite::ShapeVerdict> {
    auto check = optimize::CompareOutputs(Env::Default(), traced, reshaped, dir, n, /*any_order=*/false);
    if (!check.ok()) return check.status();
    return rewrite::ShapeVerdict{check->same, check->same ? "same" : check->difference};
  };
}

// 24 generated images; parse -> `map_steps` (named "work") -> keep the
// labels 0..499 -> batch 4, traced as if work cost 2 ms an image.
StatusOr<rewrite::ShapeSearchResult> SearchImages(const std::string& dir, const std::string& map_steps,
                                                  rewrite::ShapeSearchOptions options) {
  TraceBuilder b(R"({"nodes": [
    {"name": "read", "op": "tfrecord", "tfrecord": {"files": ["train-00000-of-00001.tfrecord"]}},
    {"name": "parse", "op": "map", "inputs": ["read"], "map": {"udf": [
      {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}}]}},
    {"name": "work", "op": "map", "inputs": ["parse"], "map": {"udf": [)" + map_steps + R"(]}},
    {"name": "keep", "op": "filter", "inputs": ["work"], "filter": {"predicate": [
      {"op": "label_in", "args": {"component": 1, "max": 499}}]}},
    {"name": "batch", "op": "batch", "inputs": ["keep"], "batch": {"batch_size": 4}}]})",
                 2);
  b.Snapshot(0);
  auto& s = b.Snapshot(1);
  TraceBuilder::Node(s, "read", {480, 480 * 4000, 4'000'000, 480 * 4000, 0});
  TraceBuilder::Node(s, "parse", {480, 480 * 4000, 10'000'000, 0, 480}).set_bytes_consumed(480 * 4000);
  TraceBuilder::Node(s, "work", {480, 480 * 3072, 960'000'000, 0, 480}).set_bytes_consumed(480 * 4000);
  TraceBuilder::Node(s, "keep", {240, 240 * 3072, 1'000'000, 0, 480}).set_bytes_consumed(480 * 3072);
  TraceBuilder::Node(s, "batch", {60, 240 * 3072, 2'000'000, 0, 240});
  auto loaded = analysis::LoadTrace(b.trace(), analysis::WindowSpec{}, "images.json");
  if (!loaded.ok()) return loaded.status();
  analysis::AnalysisOptions aopt;
  aopt.solve_programs = true;
  auto traced = analysis::Analyze(*loaded, aopt);
  if (!traced.ok()) return traced.status();
  options.verify = RunBoth(dir, 16);
  return rewrite::SearchShapes(*loaded, std::move(*traced), aopt, rewrite::RewriteOptions{}, options);
}

TEST_CASE("verification drops a move planted against the rules, and keeps a legal one", "[shape][verify]") {
  const ScopedTempDir dir = runtime::testing::ImageDir("plumber-shape-verify-", 24, 48, 5);

  // The crop is random: its window follows each element's index, which
  // the filter above it would change. The rules refuse it; planted, the
  // model prices it (the crop would cut half the images) and the run
  // finds other crops.
  rewrite::ShapeSearchOptions planted;
  planted.planted.push_back({rewrite::ShapeKind::kMoveAbove, "keep", "work", "planted against the rules",
                             "filter above a random map (planted)"});
  const std::string crop =
      R"({"op": "decode_jpeg"}, {"op": "random_crop", "args": {"height": 32, "width": 32, "seed": 7}})";
  auto refused = SearchImages(dir.path(), crop, planted);
  INFO(refused.status().ToString());
  REQUIRE(refused.ok());
  const auto& shape = refused->rewrite.shape;
  CHECK(shape.applied.empty());
  REQUIRE(shape.dropped.size() == 1);
  CHECK_THAT(shape.dropped[0].why,
             Catch::StartsWith("rule 'filter above a random map (planted)' failed verification: element "));
  // The rewrite keeps the traced order.
  const schema::Pipeline& kept = refused->rewrite.pipeline;
  CHECK(kept.nodes(2).name() == "work");
  CHECK(kept.nodes(3).name() == "keep");

  // A deterministic decode and resize, on data vouched for: the move is
  // legal, priced, run and made.
  rewrite::ShapeSearchOptions valid;
  valid.legality.assume_valid_data = true;
  auto moved = SearchImages(dir.path(),
                            R"({"op": "decode_jpeg"}, {"op": "resize", "args": {"height": 32, "width": 32}})", valid);
  INFO(moved.status().ToString());
  REQUIRE(moved.ok());
  REQUIRE(moved->rewrite.shape.applied.size() == 1);
  CHECK(moved->rewrite.shape.applied[0].verification == "same");
  CHECK(moved->rewrite.shape.dropped.empty());
  CHECK(moved->rewrite.pipeline.nodes(2).name() == "keep");
}

// Two random maps on images: fused, they draw what they drew (the steps
// keep their order and index); the flip moved above the crop, which no rule
// allows (a map never moves above a map), flips other pixels.
TEST_CASE("random maps: fused they keep the output, swapped they do not", "[shape][verify]") {
  const ScopedTempDir dir = runtime::testing::ImageDir("plumber-shape-random-", 12, 40);
  auto p = ParsePipeline(R"({"nodes": [
    {"name": "read", "op": "tfrecord", "tfrecord": {"files": ["train-00000-of-00001.tfrecord"]}},
    {"name": "decode", "op": "map", "inputs": ["read"], "map": {"udf": [
      {"op": "parse_example", "args": {"features": ["image/encoded"]}}, {"op": "decode_jpeg"}]}},
    {"name": "crop", "op": "map", "inputs": ["decode"], "map": {"udf": [
      {"op": "random_crop", "args": {"height": 24, "width": 24, "seed": 3}}]}},
    {"name": "flip", "op": "map", "inputs": ["crop"], "map": {"parallelism": 2, "udf": [
      {"op": "random_flip_left_right", "args": {"seed": 4}}]}}]})",
                         "random maps");
  REQUIRE(p.ok());
  const ProgramGraph g = runtime::testing::Graph(*p);
  REQUIRE(CanFuseMaps(g, g.Find("flip"), g.Find("crop")).legal);
  const auto swap = CanMoveAbove(g, g.Find("flip"), g.Find("crop"), {.assume_valid_data = true});
  CHECK_FALSE(swap.legal);
  CHECK(swap.reason == "only a filter, take, skip or shuffle moves above its input, not a map");

  schema::Pipeline fused = *p;
  REQUIRE(rewrite::FuseMaps(&fused, "flip", "crop").ok());
  auto same = optimize::CompareOutputs(Env::Default(), *p, fused, dir.path(), 100, false);
  REQUIRE(same.ok());
  CHECK(same->compared == 12);
  CHECK(same->same);

  schema::Pipeline swapped = *p;
  REQUIRE(rewrite::MoveAbove(&swapped, "flip", "crop").ok());
  auto differs = optimize::CompareOutputs(Env::Default(), *p, swapped, dir.path(), 100, false);
  REQUIRE(differs.ok());
  CHECK_FALSE(differs->same);
}

// A random valid program over range(n): maps of add or cpu_burn (some
// pooled), filters on the value, takes, skips and shuffles, then a batch.
schema::Pipeline RandomProgram(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::string json = R"({"name": "p", "nodes": [{"name": "n0", "op": "range", "range": {"stop": )" +
                     std::to_string(50 + pick(250)) + "}}";
  const int ops = 2 + pick(6);
  for (int i = 1; i <= ops; ++i) {
    const std::string head = R"(, {"name": "n)" + std::to_string(i) + R"(", "inputs": ["n)" + std::to_string(i - 1) +
                             R"("], )";
    switch (pick(6)) {
      case 0:
      case 1: {
        const std::string step = pick(2) == 0
                                     ? R"({"op": "add", "args": {"value": )" + std::to_string(pick(9) - 4) + "}}"
                                     : R"({"op": "cpu_burn", "args": {"micros": 1}})";
        json += head + R"("op": "map", "map": {"parallelism": )" + std::to_string(1 + pick(3)) + R"(, "udf": [)" +
                step + "]}}";
        break;
      }
      case 2:
        json += head + R"("op": "filter", "filter": {"predicate": [{"op": "label_in", "args": {"min": )" +
                std::to_string(pick(40)) + R"(, "max": )" + std::to_string(60 + pick(200)) + "}}]}}";
        break;
      case 3:
        json += head + R"("op": "take", "take": {"count": )" + std::to_string(10 + pick(200)) + "}}";
        break;
      case 4:
        json += head + R"("op": "skip", "skip": {"count": )" + std::to_string(pick(30)) + "}}";
        break;
      default:
        json += head + R"("op": "shuffle", "shuffle": {"buffer_size": )" + std::to_string(1 + pick(20)) +
                R"(, "seed": )" + std::to_string(pick(100)) + "}}";
    }
  }
  json += R"(, {"name": "out", "op": "batch", "inputs": ["n)" + std::to_string(ops) +
          R"("], "batch": {"batch_size": )" + std::to_string(1 + pick(8)) + "}}]}";
  auto p = ParsePipeline(json, "random program");
  INFO(json);
  REQUIRE(p.ok());
  return *p;
}

TEST_CASE("random legal move sequences on random programs keep the first elements, in order",
          "[shape][property]") {
  std::mt19937 rng(20261207);
  std::map<std::string, int> made;  // by rule
  for (int program = 0; program < 120; ++program) {
    const schema::Pipeline original = RandomProgram(rng);
    schema::Pipeline p = original;
    std::string applied;
    for (int step = 0; step < 5; ++step) {
      const ProgramGraph g = runtime::testing::Graph(p);
      const auto changes = rewrite::LegalShapeChanges(g, {});
      if (changes.empty()) break;
      const auto& c = changes[rng() % changes.size()];
      REQUIRE(rewrite::ApplyShapeChange(&p, c).ok());
      applied += rewrite::DescribeChange(c) + "; ";
      ++made[c.rule];
    }
    if (applied.empty()) continue;
    auto check = optimize::CompareOutputs(Env::Default(), original, p, "", 1000, /*any_order=*/false);
    INFO(SerializePipeline(original, Encoding::kJson));
    INFO(applied);
    REQUIRE(check.ok());
    CHECK(check->difference == "");
    CHECK(check->same);
  }
  // Every rule was exercised.
  for (const char* rule : {"filter above map", "take above map", "skip above map", "shuffle above map", "map fusion",
                           "map and filter fusion"}) {
    INFO(rule);
    CHECK(made[rule] >= 5);
  }
}

}  // namespace
}  // namespace plumber
