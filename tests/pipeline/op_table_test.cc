// The op table answers for every op: each row is complete for what it
// declares, its accessors agree with each other, and its cardinality rule,
// threads and randomness follow from the node's parameters; and every TF
// dataset type the importers and the advice know becomes a row of it.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "pipeline/op_table.h"
#include "pipeline/tf_types.h"
#include "pipeline/udf_table.h"
#include "traceio/pipeline_io.h"

using namespace plumber;

namespace {

schema::Node ParseNode(const std::string& json) {
  auto p = ParsePipeline(R"({"nodes": [)" + json + "]}", "test");
  REQUIRE(p.ok());
  REQUIRE(p->nodes_size() == 1);
  return p->nodes(0);
}

// Cardinalities the test states for a node's inputs and function, and the
// flow a filter measured.
class FixedInputs final : public CardinalityInputs {
 public:
  Cardinality input = Cardinality::Exact(10);
  Cardinality function = Cardinality::Exact(3);
  Cardinality files = Cardinality::Exact(7);
  std::optional<Flow> flow;
  Cardinality Input(int k) override { return k == 0 ? input : Cardinality::Unknown("no input"); }
  Cardinality Function() override { return function; }
  Cardinality FromFiles() override { return files; }
  std::optional<Flow> MeasuredFlow() override { return flow; }
};

Cardinality CardOf(const std::string& json, FixedInputs in = {}) {
  const schema::Node node = ParseNode(json);
  const OpDef* def = FindOp(node.op());
  REQUIRE(def != nullptr);
  return def->cardinality(node, in);
}

}  // namespace

TEST_CASE("every row is complete for what it declares", "[op_table]") {
  std::set<std::string_view> names;
  std::set<int> params;
  for (const OpDef& op : AllOps()) {
    INFO(op.name);
    CHECK(names.insert(op.name).second);
    CHECK(params.insert(static_cast<int>(op.params_case)).second);
    CHECK(FindOp(op.name) == &op);
    CHECK(op.cardinality != nullptr);
    CHECK(op.min_inputs <= op.max_inputs);
    // A knob the rewrite turns must also be readable.
    // (An imported-only op reports the parallelism it ran with but is never
    // turned.)
    if (!op.imported_only) CHECK((op.set_parallelism == nullptr) == (op.parallelism == nullptr));
    if (op.imported_only) CHECK(op.set_parallelism == nullptr);
    CHECK(op.has_function() == (op.set_function != nullptr));
    CHECK(op.has_function() == (op.cycle_length != nullptr));
    CHECK(op.has_function() == (op.set_cycle_length != nullptr));
    CHECK((op.buffer_size == nullptr) == (op.set_buffer_size == nullptr));
    if (op.reads_storage) CHECK(op.files != nullptr);
    if (op.prefetches) CHECK(op.buffer_size != nullptr);
  }
  CHECK(FindOp("batchh") == nullptr);
}

TEST_CASE("parallelism setters and getters agree, and only parallel ops have them", "[op_table]") {
  for (const char* json : {R"({"name": "m", "op": "map", "map": {"udf": [{"op": "add"}]}})",
                           R"({"name": "b", "op": "batch", "batch": {"batch_size": 4}})",
                           R"({"name": "i", "op": "interleave", "interleave": {"function": "f"}})"}) {
    schema::Node node = ParseNode(json);
    const OpDef& op = *FindOp(node.op());
    INFO(node.op());
    REQUIRE(op.parallelizable());
    CHECK(NodeParallelism(node) == 1);
    op.set_parallelism(&node, 6);
    CHECK(NodeParallelism(node) == 6);
  }
  for (const char* name : {"range", "shuffle", "repeat", "padded_batch", "prefetch", "cache", "filter"}) {
    INFO(name);
    CHECK_FALSE(FindOp(name)->parallelizable());
  }
  CHECK(NodeParallelism(ParseNode(R"({"name": "x", "op": "no_such_op"})")) == 1);
}

TEST_CASE("threads follow the runtime's structure", "[op_table]") {
  const auto inline_use = ThreadUse{};
  auto same = [](const ThreadUse& a, const ThreadUse& b) {
    return a.threads == b.threads && a.work == b.work && a.inputs == b.inputs && a.function == b.function;
  };
  // Sequential ops and parallel ops at 1 run on their consumer's thread.
  CHECK(same(NodeThreads(ParseNode(R"({"name": "r", "op": "range", "range": {"stop": 3}})")), inline_use));
  CHECK(same(NodeThreads(ParseNode(R"({"name": "m", "op": "map", "map": {"parallelism": 1}})")), inline_use));
  CHECK(same(NodeThreads(ParseNode(R"({"name": "p", "op": "prefetch", "prefetch": {"buffer_size": 0}})")),
             inline_use));
  // A pool's workers do its work and pull its input.
  const ThreadUse pool = NodeThreads(ParseNode(R"({"name": "m", "op": "map", "map": {"parallelism": 3}})"));
  CHECK(same(pool, {3, Placement::kOwnThreads, Placement::kOwnThreads, Placement::kConsumerThread}));
  CHECK(same(NodeThreads(ParseNode(R"({"name": "b", "op": "batch", "batch": {"batch_size": 2, "parallelism": 2}})")),
             {2, Placement::kOwnThreads, Placement::kOwnThreads, Placement::kConsumerThread}));
  // A prefetch moves its input to one thread of its own.
  CHECK(same(NodeThreads(ParseNode(R"({"name": "p", "op": "prefetch", "prefetch": {"buffer_size": 4}})")),
             {1, Placement::kConsumerThread, Placement::kOwnThreads, Placement::kConsumerThread}));
  // A parallel interleave reads its open datasets on its workers.
  CHECK(same(NodeThreads(ParseNode(
                 R"({"name": "i", "op": "interleave", "interleave": {"function": "f", "cycle_length": 4, "parallelism": 4}})")),
             {4, Placement::kConsumerThread, Placement::kConsumerThread, Placement::kOwnThreads}));
}

TEST_CASE("cardinality rules of each op", "[op_table]") {
  CHECK(CardOf(R"({"name": "r", "op": "range", "range": {"start": 2, "stop": 12, "step": 3}})").value == 4);
  CHECK(CardOf(R"({"name": "l", "op": "list_files", "list_files": {"files": ["a", "b"]}})").value == 2);
  CHECK(CardOf(R"({"name": "l", "op": "list_files", "list_files": {"pattern": "*.tfrecord"}})").kind ==
        Cardinality::Kind::kUnknown);
  CHECK(CardOf(R"({"name": "t", "op": "tfrecord", "tfrecord": {"files": ["a"]}})").value == 7);
  CHECK(CardOf(R"({"name": "m", "op": "map", "map": {}})").value == 10);
  CHECK(CardOf(R"({"name": "b", "op": "batch", "batch": {"batch_size": 4}})").value == 3);
  CHECK(CardOf(R"({"name": "b", "op": "batch", "batch": {"batch_size": 4, "drop_remainder": true}})").value == 2);
  CHECK(CardOf(R"({"name": "b", "op": "padded_batch", "padded_batch": {"batch_size": 3}})").value == 4);
  CHECK(CardOf(R"({"name": "t", "op": "take", "take": {"count": 4}})").value == 4);
  CHECK(CardOf(R"({"name": "t", "op": "take", "take": {"count": -1}})").value == 10);
  CHECK(CardOf(R"({"name": "s", "op": "skip", "skip": {"count": 4}})").value == 6);
  CHECK(CardOf(R"({"name": "s", "op": "skip", "skip": {"count": -1}})").value == 0);
  CHECK(CardOf(R"({"name": "r", "op": "repeat", "repeat": {"count": 3}})").value == 30);
  CHECK(CardOf(R"({"name": "r", "op": "repeat"})").kind == Cardinality::Kind::kInfinite);
  CHECK(CardOf(R"({"name": "i", "op": "interleave", "interleave": {"function": "f"}})").value == 30);

  FixedInputs infinite;
  infinite.input = Cardinality::Infinite("forever");
  CHECK(CardOf(R"({"name": "t", "op": "take", "take": {"count": 5}})", infinite).value == 5);
  // As tf.data answers: skip(-1) over an infinite input never ends, and
  // repeat(0) is empty whatever its input.
  CHECK(CardOf(R"({"name": "s", "op": "skip", "skip": {"count": -1}})", infinite).kind == Cardinality::Kind::kInfinite);
  CHECK(CardOf(R"({"name": "r", "op": "repeat", "repeat": {"count": 0}})", infinite).value == 0);
  FixedInputs unknown;
  unknown.input = Cardinality::Unknown("not read");
  CHECK(CardOf(R"({"name": "s", "op": "skip", "skip": {"count": -1}})", unknown).kind == Cardinality::Kind::kUnknown);
  CHECK(CardOf(R"({"name": "r", "op": "repeat", "repeat": {"count": 0}})", unknown).value == 0);
  CHECK(CardOf(R"({"name": "r", "op": "repeat"})", unknown).kind == Cardinality::Kind::kInfinite);

  // A filter passes the share it passed in the trace; having consumed
  // nothing, it cannot say.
  FixedInputs measured;
  measured.flow = CardinalityInputs::Flow{30, 120};
  const Cardinality f = CardOf(R"({"name": "f", "op": "filter", "filter": {}})", measured);
  CHECK(f.value == 2.5);
  CHECK_FALSE(f.exact);
  CHECK(CardOf(R"({"name": "f", "op": "filter", "filter": {}})").kind == Cardinality::Kind::kUnknown);
}

TEST_CASE("randomness comes from the op and its UDF", "[op_table]") {
  CHECK(NodeIsRandom(ParseNode(R"({"name": "s", "op": "shuffle", "shuffle": {"buffer_size": 8}})")));
  CHECK(NodeIsRandom(ParseNode(R"({"name": "l", "op": "list_files", "list_files": {"pattern": "x", "shuffle": true}})")));
  CHECK_FALSE(NodeIsRandom(ParseNode(R"({"name": "l", "op": "list_files", "list_files": {"pattern": "x", "seed": 3}})")));
  CHECK(NodeIsRandom(ParseNode(
      R"({"name": "m", "op": "map", "map": {"udf": [{"op": "resize", "args": {"height": 2, "width": 2}}, {"op": "random_flip_left_right"}]}})")));
  CHECK_FALSE(NodeIsRandom(ParseNode(R"({"name": "m", "op": "map", "map": {"udf": [{"op": "add"}]}})")));
  CHECK(UdfIsRandom(ParseNode(R"({"name": "m", "op": "map", "map": {"udf": [{"op": "random_crop"}]}})").map().udf()));
}

TEST_CASE("the function edge and the nodes the rewrite inserts", "[op_table]") {
  schema::Node il = ParseNode(R"({"name": "i", "op": "interleave", "interleave": {"function": "read"}})");
  REQUIRE(NodeFunction(il) != nullptr);
  CHECK(*NodeFunction(il) == "read");
  const OpDef& op = *FindOp("interleave");
  op.set_function(&il, "read2");
  op.set_cycle_length(&il, 5);
  CHECK(*NodeFunction(il) == "read2");
  CHECK(op.cycle_length(il) == 5);
  CHECK(NodeFunction(ParseNode(R"({"name": "m", "op": "map"})")) == nullptr);

  const schema::Node cache = MakeCacheNode("c", "decode", "");
  CHECK(FindOp(cache.op())->caches);
  CHECK(cache.inputs(0) == "decode");
  const schema::Node prefetch = MakePrefetchNode("p", "batch", 6);
  CHECK(FindOp(prefetch.op())->prefetches);
  CHECK(FindOp(prefetch.op())->buffer_size(prefetch) == 6);
  const schema::Node repeat = MakeRepeatNode("r", "x", -1);
  CHECK(FindOp(repeat.op())->rereads_input(repeat));
  CHECK_FALSE(FindOp("repeat")->rereads_input(MakeRepeatNode("r", "x", 1)));
}

TEST_CASE("every TF type becomes an op row, found with or without Dataset and version", "[op_table]") {
  for (const TfTypeDef& t : AllTfTypes()) {
    INFO(t.base);
    const OpDef* op = FindOp(t.op);
    REQUIRE(op != nullptr);
    CHECK_FALSE(op->imported_only);
    // A call for the advice only where the rewrite turns a knob: parallelism.
    CHECK(t.call.empty() != op->parallelizable());
    CHECK(FindTfType(t.base) == &t);
  }
  const TfTypeName parts = SplitTfType("ParallelMapDatasetV2");
  CHECK(parts.type == "ParallelMapV2");
  CHECK(parts.base == "ParallelMap");
  CHECK(parts.version == "V2");
  REQUIRE(FindTfType("ParallelMapV2") != nullptr);
  CHECK(FindTfType("ParallelMapV2")->kind == TfKind::kParallelMap);
  CHECK(FindTfType("MapAndBatchDataset")->kind == TfKind::kMapAndBatch);
  CHECK(FindTfType("ParallelInterleaveDatasetV4")->kind == TfKind::kParallelInterleave);
  CHECK(FindTfType("BatchV2")->op == "batch");
  CHECK(FindTfType("TensorSlice") == nullptr);
}

// What each op keeps of its input, stated here for every row: a row added
// without a statement fails, so that no op is moved past by default.
TEST_CASE("each op says what it keeps of its input: order, count, the elements", "[op_table]") {
  struct Want {
    const char* json;
    OpKeeps keeps;
  };
  const std::vector<Want> wants = {
      {R"({"name": "n", "op": "range", "range": {"stop": 5}})", {}},
      {R"({"name": "n", "op": "list_files", "list_files": {"pattern": "x"}})", {}},
      {R"({"name": "n", "op": "tfrecord", "tfrecord": {"files": ["a"]}})", {}},
      {R"({"name": "n", "op": "text_line", "text_line": {"files": ["a"]}})", {}},
      {R"({"name": "n", "op": "map", "map": {"udf": [{"op": "add"}]}})", {true, true, false}},
      {R"({"name": "n", "op": "filter", "filter": {"predicate": [{"op": "length_filter"}]}})", {true, false, true}},
      {R"({"name": "n", "op": "interleave", "interleave": {"function": "f"}})", {}},
      {R"({"name": "n", "op": "shuffle", "shuffle": {"buffer_size": 8}})", {false, true, true}},
      {R"({"name": "n", "op": "repeat", "repeat": {}})", {true, false, true}},
      {R"({"name": "n", "op": "batch", "batch": {"batch_size": 4}})", {true, false, false}},
      {R"({"name": "n", "op": "padded_batch", "padded_batch": {"batch_size": 4}})", {true, false, false}},
      {R"({"name": "n", "op": "prefetch", "prefetch": {}})", {true, true, true}},
      {R"({"name": "n", "op": "cache", "cache": {}})", {true, true, true}},
      {R"({"name": "n", "op": "take", "take": {"count": 3}})", {true, false, true}},
      {R"({"name": "n", "op": "skip", "skip": {"count": 3}})", {true, false, true}},
      {R"({"name": "n", "op": "opaque", "opaque": {}})", {}},
  };
  std::set<std::string> stated;
  for (const auto& w : wants) {
    const schema::Node node = ParseNode(w.json);
    INFO(node.op());
    stated.insert(node.op());
    const OpKeeps k = NodeKeeps(node);
    CHECK(k.order == w.keeps.order);
    CHECK(k.count == w.keeps.count);
    CHECK(k.elements == w.keeps.elements);
  }
  for (const auto& row : AllOps()) {
    INFO(row.name);
    CHECK(stated.count(std::string(row.name)) == 1);
    // Only a filter, take, skip and shuffle have a rule for moving above a
    // map.
    const MovesAboveMap want = row.name == "filter"    ? MovesAboveMap::kPredicate
                               : row.name == "take"    ? MovesAboveMap::kPrefix
                               : row.name == "skip"    ? MovesAboveMap::kSkipsPrefix
                               : row.name == "shuffle" ? MovesAboveMap::kPermutes
                                                       : MovesAboveMap::kNever;
    CHECK(row.moves_above_map == want);
  }
  // A parallel map told it need not keep its order does not.
  CHECK_FALSE(NodeKeeps(ParseNode(R"({"name": "n", "op": "map", "map": {"udf": [{"op": "add"}], "parallelism": 4,
                                      "deterministic": false}})"))
                  .order);
  CHECK(NodeKeeps(ParseNode(R"({"name": "n", "op": "map", "map": {"udf": [{"op": "add"}], "parallelism": 4}})")).order);
}

// What each UDF op does to an element, stated for every row, and the rules
// that tie the declarations together.
TEST_CASE("each UDF op says what it reads and writes, whether it can fail, and what its cost follows",
          "[udf_table]") {
  struct Want {
    Touches reads, writes;
    bool can_fail;
    CostFollows cost;
  };
  using T = Touches;
  using C = CostFollows;
  const std::map<std::string, Want> wants = {
      {"parse_example", {T::kComponent, T::kElement, true, C::kBytes}},
      {"decode_jpeg", {T::kComponent, T::kComponent, true, C::kBytes}},
      {"random_crop", {T::kComponent, T::kComponent, true, C::kBytes}},
      {"random_flip_left_right", {T::kComponent, T::kComponent, false, C::kBytes}},
      {"resize", {T::kComponent, T::kComponent, false, C::kBytes}},
      {"normalize", {T::kComponent, T::kComponent, false, C::kBytes}},
      {"decompress", {T::kComponent, T::kComponent, true, C::kBytes}},
      {"tokenize", {T::kComponent, T::kComponent, false, C::kBytes}},
      {"length_filter", {T::kComponent, T::kNothing, false, C::kElements}},
      {"label_in", {T::kComponent, T::kNothing, false, C::kElements}},
      {"cpu_burn", {T::kNothing, T::kNothing, false, C::kElements}},
      {"sleep", {T::kNothing, T::kNothing, false, C::kElements}},
      {"add", {T::kComponent, T::kComponent, false, C::kBytes}},
  };
  for (const auto& row : AllUdfOps()) {
    INFO(row.name);
    const auto want = wants.find(std::string(row.name));
    REQUIRE(want != wants.end());
    CHECK(row.reads == want->second.reads);
    CHECK(row.writes == want->second.writes);
    CHECK(row.can_fail == want->second.can_fail);
    CHECK(row.cost == want->second.cost);
    // A predicate keeps or drops and changes nothing; every other op makes
    // one element of one.
    CHECK(row.one_to_one == !row.predicate);
    if (row.predicate) CHECK(row.writes == Touches::kNothing);
    // An op that touches one component is told which by its argument.
    const bool touches_one = row.reads == Touches::kComponent || row.writes == Touches::kComponent;
    bool has_component_arg = false;
    for (const auto& arg : row.args) has_component_arg = has_component_arg || arg.name == "component";
    CHECK(touches_one == has_component_arg);
  }
  CHECK(wants.size() == AllUdfOps().size());

  schema::UdfOp step;
  step.set_op("add");
  CHECK(UdfStepComponent(step) == 0);
  (*step.mutable_args())["component"].set_number_value(2);
  CHECK(UdfStepComponent(step) == 2);
}
