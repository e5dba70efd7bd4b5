// The rewrite: plans agree with the analysis' closed forms, integer
// parallelism respects the core budget, caches respect the memory that is
// really free, every stage the plan gives cores to gets them, and nothing
// is truncated.
#include <catch2/catch.hpp>

#include <random>

#include "rewrite/rewriter.h"
#include "trace_builder.h"
#include "pipeline/op_table.h"
#include "pipeline/validate.h"
#include "traceio/pipeline_io.h"

using namespace plumber;
using namespace plumber::rewrite;
using analysis::MakePlan;
using analysis::PlanOptions;
using analysis::testing::Counters;
using analysis::testing::TraceBuilder;

namespace {

// range -> map(cpu_burn) -> [repeat] -> batch(32); CPU per element as given.
std::string CpuPipeline(bool repeat, int map_parallelism = 1) {
  std::string json = R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 3200}},
    {"name": "burn", "op": "map", "inputs": ["src"], "map": {"parallelism": )" +
                     std::to_string(map_parallelism) + R"(, "udf": [{"op": "cpu_burn", "args": {"micros": 1000}}]}},)";
  if (repeat) json += R"({"name": "again", "op": "repeat", "inputs": ["burn"]},)";
  json += R"({"name": "batch", "op": "batch", "inputs": [")" + std::string(repeat ? "again" : "burn") +
          R"("], "batch": {"batch_size": 32}}]})";
  return json;
}

// 10 s window: 100 batches, 3200 elements; burn costs 1 ms each.
TraceBuilder CpuTrace(bool repeat, int cores, int64_t available_memory = int64_t{32} << 30) {
  TraceBuilder b(CpuPipeline(repeat), cores);
  b.header().mutable_machine()->set_available_memory_bytes(available_memory);
  auto& s0 = b.Snapshot(0);
  (void)s0;
  auto& s1 = b.Snapshot(10);
  TraceBuilder::Node(s1, "src", {3200, 3200 * 8, 100'000'000, 0, 0});
  TraceBuilder::Node(s1, "burn", {3200, 3200 * 8, 3'200'000'000, 0, 3200});
  if (repeat) TraceBuilder::Node(s1, "again", {3200, 3200 * 8, 0, 0, 3200});
  TraceBuilder::Node(s1, "batch", {100, 100 * 256, 100'000'000, 0, 3200});
  return b;
}

[[maybe_unused]] int ParallelismSum(const schema::Pipeline& p) {
  int total = 0;
  for (const auto& n : p.nodes()) {
    const OpDef* def = FindOp(n.op());
    if (def && def->parallelizable()) total += NodeParallelism(n);
  }
  return total;
}

StatusOr<RewriteResult> RewriteOf(TraceBuilder& b, analysis::AnalysisOptions opt = {}) {
  auto report = b.AnalyzeWithPlan(opt);
  if (!report.ok()) return report.status();
  return Rewrite(*report);
}

}  // namespace

TEST_CASE("the plan without cache equals the analysis' closed form", "[rewrite]") {
  for (int cores : {1, 2, 4, 8, 64}) {
    TraceBuilder b = CpuTrace(false, cores);
    auto report = b.Analyze();
    REQUIRE(report.ok());
    auto plan = MakePlan(*report);
    REQUIRE(plan.ok());
    INFO("cores " << cores);
    // c = 0.032 (burn) + 0.001 (batch) + 0.001 (src, sequential: 1000/s max).
    const double expected = std::min(cores / 0.034, 1 / 0.001);
    CHECK(plan->throughput_without_cache == Approx(expected));
    CHECK(plan->throughput_without_cache == Approx(*report->cpu_bound));
  }
}

TEST_CASE("rounded parallelism never exceeds the core budget", "[rewrite][budget]") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 60; ++trial) {
    const int maps = 1 + static_cast<int>(rng() % 5);
    std::string json = R"({"nodes": [{"name": "src", "op": "range", "range": {"stop": 1000}})";
    std::string prev = "src";
    for (int m = 0; m < maps; ++m) {
      const std::string name = "m" + std::to_string(m);
      json += R"(, {"name": ")" + name + R"(", "op": "map", "inputs": [")" + prev +
              R"("], "map": {"udf": [{"op": "add"}]}})";
      prev = name;
    }
    json += R"(, {"name": "batch", "op": "batch", "inputs": [")" + prev + R"("], "batch": {"batch_size": 10}}]})";
    const int cores = 1 + static_cast<int>(rng() % 16);
    TraceBuilder b(json, cores);
    b.Snapshot(0);
    auto& s = b.Snapshot(5);
    TraceBuilder::Node(s, "src", {1000, 8000, 1'000'000, 0, 0});
    for (int m = 0; m < maps; ++m) {
      const int64_t cpu = static_cast<int64_t>(1e8 * (0.1 + (rng() % 100) / 10.0));
      TraceBuilder::Node(s, "m" + std::to_string(m), {1000, 8000, cpu, 0, 1000});
    }
    TraceBuilder::Node(s, "batch", {100, 8000, 10'000'000, 0, 1000});
    // A repeat-free chain reads once, so add memory pressure through the
    // prefetch: a random budget the rewrite must stay under.
    analysis::AnalysisOptions opt;
    const uint64_t mem = 1000 + rng() % 100000;
    opt.memory_bytes = mem;
    auto r = RewriteOf(b, opt);
    INFO("trial " << trial << " cores " << cores << " maps " << maps << " mem " << mem);
    REQUIRE(r.ok());
    // Threads of multi-threaded stages never exceed the cores (unless every
    // stage is already down to one thread).
    int multi = 0, knobs = 0;
    for (const auto& n : r->pipeline.nodes()) {
      const OpDef* def = FindOp(n.op());
      if (!def || !def->parallelizable()) continue;
      ++knobs;
      if (NodeParallelism(n) > 1) multi += NodeParallelism(n);
    }
    CHECK(multi <= cores);
    CHECK(r->parallel_cores == multi);
    CHECK(knobs == maps + 1);
    CHECK(r->predicted_after <= r->plan.throughput_without_cache * (1 + 1e-8));
    CHECK(r->predicted_after >= r->predicted_before * (1 - 1e-8));  // plans keep 9 digits
    CHECK(ValidatePipeline(r->pipeline).empty());
    CHECK(r->memory_bytes <= static_cast<double>(mem));
  }
}

TEST_CASE("a parallelizable batch receives threads where the model says they pay", "[rewrite]") {
  // Batch is parallelizable too: the original only rewrote a short list of
  // ops. The LP spreads cores among stages that need them less than the
  // binding one (burn got 8 here while one thread of it sustains the plan's
  // rate); the rewrite keeps only the threads the model says pay.
  TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 6400}},
    {"name": "burn", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 100}}]}},
    {"name": "batch", "op": "batch", "inputs": ["burn"], "batch": {"batch_size": 64}}]})",
                 16);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  TraceBuilder::Node(s, "src", {6400, 51200, 10'000'000, 0, 0});
  TraceBuilder::Node(s, "burn", {6400, 51200, 3'000'000'000, 0, 6400});
  TraceBuilder::Node(s, "batch", {100, 51200, 3'000'000'000, 0, 6400});
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  const auto* batch = r->plan.Find("batch");
  REQUIRE(batch != nullptr);
  CHECK(batch->cores > 1);
  const schema::Node* node = nullptr;
  for (const auto& n : r->pipeline.nodes()) {
    if (n.name() == "batch") node = &n;
  }
  REQUIRE(node != nullptr);
  CHECK(NodeParallelism(*node) >= 2);
  // Never predicted below the pipeline as given.
  CHECK(r->predicted_after >= r->predicted_before);
}

TEST_CASE("a sequential stage is never given more than one core", "[rewrite]") {
  TraceBuilder b = CpuTrace(false, 64);
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  const auto* src = r->plan.Find("src");
  REQUIRE(src != nullptr);
  CHECK(src->max_cores == 1);
  CHECK(src->cores <= 1 + 1e-9);
  CHECK(r->plan.binding_without_cache == "stage:src");
}

TEST_CASE("a zero-CPU node does not zero the plan", "[rewrite]") {
  TraceBuilder b = CpuTrace(true, 8);  // 'again' (repeat) has no CPU at all
  auto report = b.Analyze();
  REQUIRE(report.ok());
  auto plan = MakePlan(*report);
  REQUIRE(plan.ok());
  CHECK(plan->throughput_without_cache == Approx(8 / 0.034));
}

TEST_CASE("no cache when the data is read once", "[rewrite][cache]") {
  TraceBuilder b = CpuTrace(false, 8);
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_node.empty());
  CHECK_THAT(r->plan.cache_note, Catch::Contains("read once"));
  for (const auto& n : r->pipeline.nodes()) CHECK(n.op() != "cache");
}

TEST_CASE("under a repeat the whole dataset is cached, never truncated", "[rewrite][cache]") {
  TraceBuilder b = CpuTrace(true, 8);
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  // burn's output (3200 x 8 B) is deterministic and under the repeat.
  CHECK(r->plan.cache_node == "burn");
  const schema::Node* cache = nullptr;
  for (const auto& n : r->pipeline.nodes()) {
    CHECK(n.op() != "take");  // the original cached only the first 500 elements
    if (n.op() == "cache") cache = &n;
  }
  REQUIRE(cache != nullptr);
  CHECK(cache->name() == "burn_cache");
  CHECK(cache->inputs(0) == "burn");
  CHECK(cache->cache().filename().empty());
  for (const auto& n : r->pipeline.nodes()) {
    if (n.name() == "again") CHECK(n.inputs(0) == "burn_cache");
  }
  CHECK(r->pipeline.nodes_size() == b.header().program().nodes_size() + 1);  // the cache (no prefetch: see below)
  CHECK(ValidatePipeline(r->pipeline).empty());
}

TEST_CASE("with a model step recorded, a prefetch is added only where the model says it gains", "[rewrite][search]") {
  // The cached CPU trace again, its consumer's step recorded. Once cached,
  // the pipeline makes a batch in 1 ms on the consumer's thread (batch
  // stays inline: a pool of its own would gain 10%, under what a new pool
  // must), so a prefetch overlaps that 1 ms with the step.
  SECTION("a 10 ms step: the prefetch overlaps 1 ms of each 11, and is added") {
    TraceBuilder b = CpuTrace(true, 8);
    b.header().mutable_options()->set_step_time_seconds(0.010);
    auto r = RewriteOf(b);
    REQUIRE(r.ok());
    CHECK(r->pipeline.nodes_size() == b.header().program().nodes_size() + 2);  // the cache and the prefetch
    CHECK(analysis::testing::Parallelism(r->pipeline, "batch") == 1);
    CHECK(r->notes.empty());
    bool prefetch = false;
    for (const auto& c : r->changes) {
      if (c.what != "prefetch") continue;
      prefetch = true;
      CHECK_THAT(c.why, Catch::Contains("the model predicts 100 minibatches/s with it, 90.91 without"));
    }
    CHECK(prefetch);
    CHECK(r->predicted_after == Approx(100).epsilon(0.001));
  }
  SECTION("a 1 s step: the overlap would gain 0.1%: left out, and said so") {
    TraceBuilder b = CpuTrace(true, 8);
    b.header().mutable_options()->set_step_time_seconds(1.0);
    auto r = RewriteOf(b);
    REQUIRE(r.ok());
    CHECK(r->pipeline.nodes_size() == b.header().program().nodes_size() + 1);  // the cache alone
    REQUIRE(r->notes.size() == 1);
    CHECK_THAT(r->notes[0], Catch::StartsWith("no prefetch at the output"));
  }
}

TEST_CASE("without a model step a prefetch that gains nothing is left out, and the note says why", "[rewrite]") {
  // The same trace with no step recorded: nothing for a prefetch to overlap
  // and no thread group for it to split, so its thread would only cost.
  TraceBuilder b = CpuTrace(true, 8);
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  for (const auto& n : r->pipeline.nodes()) CHECK(n.op() != "prefetch");
  REQUIRE(r->notes.size() == 1);
  CHECK_THAT(r->notes[0], Catch::StartsWith("no prefetch at the output") &&
                              Catch::Contains("no model step") && Catch::Contains("--step-time"));
}

TEST_CASE("the cache budget is available memory minus buffers, not total", "[rewrite][cache]") {
  // 64 GB total but 1 GB available with 600 MB held in buffers: the budget is
  // (1 GB - 600 MB) x 0.9 = 360 MB. burn's output is 25.6 kB x 10^4 here.
  auto with = [](int64_t available, int64_t buffered) {
    TraceBuilder b = CpuTrace(true, 8, available);
    auto& s = *b.trace().mutable_snapshots(1);
    for (auto& n : *s.mutable_nodes()) {
      if (n.name() == "burn") n.set_bytes_produced(int64_t{3200} * 125'000);  // 125 kB per element: 400 MB
      if (n.name() == "batch") n.set_peak_buffered_bytes(buffered);
    }
    return b;
  };
  TraceBuilder tight = with(1'000'000'000, 600'000'000);
  auto r = RewriteOf(tight);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_budget_bytes == Approx(0.9 * 400e6));
  CHECK(r->plan.cache_node != "burn");  // 400 MB does not fit 360 MB
  CHECK(r->memory_bytes <= 1e9);

  TraceBuilder roomy = with(2'000'000'000, 600'000'000);
  r = RewriteOf(roomy);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_node == "burn");
  CHECK(r->memory_bytes <= 2e9);
}

TEST_CASE("a bandwidth curve widens the interleave", "[rewrite][storage]") {
  TraceBuilder b(R"({"nodes": [
    {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b", "c", "d"]}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read", "cycle_length": 2}},
    {"name": "batch", "op": "batch", "inputs": ["shards"], "batch": {"batch_size": 10}}]})",
                 8);
  // bandwidth(p) = min(10 MB/s x p, 80 MB/s): latency-bound storage.
  auto* curve = b.header().mutable_machine()->mutable_bandwidth_curve();
  auto* p1 = curve->add_pieces();
  p1->set_slope(10e6);
  p1->set_intercept(0);
  auto* p2 = curve->add_pieces();
  p2->set_slope(0);
  p2->set_intercept(80e6);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  TraceBuilder::Node(s, "files", {4, 40, 0, 0, 0});
  TraceBuilder::Node(s, "read", {1000, 10'000'000, 100'000'000, 10'000'000, 0});
  TraceBuilder::Node(s, "shards", {1000, 10'000'000, 10'000'000, 0, 1000});
  TraceBuilder::Node(s, "batch", {100, 10'000'000, 10'000'000, 0, 1000});
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  // 100 kB per minibatch; 80 MB/s -> 800/s needs 8 readers.
  REQUIRE(r->plan.read_parallelism.has_value());
  CHECK(*r->plan.read_parallelism == 8);
  const schema::Node* shards = nullptr;
  for (const auto& n : r->pipeline.nodes()) {
    if (n.name() == "shards") shards = &n;
  }
  REQUIRE(shards != nullptr);
  CHECK(shards->interleave().parallelism() >= 8);
  CHECK(shards->interleave().cycle_length() >= shards->interleave().parallelism());
}

TEST_CASE("degenerate inputs give clear messages", "[rewrite]") {
  TraceBuilder b = CpuTrace(false, 8);
  auto report = b.Analyze();
  REQUIRE(report.ok());
  report->cores = 0;
  auto plan = MakePlan(*report);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(), Catch::Contains("no cores"));
}

TEST_CASE("on 2 cores a heavy map gets both threads, a light batch keeps one", "[rewrite][budget]") {
  // burn needs ~2 cores at the planned rate, batch 0.06: rounding both up
  // to whole cores (3 > 2) must not take a thread away from burn.
  TraceBuilder b = CpuTrace(false, 2);
  auto r = RewriteOf(b);
  REQUIRE(r.ok());
  int burn = 0, batch = 0;
  for (const auto& n : r->pipeline.nodes()) {
    if (n.name() == "burn") burn = NodeParallelism(n);
    if (n.name() == "batch") batch = NodeParallelism(n);
  }
  CHECK(burn == 2);
  CHECK(batch == 1);
  CHECK(r->parallel_cores == 2);
  CHECK(r->predicted_after == Approx(2 / 0.034));  // the CPU total binds, as in the LP
}

TEST_CASE("a file cache when memory is short and the disk has room", "[rewrite][cache]") {
  // burn's output is 400 MB; 100 MB of memory is available.
  TraceBuilder b = CpuTrace(true, 8, 100'000'000);
  for (auto& n : *b.trace().mutable_snapshots(1)->mutable_nodes()) {
    if (n.name() == "burn") n.set_bytes_produced(int64_t{3200} * 125'000);
  }
  analysis::AnalysisOptions opt;
  opt.plan.file_cache_dir = "/var/cache/plumber";
  opt.plan.file_cache_free_bytes = 10e9;
  auto r = RewriteOf(b, opt);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_node == "burn");
  CHECK(r->plan.cache_file == "/var/cache/plumber/burn.plumber-cache");
  bool found = false;
  for (const auto& n : r->pipeline.nodes()) {
    if (n.op() == "cache") {
      found = true;
      CHECK(n.cache().filename() == r->plan.cache_file);
    }
  }
  CHECK(found);
  CHECK(r->memory_bytes < 100e6);  // the file cache holds no memory

  // No disk room: only what fits in memory (the 25.6 kB source).
  opt.plan.file_cache_free_bytes = 100e6;
  r = RewriteOf(b, opt);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_node == "src");
  CHECK(r->plan.cache_file.empty());

  // Storage so slow that reading the cache back loses to recomputing it.
  opt.plan.file_cache_free_bytes = 10e9;
  opt.disk_bandwidth_bytes_per_s = 1000;  // 1 kB/s
  r = RewriteOf(b, opt);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_file.empty());
}

TEST_CASE("the rewrite applies the analysis' plan and refuses an analysis without one", "[rewrite]") {
  TraceBuilder b = CpuTrace(true, 8);
  auto bare = b.Analyze();
  REQUIRE(bare.ok());
  auto refused = Rewrite(*bare);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Status::Code::kFailedPrecondition);
  // A cache forbidden in the analysis' plan stays out of the rewrite.
  analysis::AnalysisOptions no_cache;
  no_cache.plan.allow_cache = false;
  auto r = RewriteOf(b, no_cache);
  REQUIRE(r.ok());
  CHECK(r->plan.cache_node.empty());
  for (const auto& n : r->pipeline.nodes()) CHECK(n.op() != "cache");
  auto cached = RewriteOf(b);
  REQUIRE(cached.ok());
  CHECK_FALSE(cached->plan.cache_node.empty());
}

TEST_CASE("more cores than a pipeline may use: every knob stops at what validation accepts", "[rewrite][budget]") {
  // burn takes 1 s of CPU an element and its neighbours almost nothing, so
  // the plan on 100,000 cores wants tens of thousands of burn threads.
  // Validation takes at most kMaxParallelism; before the cap the rewrite
  // emitted a pipeline its own check refused, and handed out the spare
  // cores one by one, in time that grew with the budget.
  const int cores = 100'000;
  TraceBuilder b(CpuPipeline(false), cores);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  TraceBuilder::Node(s, "src", {3200, 3200 * 8, 1'000'000, 0, 0});
  TraceBuilder::Node(s, "burn", {3200, 3200 * 8, int64_t{3200} * 1'000'000'000, 0, 3200});
  TraceBuilder::Node(s, "batch", {100, 100 * 256, 1'000'000, 0, 3200});
  analysis::AnalysisOptions opt;
  opt.cores = cores;
  auto r = RewriteOf(b, opt);
  REQUIRE(r.ok());
  int burn = 0;
  for (const auto& n : r->pipeline.nodes()) {
    if (n.name() == "burn") burn = NodeParallelism(n);
  }
  // At the cap, less the last threads the model says gain under 1% in all.
  CHECK(burn <= kMaxParallelism);
  CHECK(burn > kMaxParallelism * 9 / 10);
  CHECK(ValidatePipeline(r->pipeline).empty());
  for (const auto& c : r->changes) {
    if (c.what == "parallelism" || c.what == "cycle_length") CHECK(std::stoll(c.after) <= kMaxParallelism);
  }
}
