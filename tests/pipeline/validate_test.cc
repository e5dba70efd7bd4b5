// One test per validation rule; each checks that the message names the node
// and the field, since that is what lets a user fix the file.
#include <catch2/catch.hpp>

#include "../unit/sample.h"
#include "pipeline/validate.h"

using namespace plumber;

namespace {

std::vector<Problem> Check(const std::string& json) {
  auto p = ParsePipeline(json, "test.json");
  if (!p.ok()) FAIL(p.status().ToString());
  return ValidatePipeline(*p);
}

// Exactly one problem, at this node and field, whose message contains `text`.
void ExpectOne(const std::string& json, const std::string& node, const std::string& field, const std::string& text) {
  auto problems = Check(json);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].node == node);
  CHECK(problems[0].field == field);
  CHECK_THAT(problems[0].message, Catch::Contains(text));
  CHECK_THAT(problems[0].ToString(), Catch::Contains("node '" + node + "'"));
}

}  // namespace

TEST_CASE("valid testdata pipelines have no problems", "[validate]") {
  for (const char* name : {"pipelines/image.json", "pipelines/text.json", "pipelines/cpu.json"}) {
    auto p = LoadProgram(Env::Default(), testing::TestdataPath(name));
    INFO(name);
    CHECK(p.ok());
  }
}

TEST_CASE("a missing input names the node and the input", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "b", "op": "batch", "inputs": ["srcc"], "batch": {"batch_size": 2}}]})",
            "b", "inputs[0]", "'srcc' is not a node");
}

TEST_CASE("a cycle is reported with its nodes", "[validate]") {
  auto problems = Check(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "a", "op": "take", "inputs": ["c"], "take": {"count": 5}},
      {"name": "b", "op": "skip", "inputs": ["a"], "skip": {"count": 1}},
      {"name": "c", "op": "repeat", "inputs": ["b"]},
      {"name": "out", "op": "prefetch", "inputs": ["src"], "prefetch": {"buffer_size": 1}}]})");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].field == "inputs");
  CHECK_THAT(problems[0].message, Catch::Contains("cycle") && Catch::Contains("'a'") && Catch::Contains("'b'") &&
                                      Catch::Contains("'c'"));
  CHECK(problems[0].node == "a");
}

TEST_CASE("a node reading itself is a cycle", "[validate]") {
  auto problems = Check(R"({"nodes": [{"name": "a", "op": "repeat", "inputs": ["a"]}]})");
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].node == "a");
  CHECK_THAT(problems[0].message, Catch::Contains("cycle"));
}

TEST_CASE("two output nodes are named", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "x", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 2}},
      {"name": "y", "op": "take", "inputs": ["src"], "take": {"count": 2}}]})",
            "y", "inputs", "2 output nodes ('x', 'y')");
}

TEST_CASE("a declared output must be the node nothing consumes", "[validate]") {
  auto problems = Check(R"({"output": "src", "nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "x", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 2}}]})");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].field == "output");
  CHECK_THAT(problems[0].message, Catch::Contains("'x'"));
}

TEST_CASE("out-of-range parameters name the field and the value", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "b", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 0}}]})",
            "b", "batch.batch_size", "must be >= 1, got 0");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"parallelism": 0, "udf": [{"op": "add"}]}}]})",
            "m", "map.parallelism", "must be >= 1, got 0");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "p", "op": "prefetch", "inputs": ["src"], "prefetch": {"buffer_size": -1}}]})",
            "p", "prefetch.buffer_size", "must be >= 0, got -1");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "s", "op": "shuffle", "inputs": ["src"], "shuffle": {"buffer_size": 0}}]})",
            "s", "shuffle.buffer_size", "must be >= 1");
  ExpectOne(R"({"nodes": [{"name": "src", "op": "range", "range": {"stop": 10, "step": 0}}]})", "src", "range.step",
            "must not be 0");
}

TEST_CASE("a thread count no machine has is refused before the run starts threads", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"parallelism": 100000, "udf": [{"op": "add"}]}}]})",
            "m", "map.parallelism", "must be at most 1024, got 100000");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "b", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 2, "parallelism": 2000000000}}]})",
            "b", "batch.parallelism", "must be at most 1024");
  ExpectOne(R"({"nodes": [
      {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"]}},
      {"name": "read", "op": "tfrecord"},
      {"name": "i", "op": "interleave", "inputs": ["files"],
       "interleave": {"function": "read", "cycle_length": 5000}}]})",
            "i", "interleave.cycle_length", "must be at most 1024");
}

TEST_CASE("interleave parallelism cannot exceed its cycle length", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"]}},
      {"name": "read", "op": "tfrecord"},
      {"name": "i", "op": "interleave", "inputs": ["files"],
       "interleave": {"function": "read", "cycle_length": 2, "parallelism": 4}}]})",
            "i", "interleave.parallelism", "at most cycle_length (2)");
}

TEST_CASE("an unknown op lists the known ones", "[validate]") {
  ExpectOne(R"({"nodes": [{"name": "src", "op": "rangee"}]})", "src", "op", "unknown op 'rangee' (known: range,");
}

TEST_CASE("an unknown UDF op names its position", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "add"}, {"op": "decod_jpeg"}]}}]})",
            "m", "map.udf[1].op", "unknown UDF op 'decod_jpeg'");
}

TEST_CASE("UDF arguments are checked by name, type and presence", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"],
       "map": {"udf": [{"op": "cpu_burn", "args": {"micro": 5, "micros": 5}}]}}]})",
            "m", "map.udf[0].args.micro", "no argument 'micro'");
  auto problems = Check(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": "5"}}]}}]})");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].field == "map.udf[0].args.micros");
  CHECK_THAT(problems[0].message, Catch::Contains("must be a number"));
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "sleep"}]}}]})",
            "m", "map.udf[0].args.micros", "requires this argument");
}

TEST_CASE("predicates only end filters", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "f", "op": "filter", "inputs": ["src"], "filter": {"predicate": [{"op": "add"}]}}]})",
            "f", "filter.predicate[0].op", "must end in a predicate op");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "length_filter"}]}}]})",
            "m", "map.udf[0].op", "is a predicate");
  // A map's fused filter (keep_if) is checked as a filter's predicate.
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "add"}], "keep_if": [{"op": "add"}]}}]})",
            "m", "map.keep_if[0].op", "must end in a predicate op");
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "add"}],
       "keep_if": [{"op": "label_in", "args": {"min": "1"}}]}}]})",
            "m", "map.keep_if[0].args.min", "must be a number");
}

TEST_CASE("duplicate names and parameters for the wrong op", "[validate]") {
  auto problems = Check(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "src", "op": "take", "inputs": ["src"], "take": {"count": 1}}]})");
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].node == "src");
  CHECK_THAT(problems[0].message, Catch::Contains("used by two nodes"));
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "b", "op": "batch", "inputs": ["src"], "take": {"count": 1}}]})",
            "b", "take", "given to a node whose op is 'batch'");
}

TEST_CASE("a reader needs a source of file names", "[validate]") {
  ExpectOne(R"({"nodes": [{"name": "r", "op": "tfrecord"}]})", "r", "tfrecord.files", "needs files");
  ExpectOne(R"({"nodes": [{"name": "r", "op": "text_line", "text_line": {"files": ["a"], "compression": "LZ4"}}]})", "r",
            "text_line.compression", "unknown compression 'LZ4'");
}

TEST_CASE("an interleave function must exist", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "files", "op": "list_files", "list_files": {"files": ["a"]}},
      {"name": "i", "op": "interleave", "inputs": ["files"], "interleave": {"function": "reader"}}]})",
            "i", "interleave.function", "'reader' is not a node");
}

TEST_CASE("wrong input arity", "[validate]") {
  ExpectOne(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "src2", "op": "range", "inputs": ["src"], "range": {"stop": 10}}]})",
            "src2", "inputs", "'range' takes 0 inputs, got 1");
}

TEST_CASE("LoadProgram names the file, node and field", "[validate]") {
  auto r = LoadProgram(Env::Default(), testing::TestdataPath("bad/cycle.json"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith(testing::TestdataPath("bad/cycle.json") + ": node '"));
}
