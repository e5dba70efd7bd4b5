// The op table's runtime facts (lib/pipeline/op_table.h) against what the
// runtime really does, for every op, so that a row without its cases here
// fails: its thread use and its cardinality.
//
// Thread use: how many threads a node starts, and whether its own work,
// its inputs and its function run on the consumer's thread. The
// thread-group model of the analysis rests on these answers, so each is
// measured, not assumed: threads by counting the pool tasks running,
// placement by where a 1 ms CPU burn is charged (the consumer thread's CPU
// clock against the burning node's total).
//
// Cardinality: each op is built over inputs of every kind (finite, empty,
// infinite, unknown) with every kind of count (positive below and above
// the input's size, 0, negative); the cardinality its dataset reports must
// be what the op's row says of those inputs and, where it is finite, the
// number of elements a real pass yields.
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "harness.h"
#include "pipeline/op_table.h"
#include "runtime/stats.h"
#include "runtime/thread_cache.h"
#include "traceio/record_io.h"

namespace plumber::runtime::testing {
namespace {

// Threads a node runs: the runtime's pools run their workers as tasks of
// the thread cache (thread_cache.h), whose threads outlive a closed pool,
// so the tasks are counted rather than the process's threads.
int Workers() { return RunningPooledTasks(); }

// Which part of the node under test (named "x") the burn exercises.
enum class Burn { kNone, kInput, kWork, kFunction };

struct Case {
  std::string what;
  std::vector<std::string> nodes;  // chained; "x" is the node under test
  std::vector<std::string> extra;  // function nodes, not chained
  Burn burn;
};

const char* kBurn = R"({"name":"burn","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}})";
const char* kRange = R"({"name":"src","op":"range","range":{"stop":100000}})";

std::vector<Case> Cases(const TempDir& dir) {
  const std::string records = dir.File("r.tfrecord");
  std::string data;
  for (int i = 0; i < 8; ++i) data += FrameRecord("record " + std::to_string(i));
  WriteText(records, data);
  WriteText(dir.File("t.txt"), "a\nb\nc\n");
  // f: the interleave function, two burnt elements per opened dataset.
  const std::vector<std::string> fn = {R"({"name":"fsrc","op":"range","range":{"stop":2}})",
                                       R"({"name":"f","op":"map","inputs":["fsrc"],"map":{"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}})"};
  const std::vector<std::string> plain_fn = {R"({"name":"f","op":"range","range":{"stop":2}})"};
  auto over_burn = [](const std::string& x) { return std::vector<std::string>{kRange, kBurn, x}; };
  return {
      {"range", {R"({"name":"x","op":"range","range":{"stop":100}})"}, {}, Burn::kNone},
      {"list_files", {R"({"name":"x","op":"list_files","list_files":{"files":["a","b"]}})"}, {}, Burn::kNone},
      {"tfrecord", {R"({"name":"x","op":"tfrecord","tfrecord":{"files":[")" + records + R"("]}})"}, {}, Burn::kNone},
      {"text_line", {R"({"name":"x","op":"text_line","text_line":{"files":[")" + dir.File("t.txt") + R"("]}})"}, {},
       Burn::kNone},
      {"map inline: its input", over_burn(R"({"name":"x","op":"map","map":{"udf":[{"op":"add"}]}})"), {}, Burn::kInput},
      {"map inline: its work",
       {kRange, R"({"name":"x","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}})"}, {}, Burn::kWork},
      {"map pooled: its input", over_burn(R"({"name":"x","op":"map","map":{"parallelism":3,"udf":[{"op":"add"}]}})"),
       {}, Burn::kInput},
      {"map pooled: its work",
       {kRange, R"({"name":"x","op":"map","map":{"parallelism":3,"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}})"},
       {}, Burn::kWork},
      {"filter", over_burn(R"({"name":"x","op":"filter","filter":{"predicate":[{"op":"length_filter"}]}})"), {},
       Burn::kInput},
      {"interleave sequential: its input", over_burn(R"({"name":"x","op":"interleave","interleave":{"function":"f"}})"),
       plain_fn, Burn::kInput},
      {"interleave sequential: its function", {kRange, R"({"name":"x","op":"interleave","interleave":{"function":"f"}})"},
       fn, Burn::kFunction},
      {"interleave parallel: its input",
       over_burn(R"({"name":"x","op":"interleave","interleave":{"function":"f","cycle_length":2,"parallelism":2}})"),
       plain_fn, Burn::kInput},
      {"interleave parallel: its function",
       {kRange, R"({"name":"x","op":"interleave","interleave":{"function":"f","cycle_length":2,"parallelism":2}})"}, fn,
       Burn::kFunction},
      {"shuffle", over_burn(R"({"name":"x","op":"shuffle","shuffle":{"buffer_size":2}})"), {}, Burn::kInput},
      {"repeat", over_burn(R"({"name":"x","op":"repeat","repeat":{"count":1}})"), {}, Burn::kInput},
      {"batch inline", over_burn(R"({"name":"x","op":"batch","batch":{"batch_size":2}})"), {}, Burn::kInput},
      {"batch pooled", over_burn(R"({"name":"x","op":"batch","batch":{"batch_size":2,"parallelism":2}})"), {},
       Burn::kInput},
      {"padded_batch", over_burn(R"({"name":"x","op":"padded_batch","padded_batch":{"batch_size":2}})"), {},
       Burn::kInput},
      {"prefetch 0", over_burn(R"({"name":"x","op":"prefetch","prefetch":{"buffer_size":0}})"), {}, Burn::kInput},
      {"prefetch 4", over_burn(R"({"name":"x","op":"prefetch","prefetch":{"buffer_size":4}})"), {}, Burn::kInput},
      {"cache", over_burn(R"({"name":"x","op":"cache"})"), {}, Burn::kInput},
      {"take", over_burn(R"({"name":"x","op":"take","take":{"count":-1}})"), {}, Burn::kInput},
      {"skip", over_burn(R"({"name":"x","op":"skip","skip":{"count":1}})"), {}, Burn::kInput},
  };
}

// Where the case says the burn runs, by the op table.
Placement Expected(const ThreadUse& use, Burn burn) {
  switch (burn) {
    case Burn::kInput: return use.inputs;
    case Burn::kWork: return use.work;
    case Burn::kFunction: return use.function;
    case Burn::kNone: break;
  }
  return Placement::kConsumerThread;
}

}  // namespace

TEST_CASE("the op table's thread use matches the runtime for every op", "[threading]") {
  TempDir dir;
  std::set<std::string> covered;
  for (const Case& c : Cases(dir)) {
    INFO(c.what);
    const schema::Pipeline p = Chain(c.nodes, c.extra);
    const schema::Node* x = nullptr;
    for (const auto& n : p.nodes()) {
      if (n.name() == "x") x = &n;
    }
    REQUIRE(x != nullptr);
    covered.insert(x->op());
    const ThreadUse use = NodeThreads(*x);

    // A pool's first opening may create its threads, which costs the
    // opening thread CPU: under ThreadSanitizer some 5 ms a thread, as much
    // as the burns measured below. A first run leaves them in the thread
    // cache (thread_cache.h), so the measured run's consumer pays no start.
    {
      Harness warm(p);
      REQUIRE(warm.build_status().ok());
      auto it = warm.program().output()->MakeIterator(IterCtx{&warm.ctx(), nullptr, nullptr});
      REQUIRE(it.ok());
      Element e;
      bool end = false;
      REQUIRE((*it)->GetNext(&e, &end).ok());
      (*it)->Close();
    }
    Harness h(p);
    REQUIRE(h.build_status().ok());
    const int before = Workers();
    auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
    REQUIRE(it.ok());
    const int64_t cpu0 = ThreadCpuNanos();
    for (int k = 0; k < 12; ++k) {
      Element e;
      bool end = false;
      REQUIRE((*it)->GetNext(&e, &end).ok());
      if (end) break;
    }
    const int64_t consumer_cpu = ThreadCpuNanos() - cpu0;
    CHECK(Workers() - before == use.threads);
    (*it)->Close();
    cpu::Flush();
    CHECK(Workers() == before);
    if (c.burn == Burn::kNone) continue;
    const std::string burner = c.burn == Burn::kWork ? "x" : c.burn == Burn::kFunction ? "f" : "burn";
    const double burnt = static_cast<double>(h.Stats(burner).active_cpu_ns());
    // At least five 1 ms burns happened. Counted in elements, not CPU: under
    // heavy load a preempted neighbour's wall time takes a share of the
    // CPU split (stats.h), and 12 ms of burns were once charged under 5.
    REQUIRE(h.Stats(burner).elements_produced() >= 5);
    REQUIRE(burnt > 0);
    const double share = static_cast<double>(consumer_cpu) / burnt;
    INFO("consumer thread CPU / " << burner << "'s CPU = " << share);
    if (Expected(use, c.burn) == Placement::kConsumerThread) {
      CHECK(share > 0.7);
    } else {
      CHECK(share < 0.3);
    }
  }
  for (const OpDef& op : AllOps()) {
    if (op.imported_only) continue;  // never runs
    INFO("op " << op.name << " has a threading case");
    CHECK(covered.count(std::string(op.name)) == 1);
  }
}

namespace {

// An input below the op under test: nodes chained into one named "in".
struct CardInputKind {
  std::string label;
  std::vector<std::string> nodes;
  Cardinality card;
};

// What the row's rule is told of the inputs this test built; nothing has
// run, so no records per file and no measured flow (as in the runtime).
class KnownCardInputs final : public CardinalityInputs {
 public:
  KnownCardInputs(Cardinality input, std::optional<int64_t> matched) : input_(std::move(input)), matched_(matched) {}
  Cardinality Input(int k) override { return k == 0 ? input_ : Cardinality::Unknown("no input"); }
  // Every interleave case opens range(3) per input element.
  Cardinality Function() override { return Cardinality::Exact(3); }
  Cardinality FromFiles() override { return Cardinality::Unknown("not read"); }
  std::optional<Flow> MeasuredFlow() override { return std::nullopt; }
  std::optional<int64_t> MatchedFiles() override { return matched_; }

 private:
  Cardinality input_;
  std::optional<int64_t> matched_;
};

int64_t ExpectedCardinality(const Cardinality& c) {
  if (c.kind == Cardinality::Kind::kInfinite) return kInfiniteCardinality;
  if (!c.finite()) return kUnknownCardinality;
  REQUIRE(c.exact);
  return static_cast<int64_t>(c.value);
}

const char* CardinalityKindName(int64_t c) {
  return c == kInfiniteCardinality ? "infinite" : c == kUnknownCardinality ? "unknown" : "finite";
}

// One configuration of the op under test, named "x".
struct CardOpCase {
  CardOpCase(std::string n, bool s = false, std::optional<int64_t> m = std::nullopt)
      : node(std::move(n)), source(s), matched(m) {}
  std::string node;
  // Sources take no input kind; list_files with a pattern says how many
  // files it matched.
  bool source;
  std::optional<int64_t> matched;
};

std::string OpNodeJson(const std::string& op, const std::string& params) {
  return R"({"name":"x","op":")" + op + R"(",")" + op + R"(":)" + params + "}";
}

// The configurations of each op: counts 2 and 7 (below and above the
// finite input's 5), 0 and -1 where the op has a count.
std::map<std::string, std::vector<CardOpCase>> CardinalityCases(const TempDir& dir) {
  std::map<std::string, std::vector<CardOpCase>> cases;
  for (const char* r : {R"({"stop":5})", R"({"start":5,"stop":0,"step":-2})", R"({"stop":0})",
                        R"({"start":3,"stop":0})"}) {
    cases["range"].push_back({OpNodeJson("range", r), true});
  }
  cases["list_files"] = {{OpNodeJson("list_files", R"({"files":["a","b","c"]})"), true},
                         {OpNodeJson("list_files", R"({"pattern":")" + dir.File("*.txt") + "\"}"), true, 2}};
  cases["tfrecord"] = {{OpNodeJson("tfrecord", R"({"files":[")" + dir.File("a.txt") + "\"]}"), true}};
  cases["text_line"] = {{OpNodeJson("text_line", R"({"files":[")" + dir.File("a.txt") + "\"]}"), true}};
  cases["map"] = {{OpNodeJson("map", R"({"udf":[{"op":"add"}]})")}, {OpNodeJson("map", R"({"parallelism":2,"udf":[{"op":"add"}]})")}};
  cases["filter"] = {{OpNodeJson("filter", R"({"predicate":[{"op":"length_filter"}]})")}};
  cases["interleave"] = {{OpNodeJson("interleave", R"({"function":"fn","cycle_length":2})")},
                         {OpNodeJson("interleave", R"({"function":"fn","cycle_length":2,"parallelism":2})")}};
  cases["shuffle"] = {{OpNodeJson("shuffle", R"({"buffer_size":2,"seed":1})")}};
  cases["prefetch"] = {{OpNodeJson("prefetch", R"({"buffer_size":0})")}, {OpNodeJson("prefetch", R"({"buffer_size":2})")}};
  cases["cache"] = {{OpNodeJson("cache", "{}")}};
  for (int64_t count : {2, 7, 0, -1}) {
    const std::string c = std::to_string(count);
    cases["take"].push_back({OpNodeJson("take", R"({"count":)" + c + "}")});
    cases["skip"].push_back({OpNodeJson("skip", R"({"count":)" + c + "}")});
    cases["repeat"].push_back({OpNodeJson("repeat", R"({"count":)" + c + "}")});
  }
  cases["repeat"].push_back({OpNodeJson("repeat", "{}")});
  for (int64_t size : {2, 7}) {
    for (const char* drop : {"false", "true"}) {
      const std::string p = R"({"batch_size":)" + std::to_string(size) + R"(,"drop_remainder":)" + drop;
      cases["batch"].push_back({OpNodeJson("batch", p + "}")});
      cases["batch"].push_back({OpNodeJson("batch", p + R"(,"parallelism":2})")});
      cases["padded_batch"].push_back({OpNodeJson("padded_batch", p + "}")});
    }
  }
  return cases;
}

}  // namespace

TEST_CASE("the runtime's cardinality is the op table's, and a finite one is what a pass yields",
          "[cardinality]") {
  TempDir dir;
  WriteText(dir.File("a.txt"), "0\n1\n2\n3\n4\n");
  WriteText(dir.File("b.txt"), "5\n");
  const std::vector<CardInputKind> inputs = {
      {"finite", {R"({"name":"in","op":"range","range":{"stop":5}})"}, Cardinality::Exact(5)},
      {"empty", {R"({"name":"in","op":"range","range":{"stop":0}})"}, Cardinality::Exact(0)},
      {"infinite",
       {R"({"name":"src","op":"range","range":{"stop":5}})", R"({"name":"in","op":"repeat"})"},
       Cardinality::Infinite("forever")},
      // A reader's records are unknown until its files are read.
      {"unknown",
       {R"({"name":"in","op":"text_line","text_line":{"files":[")" + dir.File("a.txt") + "\"]}}"},
       Cardinality::Unknown("not read")},
  };
  const auto cases = CardinalityCases(dir);
  int checked = 0;
  for (const auto& op : AllOps()) {
    if (op.imported_only) continue;
    INFO("op " << op.name);
    auto it = cases.find(std::string(op.name));
    REQUIRE(it != cases.end());  // a row without a cardinality case here
    for (const auto& c : it->second) {
      INFO(c.node);
      for (const auto& in : inputs) {
        if (c.source && &in != &inputs.front()) break;
        INFO("input " << in.label);
        std::vector<std::string> nodes = c.source ? std::vector<std::string>{} : in.nodes;
        nodes.push_back(c.node);
        std::vector<std::string> extra;
        if (op.has_function()) extra.push_back(R"({"name":"fn","op":"range","range":{"stop":3}})");
        const schema::Pipeline p = Chain(nodes, extra);
        Harness h(p);
        INFO(h.build_status().ToString());
        REQUIRE(h.build_status().ok());
        KnownCardInputs known(c.source ? Cardinality::Unknown("no input") : in.card, c.matched);
        const schema::Node& x = p.nodes(p.nodes_size() - 1);
        const int64_t want = ExpectedCardinality(op.cardinality(x, known));
        const int64_t got = h.program().Find("x")->Cardinality();
        INFO("table " << want << " (" << CardinalityKindName(want) << "), runtime " << got);
        CHECK(got == want);
        if (got >= 0) CHECK(static_cast<int64_t>(h.All().size()) == got);
        ++checked;
      }
    }
  }
  CHECK(checked > 100);
}

}  // namespace plumber::runtime::testing
