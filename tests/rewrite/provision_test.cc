// `plumber provision` as one call (rewrite/provision.h): the prices it
// accepts and refuses, and an unreachable target coming back as an answer
// that names the trace, for one machine and for a tf.data service.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "analysis/analyze.h"
#include "analysis/plan.h"
#include "base/env.h"
#include "rewrite/rewriter.h"
#include "traceio/trace_io.h"
#include "rewrite/provision.h"
#include "trace_builder.h"

namespace plumber::rewrite {
namespace {

using analysis::PlanProvisioning;

const std::string kCpuTrace = std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/cpu.json";
const std::string kImageTrace = std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/image.json";

TEST_CASE("provision: prices are key=value items, each optional", "[provision]") {
  const lp::ResourcePrices defaults;
  auto none = ParseResourcePrices("");
  REQUIRE(none.ok());
  CHECK(none->per_core_hour == defaults.per_core_hour);
  CHECK(none->per_gb_hour == defaults.per_gb_hour);
  CHECK(none->per_100mbps_hour == defaults.per_100mbps_hour);

  auto some = ParseResourcePrices("bw=0.5,cpu=2");
  REQUIRE(some.ok());
  CHECK(some->per_core_hour == 2);
  CHECK(some->per_gb_hour == defaults.per_gb_hour);
  CHECK(some->per_100mbps_hour == 0.5);

  auto all = ParseResourcePrices("cpu=0,mem=1e-3,bw=3");
  REQUIRE(all.ok());
  CHECK(all->per_core_hour == 0);
  CHECK(all->per_gb_hour == 0.001);
}

TEST_CASE("provision: prices refused name the item", "[provision]") {
  const std::pair<const char*, const char*> refused[] = {
      {"cpu=1,gpu=3", "unknown resource 'gpu' (expected cpu, mem or bw)"},
      {"cpu", "expected key=value, got 'cpu'"},
      {"cpu=1,,mem=2", "expected key=value, got ''"},
      {"mem=-1", "'mem=-1' needs a non-negative number"},
      {"cpu=", "'cpu=' needs a non-negative number"},
      {"cpu=2x", "'cpu=2x' needs a non-negative number"},
      {"bw=nan", "'bw=nan' needs a non-negative number"},
      {"bw=inf", "'bw=inf': a price per hour is at most 1000000"},
      {"cpu=2e6", "'cpu=2e6': a price per hour is at most 1000000"},
  };
  for (const auto& [text, message] : refused) {
    INFO(text);
    auto p = ParseResourcePrices(text);
    CHECK(p.status().code() == Status::Code::kInvalidArgument);
    CHECK(p.status().message() == message);
  }
}

TEST_CASE("provision: one machine, reachable and not", "[provision]") {
  ProvisionRequest request;
  request.target = 50;
  auto reachable = Provision(Env::Default(), kCpuTrace, {}, request);
  REQUIRE(reachable.ok());
  REQUIRE(reachable->machine.has_value());
  CHECK_FALSE(reachable->service.has_value());
  CHECK(reachable->unreachable.empty());
  CHECK(reachable->machine->target == 50);
  CHECK_FALSE(reachable->warnings.empty());  // the trace predates the wait counters

  request.target = 500;
  auto unreachable = Provision(Env::Default(), kCpuTrace, {}, request);
  REQUIRE(unreachable.ok());
  CHECK_FALSE(unreachable->machine.has_value());
  CHECK(unreachable->unreachable ==
        kCpuTrace + ": target 500 minibatches/s is unreachable: stage 'source' reaches at most 166.7 "
                    "minibatches/s (1 core x 166.7 per core), and no cache (one that is re-read and fits) "
                    "removes it");
}

TEST_CASE("provision: a tf.data service plan, and errors that are not answers", "[provision]") {
  ProvisionRequest request;
  request.target = 500;
  request.service = ServiceRequest{};
  request.service->worker_cores = 8;
  auto plan = Provision(Env::Default(), kCpuTrace, {}, request);
  REQUIRE(plan.ok());
  REQUIRE(plan->service.has_value());
  CHECK(plan->service->sizing.workers == 3);
  CHECK(plan->unreachable.empty());

  auto missing = Provision(Env::Default(), kCpuTrace + ".missing", {}, request);
  CHECK(missing.status().code() == Status::Code::kNotFound);
}

TEST_CASE("provision: a plan that reads no storage says why, and flags it does not use say so", "[provision]") {
  ProvisionRequest request;
  request.target = 30;
  AnalysisOptions options;
  options.cores = 16;
  options.memory_bytes = uint64_t{1} << 30;
  auto answer = Provision(Env::Default(), kCpuTrace, options, request);
  REQUIRE(answer.ok());
  REQUIRE(answer->machine.has_value());
  // The same plan as without the flags: 30/s x 40 ms of CPU is 1.2 cores.
  CHECK(answer->machine->machine.cores == 2);
  CHECK(answer->machine->machine.bandwidth == 0);
  CHECK(answer->machine->bandwidth_note == "the pipeline reads nothing from storage");
  REQUIRE(answer->machine->notes.size() == 1);
  CHECK_THAT(answer->machine->notes[0], Catch::StartsWith("--cores and --mem change nothing here"));

  auto plain = Provision(Env::Default(), kCpuTrace, {}, request);
  REQUIRE(plain.ok());
  REQUIRE(plain->machine.has_value());
  CHECK(plain->machine->notes.empty());
}

TEST_CASE("provision: storage free in the steady state because a cache replays it is said so", "[provision]") {
  // src reads 100 kB a record from storage; decode costs 10 ms of CPU a
  // record and its 320 outputs (320 kB) are re-read by the repeat above it
  // for 30 epochs: a cache after decode is far cheaper than the cores.
  analysis::testing::TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 320}},
    {"name": "decode", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 10000}}]}},
    {"name": "again", "op": "repeat", "inputs": ["decode"]},
    {"name": "batch", "op": "batch", "inputs": ["again"], "batch": {"batch_size": 8}}]})",
                          2);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  const int64_t n = 9600;
  analysis::testing::TraceBuilder::Node(s, "src", {n, n * 8, 1'000'000, n * 100'000, 0});
  analysis::testing::TraceBuilder::Node(s, "decode", {n, n * 1000, n * 10'000'000, 0, n});
  analysis::testing::TraceBuilder::Node(s, "again", {n, n * 1000, 1'000'000, 0, n});
  analysis::testing::TraceBuilder::Node(s, "batch", {n / 8, n * 1000, 1'000'000, 0, n});
  auto analysis = b.Analyze();
  REQUIRE(analysis.ok());
  REQUIRE(analysis->disk_bytes_per_minibatch > 0);
  auto p = PlanProvisioning(*analysis, 100, lp::ResourcePrices{});
  REQUIRE(p.ok());
  REQUIRE(p->cache_node == "decode");
  CHECK(p->machine.bandwidth < 1);
  CHECK(p->bandwidth_note ==
        "the cache after decode replays what is read (800 kB per minibatch), so storage is read in the first epoch "
        "only");
}

// The MILP gives each stage fractional cores; the pipeline a user runs has
// whole threads. The image example's 30 minibatches/s take 12 fractional
// cores (read 4.8, decode 6, ...) and 13 as threads (shards 5 and decode 6
// at 12 reach 27.3): provision says 13, keeps the MILP's 12 beside it, and
// its figure is what `plumber rewrite` predicts for that machine.
TEST_CASE("provision: the evaluator checks the machine with the pipeline rewritten for it", "[provision]") {
  ProvisionRequest request;
  request.target = 30;
  auto answer = Provision(Env::Default(), kImageTrace, {}, request);
  REQUIRE(answer.ok());
  REQUIRE(answer->machine.has_value());
  const Provisioning& p = *answer->machine;
  CHECK(p.lp_cores == 12);
  CHECK(p.machine.cores == 13);
  REQUIRE(p.rewritten_throughput.has_value());
  CHECK(*p.rewritten_throughput >= 30);
  // One more core at the default price on top of the MILP's cost.
  auto lp_only = analysis::AnalyzeTraceFile(Env::Default(), kImageTrace, {});
  REQUIRE(lp_only.ok());
  auto milp = PlanProvisioning(*lp_only, 30, lp::ResourcePrices{});
  REQUIRE(milp.ok());
  CHECK(milp->machine.cores == 12);
  CHECK(p.machine.cost_per_hour == Approx(milp->machine.cost_per_hour + lp::ResourcePrices{}.per_core_hour));

  // The same figure as the rewrite's for that machine, and one core fewer
  // falls short.
  auto rewrite_for = [&](int cores) {
    AnalysisOptions options;
    options.cores = cores;
    options.memory_bytes = static_cast<uint64_t>(std::ceil(p.machine.memory_bytes));
    options.cache_memory_fraction = 1.0;
    options.disk_bandwidth_bytes_per_s = p.machine.bandwidth;
    options.solve_programs = true;
    auto a = analysis::AnalyzeTraceFile(Env::Default(), kImageTrace, options);
    REQUIRE(a.ok());
    auto r = Rewrite(*a);
    REQUIRE(r.ok());
    return r->predicted_after;
  };
  CHECK(rewrite_for(13) == Approx(*p.rewritten_throughput));
  CHECK(rewrite_for(12) < 30);

  // A target the rewrite meets on the MILP's cores keeps them.
  request.target = 50;
  auto exact = Provision(Env::Default(), kCpuTrace, {}, request);
  REQUIRE(exact.ok());
  REQUIRE(exact->machine.has_value());
  CHECK(exact->machine->lp_cores == 0);
  CHECK(exact->machine->machine.cores == 2);
  REQUIRE(exact->machine->rewritten_throughput.has_value());
  CHECK(*exact->machine->rewritten_throughput >= 50);
}

// A reader inside an interleave runs once per open file: the MILP may not
// plan more cores for it than there are files. The image example's eight
// files at 160 ms of reading a minibatch reach 50 minibatches/s at most.
TEST_CASE("provision: a reader in an interleave gets no more cores than there are files", "[provision]") {
  ProvisionRequest request;
  request.target = 60;
  auto answer = Provision(Env::Default(), kImageTrace, {}, request);
  REQUIRE(answer.ok());
  CHECK_FALSE(answer->machine.has_value());
  CHECK_THAT(answer->unreachable, Catch::Contains("stage 'read' reaches at most 50 minibatches/s (8 cores"));
  request.target = 50;
  auto fifty = Provision(Env::Default(), kImageTrace, {}, request);
  REQUIRE(fifty.ok());
  REQUIRE(fifty->machine.has_value());
  CHECK(*fifty->machine->rewritten_throughput >= 50);
}

// Whole threads can fall short for good: the rewrite gives a stage at most
// 1024 threads, and a map of 10 ms a minibatch at 150,000 minibatches/s
// needs 1,500 cores. The MILP's answer is then no answer.
TEST_CASE("provision: a target whole threads cannot reach is unreachable, with both figures", "[provision]") {
  analysis::testing::TraceBuilder b(R"({"nodes": [
    {"name": "src", "op": "range", "range": {"stop": 100000000}},
    {"name": "work", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 10000}}]}},
    {"name": "batch", "op": "batch", "inputs": ["work"], "batch": {"batch_size": 1}}]})",
                                    2);
  b.Snapshot(0);
  auto& s = b.Snapshot(10);
  const int64_t n = 1000;
  analysis::testing::TraceBuilder::Node(s, "src", {n, n * 8, 1'000, 0, 0});
  analysis::testing::TraceBuilder::Node(s, "work", {n, n * 8, n * 10'000'000, 0, n});
  analysis::testing::TraceBuilder::Node(s, "batch", {n, n * 8, 1'000, 0, n});
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-provision-");
  REQUIRE(dir.ok());
  const std::string path = dir->path() + "/wide.pb";
  REQUIRE(WriteTrace(Env::Default(), path, b.trace(), Encoding::kBinary).ok());
  ProvisionRequest request;
  request.target = 150000;
  auto answer = Provision(Env::Default(), path, {}, request);
  REQUIRE(answer.ok());
  CHECK_FALSE(answer->machine.has_value());
  CHECK_THAT(answer->unreachable, Catch::StartsWith(path + ": target 150k minibatches/s is unreachable with whole "
                                                           "threads: the LP's fractional optimum reaches it on"));
  CHECK_THAT(answer->unreachable, Catch::Contains("the pipeline `plumber rewrite` emits for that machine is predicted"));
}

}  // namespace
}  // namespace plumber::rewrite
