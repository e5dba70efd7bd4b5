// The program graph: edges resolved once, the interleave function edge
// included; built only from valid programs, so a cycle or a dangling name
// is refused with the file and the node, never walked.
#include <catch2/catch.hpp>

#include <chrono>

#include "pipeline/program_graph.h"
#include "traceio/pipeline_io.h"

using namespace plumber;

namespace {

StatusOr<ProgramGraph> Graph(const std::string& json) {
  auto p = ParsePipeline(json, "test.json");
  REQUIRE(p.ok());
  return ProgramGraph::Build(std::move(*p), "test.json");
}

// files -> shards (interleave, function: read <- name) -> decode -> batch
const char* kImage = R"({"name": "image", "nodes": [
  {"name": "batch", "op": "batch", "inputs": ["decode"], "batch": {"batch_size": 2}},
  {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"]}},
  {"name": "read", "op": "tfrecord"},
  {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read", "cycle_length": 2}},
  {"name": "decode", "op": "map", "inputs": ["shards"], "map": {"udf": [{"op": "decode_jpeg"}]}}]})";

}  // namespace

TEST_CASE("edges, function, consumers, output and depth", "[program_graph]") {
  auto g = Graph(kImage);
  REQUIRE(g.ok());
  const int batch = g->Find("batch"), files = g->Find("files"), read = g->Find("read"),
            shards = g->Find("shards"), decode = g->Find("decode");
  CHECK(g->Find("nope") == -1);
  CHECK(g->output() == batch);
  CHECK(g->inputs(shards) == std::vector<int>{files});
  CHECK(g->function(shards) == read);
  CHECK(g->function(decode) == -1);
  CHECK(g->children(shards) == std::vector<int>{files, read});
  CHECK(g->consumers(read) == std::vector<int>{shards});
  CHECK(g->consumers(files) == std::vector<int>{shards});
  CHECK(g->consumers(batch).empty());
  CHECK(g->enclosing_interleave(read) == shards);
  CHECK(g->enclosing_interleave(decode) == -1);
  CHECK(g->depth(batch) == 0);
  CHECK(g->depth(decode) == 1);
  CHECK(g->depth(read) == 3);
  CHECK(g->op(shards).has_function());
}

TEST_CASE("the topological order puts every node after its children", "[program_graph]") {
  auto g = Graph(kImage);
  REQUIRE(g.ok());
  const auto& order = g->topological_order();
  REQUIRE(order.size() == static_cast<size_t>(g->size()));
  std::vector<int> position(g->size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  for (int i = 0; i < g->size(); ++i) {
    for (int j : g->children(i)) CHECK(position[j] < position[i]);
  }
  CHECK(order.back() == g->output());
}

TEST_CASE("invalid programs are refused naming the file and the node", "[program_graph]") {
  struct Case {
    const char* what;
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {"a node reading itself", R"({"nodes": [{"name": "a", "op": "repeat", "inputs": ["a"]}]})",
       "test.json: node 'a': field 'inputs[0]': the node reads from itself (a cycle)"},
      {"a longer cycle", R"({"nodes": [
          {"name": "src", "op": "range", "range": {"stop": 3}},
          {"name": "a", "op": "take", "inputs": ["b"], "take": {"count": 1}},
          {"name": "b", "op": "skip", "inputs": ["a"], "skip": {"count": 1}},
          {"name": "out", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 1}}]})",
       "test.json: node 'a': field 'inputs': the pipeline has a cycle through 'a', 'b'"},
      {"a dangling input", R"({"nodes": [{"name": "b", "op": "batch", "inputs": ["x"], "batch": {"batch_size": 1}}]})",
       "test.json: node 'b': field 'inputs[0]': input 'x' is not a node of the pipeline"},
      {"a dangling function", R"({"nodes": [
          {"name": "f", "op": "list_files", "list_files": {"files": ["a"]}},
          {"name": "i", "op": "interleave", "inputs": ["f"], "interleave": {"function": "gone"}}]})",
       "test.json: node 'i': field 'interleave.function': function 'gone' is not a node of the pipeline"},
      {"a cycle through a function edge", R"({"nodes": [
          {"name": "f", "op": "list_files", "list_files": {"files": ["a"]}},
          {"name": "i", "op": "interleave", "inputs": ["f"], "interleave": {"function": "t"}},
          {"name": "t", "op": "take", "inputs": ["i"], "take": {"count": 1}}]})",
       "test.json: node 'i': field 'inputs': the pipeline has a cycle through 'i', 't'"},
      {"no nodes", R"({"nodes": []})", "test.json: field 'nodes': the pipeline has no nodes"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto g = Graph(c.json);
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(g.status().message(), Catch::StartsWith(c.message));
  }
}

TEST_CASE("a 100,000-node chain builds without deep recursion", "[program_graph]") {
  schema::Pipeline p;
  auto* src = p.add_nodes();
  src->set_name("n0");
  src->set_op("range");
  src->mutable_range()->set_stop(10);
  for (int i = 1; i < 100000; ++i) {
    auto* n = p.add_nodes();
    n->set_name("n" + std::to_string(i));
    n->set_op("take");
    n->add_inputs("n" + std::to_string(i - 1));
    n->mutable_take()->set_count(-1);
  }
  auto g = ProgramGraph::Build(std::move(p), "chain");
  REQUIRE(g.ok());
  CHECK(g->output() == 99999);
  CHECK(g->depth(0) == 99999);
  CHECK(g->topological_order().front() == 0);
}
