// The legality rules of shape changes (pipeline/legal_moves.h), each both
// ways: a filter, take or skip above a map; two maps fused; a filter fused
// into a map; and what no rule allows (crossing a shuffle, batch, repeat,
// interleave, cache or prefetch, imported ops).
#include <catch2/catch.hpp>

#include <string>

#include "pipeline/program_graph.h"
#include "pipeline/legal_moves.h"
#include "traceio/pipeline_io.h"

namespace plumber {
namespace {

// range -> `lower` -> `upper`, the last the output. `lower` and `upper` are
// node objects without names or inputs.
ProgramGraph Pair(const std::string& lower, const std::string& upper, const std::string& imported = "") {
  const std::string json = R"({"nodes": [{"name": "src", "op": "range", "range": {"stop": 100}},
      {"name": "lower", "inputs": ["src"], )" + lower + R"(},
      {"name": "upper", "inputs": ["lower"], )" + upper + "}]}";
  auto p = ParsePipeline(json, "test");
  INFO(json);
  REQUIRE(p.ok());
  if (!imported.empty()) p->mutable_nodes(1)->set_imported_type(imported);
  auto g = ProgramGraph::Build(*p, "test");
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

std::string Map(const std::string& steps) { return R"("op": "map", "map": {"udf": [)" + steps + "]}"; }
const std::string kLabelFilter =
    R"("op": "filter", "filter": {"predicate": [{"op": "label_in", "args": {"component": 1, "values": [3]}}]})";
const std::string kFilterOnZero =
    R"("op": "filter", "filter": {"predicate": [{"op": "label_in", "args": {"component": 0, "min": 10}}]})";

MoveVerdict Move(const ProgramGraph& g) { return CanMoveAbove(g, g.Find("upper"), g.Find("lower")); }

TEST_CASE("a filter moves above a deterministic map that cannot fail and writes nothing it reads", "[legal_moves]") {
  const auto resize = Move(Pair(Map(R"({"op": "resize", "args": {"height": 8, "width": 8}})"), kLabelFilter));
  CHECK(resize.legal);
  CHECK(resize.reason ==
        "lower is deterministic, cannot fail and writes nothing upper's predicate reads: the same elements pass, in "
        "the same order");
  // Synthetic work touches no component.
  CHECK(Move(Pair(Map(R"({"op": "cpu_burn", "args": {"micros": 5}})"), kFilterOnZero)).legal);
}

TEST_CASE("a filter stays below a map that writes what it reads, is random, or can fail", "[legal_moves]") {
  const auto writes = Move(Pair(Map(R"({"op": "add", "args": {"value": 1}})"), kFilterOnZero));
  CHECK_FALSE(writes.legal);
  CHECK(writes.reason == "lower writes component 0, which upper's predicate reads");
  // The same map on another component is no obstacle.
  CHECK(Move(Pair(Map(R"({"op": "add", "args": {"value": 1, "component": 2}})"), kFilterOnZero)).legal);

  const auto random = Move(Pair(Map(R"({"op": "random_flip_left_right"})"), kLabelFilter));
  CHECK_FALSE(random.legal);
  CHECK(random.reason ==
        "lower is random (random_flip_left_right): its draws follow each element's index, which upper above it "
        "would change");

  const auto fails = Move(Pair(Map(R"({"op": "decode_jpeg"})"), kLabelFilter));
  CHECK_FALSE(fails.legal);
  CHECK(fails.reason == "lower can fail on bad data (decode_jpeg): upper above it would hide the failures of the "
                        "elements it drops");
  // parse_example replaces the whole element (and can fail).
  CHECK_FALSE(Move(Pair(Map(R"({"op": "parse_example"})"), kLabelFilter)).legal);
}

TEST_CASE("a take moves above any map, a skip only above a deterministic one that cannot fail", "[legal_moves]") {
  const std::string take = R"("op": "take", "take": {"count": 5})";
  const std::string skip = R"("op": "skip", "skip": {"count": 5})";
  const std::string crop = R"({"op": "random_crop", "args": {"height": 4, "width": 4}})";
  CHECK(Move(Pair(Map(crop), take)).legal);
  CHECK(Move(Pair(Map(R"({"op": "decode_jpeg"})"), take)).legal);
  CHECK(Move(Pair(Map(R"({"op": "resize", "args": {"height": 8, "width": 8}})"), skip)).legal);
  const auto random = Move(Pair(Map(crop), skip));
  CHECK_FALSE(random.legal);
  CHECK_THAT(random.reason, Catch::StartsWith("lower is random (random_crop)"));
  CHECK_FALSE(Move(Pair(Map(R"({"op": "decompress", "args": {"format": "zstd"}})"), skip)).legal);
}

TEST_CASE("nothing moves above a shuffle, batch, repeat, cache or prefetch, and only filter, take, skip move",
          "[legal_moves]") {
  for (const std::string lower : {R"("op": "shuffle", "shuffle": {"buffer_size": 8})",
                                  R"("op": "batch", "batch": {"batch_size": 4})", R"("op": "repeat", "repeat": {})",
                                  R"("op": "cache", "cache": {})", R"("op": "prefetch", "prefetch": {})"}) {
    INFO(lower);
    const auto v = Move(Pair(lower, R"("op": "take", "take": {"count": 5})"));
    CHECK_FALSE(v.legal);
    CHECK_THAT(v.reason, Catch::StartsWith("no rule moves a take above a "));
  }
  const auto map_up = Move(Pair(Map(R"({"op": "add"})"), Map(R"({"op": "add"})")));
  CHECK_FALSE(map_up.legal);
  CHECK(map_up.reason == "only a filter, take, skip or shuffle moves above its input, not a map");
}

TEST_CASE("a shuffle moves above a deterministic map that cannot fail, never above a random one",
          "[legal_moves]") {
  const std::string shuffle = R"("op": "shuffle", "shuffle": {"buffer_size": 16, "seed": 3})";
  const auto resize = Move(Pair(Map(R"({"op": "resize", "args": {"height": 8, "width": 8}})"), shuffle));
  CHECK(resize.legal);
  CHECK(resize.reason ==
        "lower is deterministic and cannot fail, and upper's draws never depend on what the elements hold: it gives "
        "the same permutation before lower as after it");
  const auto flip = Move(Pair(Map(R"({"op": "random_flip_left_right"})"), shuffle));
  CHECK_FALSE(flip.legal);
  CHECK_THAT(flip.reason, Catch::StartsWith("lower is random (random_flip_left_right)"));
  const auto decode = Move(Pair(Map(R"({"op": "decode_jpeg"})"), shuffle));
  CHECK_FALSE(decode.legal);
  CHECK(decode.reason ==
        "lower can fail on bad data (decode_jpeg): upper above it would move where a bad record stops the pipeline");
}

TEST_CASE("on data assumed valid a decode counts as unable to fail, a random map still blocks", "[legal_moves]") {
  const LegalityOptions valid{.assume_valid_data = true};
  const ProgramGraph decode = Pair(Map(R"({"op": "decode_jpeg"})"), kLabelFilter);
  const auto moved = CanMoveAbove(decode, decode.Find("upper"), decode.Find("lower"), valid);
  CHECK(moved.legal);
  CHECK(moved.reason ==
        "lower is deterministic, cannot fail on data assumed valid and writes nothing upper's predicate reads: the "
        "same elements pass, in the same order");
  CHECK_FALSE(Move(decode).legal);  // not without the user's word
  const ProgramGraph crop = Pair(Map(R"({"op": "random_crop", "args": {"height": 4, "width": 4}})"), kLabelFilter);
  CHECK_FALSE(CanMoveAbove(crop, crop.Find("upper"), crop.Find("lower"), valid).legal);
  // parse_example writes the whole element, which the predicate reads.
  const ProgramGraph parse = Pair(Map(R"({"op": "parse_example"})"), kLabelFilter);
  const auto whole = CanMoveAbove(parse, parse.Find("upper"), parse.Find("lower"), valid);
  CHECK_FALSE(whole.legal);
  CHECK(whole.reason == "lower writes the whole element, which upper's predicate reads");
}

TEST_CASE("an imported op never moves", "[legal_moves]") {
  const auto v = Move(Pair(Map(R"({"op": "cpu_burn", "args": {"micros": 5}})"), kLabelFilter, "ParallelMapDatasetV2"));
  CHECK_FALSE(v.legal);
  CHECK(v.reason == "lower is imported: plumber cannot see what it does, so it never moves");
  CHECK_FALSE(CanFuseMaps(Pair(Map(R"({"op": "add"})"), Map(R"({"op": "add"})"), "MapDataset"), 2, 1).legal);
}

TEST_CASE("an imported filter above an imported map: possible only on conditions the user must check",
          "[legal_moves]") {
  // Both imported, as a tf.data dump gives them: no UDF steps to read.
  auto imported = [](const std::string& lower, const std::string& upper) {
    auto p = ParsePipeline(R"({"nodes": [{"name": "src", "op": "range", "range": {"stop": 100}},
        {"name": "lower", "inputs": ["src"], )" + lower + R"(},
        {"name": "upper", "inputs": ["lower"], )" + upper + "}]}",
                           "test");
    REQUIRE(p.ok());
    p->mutable_nodes(1)->set_imported_type("ParallelMapV2");
    p->mutable_nodes(2)->set_imported_type("Filter");
    p->set_imported_from("a tf.data dump");
    auto g = ProgramGraph::Build(*p, "test");
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    return std::move(*g);
  };
  const ProgramGraph g = imported(R"("op": "map", "map": {})", R"("op": "filter", "filter": {})");
  CHECK_FALSE(Move(g).legal);  // never proven
  const auto v = ImportedMoveConditions(g, g.Find("upper"), g.Find("lower"));
  CHECK(v.legal);
  CHECK(v.reason ==
        "if lower's function is deterministic, never fails on your data, and passes through unchanged everything "
        "upper's predicate reads (a label, say), so that the predicate can take lower's input: then the same "
        "elements pass, in the same order");
  const ProgramGraph take = imported(R"("op": "map", "map": {})", R"("op": "take", "take": {"count": 3})");
  CHECK(ImportedMoveConditions(take, 2, 1).reason ==
        "the first elements of lower are the same elements, with the same indices, either way");
  // Nothing moves above a batch, imported or not.
  const ProgramGraph batch =
      imported(R"("op": "batch", "batch": {"batch_size": 4})", R"("op": "filter", "filter": {})");
  const auto refused = ImportedMoveConditions(batch, 2, 1);
  CHECK_FALSE(refused.legal);
  CHECK(refused.reason == "no rule moves a filter above a batch");
}

TEST_CASE("two adjacent maps fuse, anything else does not", "[legal_moves]") {
  const ProgramGraph maps = Pair(Map(R"({"op": "random_flip_left_right"})"), Map(R"({"op": "normalize"})"));
  const auto fused = CanFuseMaps(maps, maps.Find("upper"), maps.Find("lower"));
  CHECK(fused.legal);
  CHECK(fused.reason ==
        "one map running lower's steps then upper's gives each element the same steps in the same order, with the "
        "same index");
  const ProgramGraph filter = Pair(Map(R"({"op": "add"})"), kLabelFilter);
  const auto refused = CanFuseMaps(filter, filter.Find("upper"), filter.Find("lower"));
  CHECK_FALSE(refused.legal);
  CHECK(refused.reason == "only two maps fuse into one");
  // Not adjacent: src is not upper's input.
  CHECK_FALSE(CanFuseMaps(maps, maps.Find("upper"), maps.Find("src")).legal);
}

TEST_CASE("a filter fuses into the one-to-one map below it, whatever the map writes, fails on or draws",
          "[legal_moves]") {
  // The predicate still runs after every step of the map, so what stops a
  // move above the map (it writes what the predicate reads, is random, can
  // fail) is no obstacle to a fusion.
  for (const std::string& steps : {std::string(R"({"op": "add", "args": {"value": 1}})"),
                                   std::string(R"({"op": "random_flip_left_right"})"),
                                   std::string(R"({"op": "decode_jpeg"})")}) {
    const ProgramGraph g = Pair(Map(steps), kFilterOnZero);
    INFO(steps);
    const auto v = CanFuseFilter(g, g.Find("upper"), g.Find("lower"));
    CHECK(v.legal);
    CHECK(v.reason == "lower makes one element of each, in order: testing upper's predicate at the end of its steps "
                      "drops the same elements, with the same index");
  }
}

TEST_CASE("a filter does not fuse into what is not a map keeping every element, nor randomly into a sloppy map",
          "[legal_moves]") {
  auto fuse = [](const ProgramGraph& g) { return CanFuseFilter(g, g.Find("upper"), g.Find("lower")); };
  const auto shuffle = fuse(Pair(R"("op": "shuffle", "shuffle": {"buffer_size": 4})", kLabelFilter));
  CHECK_FALSE(shuffle.legal);
  CHECK(shuffle.reason == "only a filter fuses into the map below it, and only into one that keeps every element");
  // A map that already drops elements (a filter fused before) is not one-to-one.
  CHECK_FALSE(fuse(Pair(R"("op": "map", "map": {"udf": [{"op": "add"}], "keep_if": [{"op": "label_in",
      "args": {"component": 0, "min": 3}}]})",
                        kLabelFilter))
                  .legal);
  // Two maps are map fusion's business.
  CHECK_FALSE(fuse(Pair(Map(R"({"op": "add"})"), Map(R"({"op": "add"})"))).legal);
  // A random predicate draws by each element's position in the filter's
  // input: a map that does not keep order changes it.
  const std::string random_predicate = R"("op": "filter", "filter": {"predicate": [{"op": "random_flip_left_right"},
      {"op": "length_filter", "args": {"component": 0, "min": 1}}]})";
  const auto sloppy = fuse(Pair(R"("op": "map", "map": {"udf": [{"op": "add"}], "parallelism": 2,
      "deterministic": false})",
                                random_predicate));
  CHECK_FALSE(sloppy.legal);
  CHECK(sloppy.reason == "upper's predicate is random (random_flip_left_right) and lower does not keep order: its "
                         "draws follow each element's position, which would change");
  CHECK(fuse(Pair(R"("op": "map", "map": {"udf": [{"op": "add"}], "parallelism": 2})", random_predicate)).legal);
  // Imported ops never fuse.
  const ProgramGraph imported = Pair(Map(R"({"op": "add"})"), kLabelFilter, "ParallelMapDatasetV2");
  CHECK_FALSE(fuse(imported).legal);
}

}  // namespace
}  // namespace plumber
