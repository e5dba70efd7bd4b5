// The as-traced prediction against the runtime: a pipeline is run, traced
// and analysed, and the model's prediction for the pipeline exactly as
// configured must come within 10% of the throughput the same run observed.
// Each case exercises a thread-group rule of the op table: inline ops add
// up on their consumer's thread, a prefetch splits the groups, a pooled
// stage's workers share its service, a parallel interleave's workers wait
// on storage side by side. Runs are about 1.5 s each; these tests run
// alone (RUN_SERIAL) since CPU-bound cases need the cores they measured.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "harness.h"
#include "optimize/optimize_loop.h"
#include "runtime/datagen.h"
#include "runtime/run.h"
#include "traceio/pipeline_io.h"
#include "traceio/record_io.h"

namespace plumber {
namespace {

struct Measured {
  double observed = 0;
  analysis::Analysis analysis;
};

Measured RunAndAnalyze(const ProgramGraph& graph, const runtime::StorageOptions& storage = {},
                       const std::string& base_dir = "", double seconds = 1.5) {
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-as-traced-");
  REQUIRE(dir.ok());
  const std::string trace = dir->path() + "/t.pb";
  runtime::RunConfig c;
  c.seconds = seconds;
  c.warmup_seconds = 0.3;
  c.snapshot_every_seconds = 0.1;
  c.base_dir = base_dir;
  c.trace_path = trace;
  c.storage = storage;
  auto run = runtime::RunPipeline(Env::Default(), graph, c);
  REQUIRE(run.ok());
  INFO(run->error.ToString());
  REQUIRE(run->end_status == "ok");
  analysis::AnalysisOptions o;
  o.solve_programs = true;
  auto a = analysis::AnalyzeTraceFile(Env::Default(), trace, o);
  INFO(a.status().ToString());
  REQUIRE(a.ok());
    Measured m{a->observed_throughput.value_or(0.0), std::move(*a)};
  REQUIRE(m.analysis.wait_traced);
  REQUIRE(m.analysis.as_traced.throughput);
  return m;
}

// Within 10% of what the run observed.
void CheckAsTraced(const Measured& m) {
  const double predicted = *m.analysis.as_traced.throughput;
  INFO("as traced " << predicted << "/s (" << m.analysis.as_traced.bottleneck << ", "
                    << m.analysis.as_traced.limit << "), observed " << m.observed << "/s");
  CHECK(predicted == Approx(m.observed).epsilon(0.10));
}

const analysis::GroupModel* GroupOf(const analysis::Analysis& a, const std::string& node) {
  const analysis::NodeModel* m = a.Find(node);
  REQUIRE(m != nullptr);
  REQUIRE(m->group >= 0);
  return &a.thread_groups[m->group];
}

std::string Burn(const std::string& name, int micros) {
  return R"({"name":")" + name + R"(","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":)" +
         std::to_string(micros) + "}}]}}";
}
std::string Sleep(const std::string& name, int micros, int parallelism = 1) {
  return R"({"name":")" + name + R"(","op":"map","map":{"parallelism":)" + std::to_string(parallelism) +
         R"(,"udf":[{"op":"sleep","args":{"micros":)" + std::to_string(micros) + "}}]}}";
}
const char* kSource = R"({"name":"src","op":"range","range":{"stop":1000000000}})";
std::string Batch(int size) { return R"({"name":"batch","op":"batch","batch":{"batch_size":)" + std::to_string(size) + "}}"; }

TEST_CASE("as traced: a naive chain of inline burns adds up on one thread", "[as_traced]") {
  // 1 + 2 + 3 ms per element, 2 per minibatch: one minibatch per 12 ms.
  auto m = RunAndAnalyze(runtime::testing::Graph(runtime::testing::Chain({kSource, Burn("b1", 1000), Burn("b2", 2000), Burn("b3", 3000), Batch(2)})));
  CheckAsTraced(m);
  const auto& a = m.analysis;
  REQUIRE(a.thread_groups.size() == 1);
  CHECK(a.thread_groups[0].members.size() == 5);
  CHECK(a.as_traced.limit == "threads");
  CHECK(a.as_traced.bottleneck == "b3");
  // The burns cost about what they say (a loose check: the calibrated loop
  // runs slower when another process shares the caches).
  CHECK(a.thread_groups[0].service_seconds_per_minibatch == Approx(0.012).epsilon(0.35));
  // On 2 cores the chain's CPU bound is twice its thread bound: the model
  // must not predict the CPU bound for one thread.
  if (a.cores >= 2) CHECK(*a.cpu_bound > 1.5 * *a.as_traced.throughput);
}

TEST_CASE("as traced: a prefetch between the stages splits the thread groups", "[as_traced]") {
  // Above the prefetch 3 ms of waiting per element, below it 3 ms of CPU:
  // two groups of 6 ms per minibatch each, which run side by side and
  // need one core between them (so the case holds on a 2-core machine
  // with some other load).
  auto m = RunAndAnalyze(runtime::testing::Graph(runtime::testing::Chain(
      {kSource, Sleep("b1", 1000), Sleep("b2", 2000), R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":4}})",
       Burn("b3", 3000), Batch(2)})));
  CheckAsTraced(m);
  const auto& a = m.analysis;
  REQUIRE(a.thread_groups.size() == 2);
  CHECK(GroupOf(a, "b1") == GroupOf(a, "b2"));
  CHECK(GroupOf(a, "b2") != GroupOf(a, "b3"));
  CHECK(GroupOf(a, "b2")->name == "p's thread");
  CHECK(GroupOf(a, "p")->name == "consumer");
}

TEST_CASE("as traced: a map that sleeps holds its thread, not a core", "[as_traced]") {
  auto m = RunAndAnalyze(runtime::testing::Graph(runtime::testing::Chain(
      {kSource,
       R"({"name":"call","op":"map","map":{"udf":[{"op":"sleep","args":{"micros":2000}},{"op":"cpu_burn","args":{"micros":200}}]}})",
       Batch(4)})));
  CheckAsTraced(m);
  const auto& a = m.analysis;
  const auto* call = a.Find("call");
  CHECK(call->limit == analysis::Limit::kWait);
  CHECK(a.bottleneck == "call");
  CHECK(call->wait_seconds_per_minibatch > 4 * call->cpu_seconds_per_minibatch);
  // The best parallelism gives it threads past the cores: far above what
  // the trace saw (the old CPU-only model predicted the CPU bound as traced).
  CHECK(*a.predicted_throughput > 4 * a.observed_throughput.value());
  CHECK(*a.as_traced.throughput < 1.2 * a.observed_throughput.value());
}

TEST_CASE("as traced: a pooled map's workers share its waiting", "[as_traced]") {
  auto m = RunAndAnalyze(runtime::testing::Graph(runtime::testing::Chain({kSource, Sleep("call", 3000, 4), Batch(4)})));
  CheckAsTraced(m);
  const auto* g = GroupOf(m.analysis, "call");
  CHECK(g->name == "call's workers");
  CHECK(g->threads == 4);
  // Its input runs on the workers one at a time.
  bool lock = false;
  for (const auto& group : m.analysis.thread_groups) lock = lock || (group.serialized && group.owner == "call");
  CHECK(lock);
}

TEST_CASE("as traced: a pool over a pool takes its input's elements, not its work, in turns", "[as_traced]") {
  // call's 4 workers sleep 3 ms each per element; post's 2 workers pull
  // call's finished elements one at a time. Serializing call's work under
  // post's input lock, as the model once did, predicted a quarter of this.
  auto m = RunAndAnalyze(runtime::testing::Graph(
      runtime::testing::Chain({kSource, Sleep("call", 3000, 4), Sleep("post", 100, 2), Batch(4)})));
  CheckAsTraced(m);
  CHECK(m.analysis.as_traced.bottleneck == "call");
  CHECK(GroupOf(m.analysis, "call")->name == "call's workers");
  for (const auto& group : m.analysis.thread_groups) {
    if (!group.serialized || group.owner != "post") continue;
    CHECK(std::find(group.members.begin(), group.members.end(), "call") == group.members.end());
  }
}

// Files of 1 KB records read in requests of about one record each, so
// every record pays the injected latency.
std::string WriteShards(const ScopedTempDir& dir, int files, int records) {
  for (int f = 0; f < files; ++f) {
    std::string data;
    for (int i = 0; i < records; ++i) data += FrameRecord(std::string(1000, static_cast<char>('a' + i % 26)));
    runtime::testing::WriteText(dir.path() + "/shard-" + std::to_string(f) + ".tfrecord", data);
  }
  return dir.path();
}

schema::Pipeline Reader(int cycle, int parallelism) {
  return runtime::testing::Chain(
      {R"({"name":"files","op":"list_files","list_files":{"pattern":"shard-*.tfrecord"}})",
       R"({"name":"shards","op":"interleave","interleave":{"function":"read","cycle_length":)" + std::to_string(cycle) +
           R"(,"parallelism":)" + std::to_string(parallelism) + "}}",
       R"({"name":"repeat","op":"repeat"})", Batch(4)},
      {R"({"name":"read","op":"tfrecord"})"});
}

TEST_CASE("as traced: a reader under request latency, one file at a time and four at once", "[as_traced]") {
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-as-traced-data-");
  REQUIRE(dir.ok());
  const std::string base = WriteShards(*dir, 4, 400);
  runtime::StorageOptions storage;
  storage.read_latency_ns = 4'000'000;
  storage.request_bytes = 1024;
  SECTION("sequential: the consumer's thread waits for every request") {
    auto m = RunAndAnalyze(runtime::testing::Graph(Reader(1, 1)), storage, base);
    CheckAsTraced(m);
    CHECK(m.analysis.as_traced.bottleneck == "read");
    CHECK(m.analysis.Find("read")->request_latency_seconds.value_or(0) >= 0.004);
  }
  SECTION("parallel: four workers keep four requests in flight") {
    auto m = RunAndAnalyze(runtime::testing::Graph(Reader(4, 4)), storage, base);
    CheckAsTraced(m);
    CHECK(GroupOf(m.analysis, "read")->threads == 4);
  }
}

TEST_CASE("as traced: the examples that need no data (cpu, skewed, remote)", "[as_traced]") {
  for (const char* name : {"cpu", "skewed", "remote"}) {
    INFO(name);
    auto p = LoadProgram(Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/examples/" + name + ".json");
    REQUIRE(p.ok());
    auto m = RunAndAnalyze(*p, {}, "", 2.0);
    CheckAsTraced(m);
  }
}

TEST_CASE("as traced: the image and text examples on small generated data", "[as_traced]") {
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-as-traced-examples-");
  REQUIRE(dir.ok());
  const std::string data = dir->path() + "/data";
  REQUIRE(Env::Default()->CreateDirectories(data).ok());
  runtime::ImageGenOptions images;
  images.files = 4;
  images.records_per_file = 16;
  images.width = images.height = 256;  // the example crops 224 x 224
  REQUIRE(runtime::GenerateImages(Env::Default(), data, images).ok());
  runtime::TextGenOptions text;
  text.files = 2;
  text.lines_per_file = 4000;
  REQUIRE(runtime::GenerateText(Env::Default(), data, text).ok());
  for (const char* name : {"image", "text"}) {
    INFO(name);
    auto p = LoadProgram(Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/examples/" + name + ".json");
    REQUIRE(p.ok());
    auto m = RunAndAnalyze(*p, {}, dir->path(), 2.0);
    CheckAsTraced(m);
  }
}

}  // namespace
}  // namespace plumber
