// The op table's thread use (lib/pipeline/op_table.h, ThreadUse) against
// what the runtime really does, for every op: how many threads a node
// starts, and whether its own work, its inputs and its function run on the
// consumer's thread. The thread-group model of the analysis rests on these
// answers, so each is measured, not assumed: threads by counting the
// pool tasks running, placement by where a 1 ms CPU burn is charged (the
// consumer thread's CPU clock against the burning node's total).
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

}  // namespace plumber::runtime::testing
