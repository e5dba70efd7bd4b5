// The model on synthetic traces: the paper's ResNet storage example, dataset
// size estimates from a sample of files, the edge cases
// that concern analysis (zero-CPU node, randomness), cardinality
// propagation, caches, what-if overrides, windows, and streaming.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "base/env.h"
#include "trace_builder.h"
#include "traceio/trace_io.h"

namespace plumber::analysis {
namespace {

using testing::Counters;
using testing::HasFinding;
using testing::RequireFinite;
using testing::TraceBuilder;

bool Rel(double got, double want, double tol = 1e-9) {
  return want == 0 ? got == 0 : std::fabs(got - want) <= tol * std::fabs(want);
}


const NodeModel& N(const Analysis& r, const std::string& name) {
  const NodeModel* m = r.Find(name);
  REQUIRE(m != nullptr);
  return *m;
}

// ---- The paper's ResNet storage example -----------------------------------

TEST_CASE("ResNet storage example: dataset size, bytes per minibatch, minibatches per 100 MB/s", "[analysis][paper]") {
  // 1024 TFRecord files (a glob the runtime resolved) of 1200 records of
  // 110 kB each; batch 128. 10 files were read to the end.
  TraceBuilder b(R"({"name": "resnet", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "imagenet/train-*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 16, "parallelism": 16}},
    {"name": "decode", "op": "map", "inputs": ["shards"], "map": {"parallelism": 8, "udf": [{"op": "decode_jpeg"}]}},
    {"name": "batch", "op": "batch", "inputs": ["decode"], "batch": {"batch_size": 128}}]})");
  const int64_t files = 1024, records = 1200, record_bytes = 110000, batch = 128;
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(10.0 * t);
    const int64_t mb = 100 * t, el = mb * batch;
    TraceBuilder::Node(s, "files", {20 * t, 0, 0, 0, 0}).set_cardinality(files);
    auto& read = TraceBuilder::Node(s, "read", {el, el * record_bytes, el * 1000000, el * record_bytes, 0});
    const int64_t done = 5 * t;
    read.set_files_completed(done);
    read.set_completed_file_records(done * records);
    read.set_completed_file_records_sq(static_cast<double>(done) * records * records);
    read.set_completed_file_bytes(done * records * record_bytes);
    read.set_completed_file_bytes_sq(static_cast<double>(done) * std::pow(records * record_bytes, 2.0));
    TraceBuilder::Node(s, "shards", {el, el * record_bytes, el * 10000, 0, 0});
    TraceBuilder::Node(s, "decode", {el, el * 150528, el * 20000000, 0, el});
    TraceBuilder::Node(s, "batch", {mb, mb * batch * 150528, mb * 1000000, 0, el});
  }
  AnalysisOptions opt;
  opt.disk_bandwidth_bytes_per_s = 100e6;
  auto r = b.Analyze(opt);
  REQUIRE(r.ok());
  RequireFinite(*r);

  REQUIRE(r->sources.size() == 1);
  const SourceEstimate& src = r->sources[0];
  REQUIRE(src.files == files);
  REQUIRE(src.dataset_bytes.has_value());
  // ~135 GB: 1024 x 1200 x 110 kB.
  CHECK(Rel(*src.dataset_bytes, 1024.0 * 1200 * 110e3));
  CHECK(*src.dataset_bytes > 135e9);
  CHECK(*src.dataset_bytes < 136e9);
  CHECK(src.dataset_bytes_stderr < 1e-6 * *src.dataset_bytes);  // every completed file was the same size
  CHECK(Rel(N(*r, "shards").cardinality.value, 1024.0 * 1200));
  CHECK(Rel(*N(*r, "shards").materialized_bytes, 1024.0 * 1200 * 110e3));
  // 128 x 110 kB of storage per minibatch, and what 100 MB/s buys.
  CHECK(Rel(r->disk_bytes_per_minibatch, 128 * 110e3));
  REQUIRE(r->disk_bound.has_value());
  CHECK(Rel(*r->disk_bound, 100e6 / (128 * 110e3)));
  CHECK(*r->disk_bound > 7.0);
  CHECK(*r->disk_bound < 7.2);
  CHECK(HasFinding(*r, "minibatches/s per 100 MB/s"));
  // The same bound doubles with twice the bandwidth.
  opt.disk_bandwidth_bytes_per_s = 200e6;
  auto r2 = b.Analyze(opt);
  REQUIRE(r2.ok());
  CHECK(Rel(*r2->disk_bound, 2 * *r->disk_bound));
}

// ---- Sampling --------------------------------------------------------------

struct SampleResult {
  double truth = 0;
  // Standard error of the estimator N x mean(sample) under simple random
  // sampling of k of N files, from the whole population's spread.
  double true_stderr = 0;
  SourceEstimate est;
  Analysis report;
};

// n files whose sizes are uniform in mean x [1 - spread, 1 + spread], records
// of 100 kB; the first k (a random sample, since sizes are drawn at random)
// were read to the end.
SampleResult Sample(int n, int k, double spread, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(1 - spread, 1 + spread);
  std::string files;
  std::vector<int64_t> sizes;
  for (int i = 0; i < n; ++i) {
    sizes.push_back(static_cast<int64_t>(std::llround(100e6 * u(gen) / 1e5)) * 100000);
    files += (i ? ", \"f" : "\"f") + std::to_string(i) + "\"";
  }
  TraceBuilder b(R"({"name": "sample", "nodes": [
    {"name": "read", "op": "tfrecord", "tfrecord": {"files": [)" +
                 files + R"(]}},
    {"name": "batch", "op": "batch", "inputs": ["read"], "batch": {"batch_size": 100}}]})");
  int64_t bytes = 0, records = 0;
  double bytes_sq = 0, records_sq = 0;
  for (int i = 0; i < k; ++i) {
    bytes += sizes[i];
    bytes_sq += static_cast<double>(sizes[i]) * static_cast<double>(sizes[i]);
    const int64_t rec = sizes[i] / 100000;
    records += rec;
    records_sq += static_cast<double>(rec) * static_cast<double>(rec);
  }
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    const int64_t el = records * t / 2;
    auto& read = TraceBuilder::Node(s, "read", {el, el * 100000, el * 1000, el * 100000, 0});
    if (t == 2) {
      read.set_files_completed(k);
      read.set_completed_file_bytes(bytes);
      read.set_completed_file_bytes_sq(bytes_sq);
      read.set_completed_file_records(records);
      read.set_completed_file_records_sq(records_sq);
    }
    TraceBuilder::Node(s, "batch", {el / 100, el * 100000, el * 10, 0, el});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  REQUIRE(r->sources.size() == 1);
  SampleResult out;
  for (int64_t s : sizes) out.truth += static_cast<double>(s);
  double ss = 0;
  for (int64_t s : sizes) ss += std::pow(static_cast<double>(s) - out.truth / n, 2.0);
  out.true_stderr = n * std::sqrt(ss / (n - 1)) / std::sqrt(static_cast<double>(k)) * std::sqrt(1.0 - double(k) / n);
  out.est = r->sources[0];
  out.report = std::move(*r);
  return out;
}

void CheckWithinThreeStandardErrors(int n, int k) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const SampleResult s = Sample(n, k, 0.20, seed);
    INFO("n " << n << " k " << k << " seed " << seed << ": estimate " << *s.est.dataset_bytes << " truth " << s.truth
              << " standard error " << s.true_stderr << " (reported " << s.est.dataset_bytes_stderr << ")");
    REQUIRE(s.est.dataset_bytes.has_value());
    CHECK(s.est.files == n);
    CHECK(s.est.files_completed == k);
    CHECK_FALSE(s.est.exact);
    CHECK(s.est.dataset_bytes_stderr > 0);
    CHECK(std::fabs(*s.est.dataset_bytes - s.truth) <= 3 * s.true_stderr);
    // The reported standard error estimates the true one from the sample.
    CHECK(s.est.dataset_bytes_stderr > 0.2 * s.true_stderr);
    CHECK(s.est.dataset_bytes_stderr < 5 * s.true_stderr);
    // The report states the uncertainty as a 95% interval around the
    // estimate, widened by Student's t for the few files seen.
    CHECK(s.est.interval_multiplier > 1.96);
    CHECK(Rel(s.est.dataset_bytes_lo, *s.est.dataset_bytes - s.est.interval_multiplier * s.est.dataset_bytes_stderr));
    CHECK(Rel(s.est.dataset_bytes_hi, *s.est.dataset_bytes + s.est.interval_multiplier * s.est.dataset_bytes_stderr));
    CHECK(HasFinding(s.report, "95% interval"));
    const NodeModel& read = N(s.report, "read");
    CHECK(read.cardinality.lo < read.cardinality.value);
    CHECK(read.cardinality.hi > read.cardinality.value);
  }
}

TEST_CASE("Sampling: sizes +-20%, 1% of 1024 files: within 3 standard errors, stated as an interval",
          "[analysis][sampling]") {
  CheckWithinThreeStandardErrors(1024, 10);
}

TEST_CASE("Sampling: sizes +-20%, 5 of 50 files: within 3 standard errors, stated as an interval",
          "[analysis][sampling]") {
  CheckWithinThreeStandardErrors(50, 5);
}

TEST_CASE("Sampling: sizes +-2%: 1% of 1024 files and 5 of 50 land within 2% of the truth", "[analysis][sampling]") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    for (auto [n, k] : {std::pair{1024, 10}, std::pair{50, 5}}) {
      const SampleResult s = Sample(n, k, 0.02, seed);
      INFO("n " << n << " k " << k << " seed " << seed);
      CHECK(std::fabs(*s.est.dataset_bytes - s.truth) / s.truth < 0.02);
    }
  }
}

TEST_CASE("Sampling: a single file gives an estimate but no interval", "[analysis][sampling]") {
  const SampleResult s = Sample(50, 1, 0.20, 5);
  REQUIRE(s.est.dataset_bytes.has_value());
  CHECK_FALSE(s.est.interval_known);
  CHECK_FALSE(N(s.report, "read").cardinality.interval_known);
  CHECK(HasFinding(s.report, "single file"));
  const std::string json = report::FormatAnalysisJson(s.report);
  CHECK(json.find("\"dataset_bytes_interval\": null") != std::string::npos);
  CHECK(json.find("\"cardinality_interval\": null") != std::string::npos);
}

TEST_CASE("Sampling: all files read gives the exact size and no interval", "[analysis][sampling]") {
  const SampleResult s = Sample(50, 50, 0.20, 3);
  CHECK(s.est.exact);
  CHECK(Rel(*s.est.dataset_bytes, s.truth));
  CHECK(s.est.dataset_bytes_stderr == 0);
  CHECK(N(s.report, "read").cardinality.exact);
}

// ---- Edge cases ------------------------------------------------------------

TEST_CASE("Zero-CPU node: unbounded rate, never a zero bound", "[analysis][design8]") {
  TraceBuilder b(R"({"name": "z", "nodes": [
    {"name": "source", "op": "range", "range": {"stop": 1000000}},
    {"name": "free", "op": "map", "inputs": ["source"], "map": {"parallelism": 2, "udf": [{"op": "add"}]}},
    {"name": "batch", "op": "batch", "inputs": ["free"], "batch": {"batch_size": 10}}]})",
                 4);
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "source", {1000 * t, 8000 * t, 1000000000LL * t, 0, 0});
    TraceBuilder::Node(s, "free", {1000 * t, 8000 * t, 0, 0, 1000 * t});
    TraceBuilder::Node(s, "batch", {100 * t, 8000 * t, 500000000LL * t, 0, 1000 * t});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  const NodeModel& free = N(*r, "free");
  CHECK_FALSE(free.rate_per_core.has_value());
  CHECK_FALSE(free.scaled_rate.has_value());
  CHECK(free.limit == Limit::kNone);
  // source: 1 s per 100 minibatches, sequential: 100/s; batch 0.5 s: 200/s
  // per core on up to 4 cores. The zero-cost node does not drag it to 0.
  REQUIRE(r->cpu_bound.has_value());
  CHECK(Rel(*r->cpu_bound, 100));
  CHECK(Rel(*r->cpu_bound_uncapped, 4 / (0.01 + 0.005)));
  CHECK(r->bottleneck == "source");
  CHECK(r->ranking.back() == "free");
  const std::string json = report::FormatAnalysisJson(*r);
  CHECK(json.find("\"rate_per_core\": null") != std::string::npos);
}

TEST_CASE("Zero-CPU pipeline: no CPU bound at all, reported as null", "[analysis][design8]") {
  TraceBuilder b(R"({"name": "z", "nodes": [
    {"name": "source", "op": "range", "range": {"stop": 100}},
    {"name": "batch", "op": "batch", "inputs": ["source"], "batch": {"batch_size": 10}}]})");
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "source", {10 * t, 80 * t, 0, 0, 0});
    TraceBuilder::Node(s, "batch", {t, 80 * t, 0, 0, 10 * t});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK_FALSE(r->cpu_bound.has_value());
  CHECK_FALSE(r->predicted_throughput.has_value());
  CHECK(r->bottleneck.empty());
  const auto j = report::FormatAnalysisJson(*r);
  CHECK(j.find("\"predicted_throughput\": null") != std::string::npos);
  CHECK(j.find("\"bottleneck\": null") != std::string::npos);
}

// Builds a two-snapshot trace where every node produced `el` elements.
Analysis Flat(const std::string& program, const std::vector<std::string>& names, int64_t el = 100) {
  TraceBuilder b(program);
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    for (const auto& n : names) {
      auto& st = TraceBuilder::Node(s, n, {el * t, 8 * el * t, 1000000LL * t, 0, el * t});
      if (n == "read") {
        st.set_files_completed(2);
        st.set_completed_file_records(2 * el);
        st.set_completed_file_bytes(16 * el);
      }
    }
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  return std::move(*r);
}

TEST_CASE("Randomness comes from declared random ops, not from attributes named seed", "[analysis][design8]") {
  // list_files carries a seed but does not shuffle; a node is even named
  // "seed"; resize has no random draw. Only random_flip_left_right is random,
  // and it declares no seed at all.
  const Analysis r = Flat(R"({"name": "rnd", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"], "seed": 42, "shuffle": false}},
    {"name": "read", "op": "tfrecord", "inputs": ["files"]},
    {"name": "seed", "op": "map", "inputs": ["read"],
     "map": {"udf": [{"op": "resize", "args": {"height": 8, "width": 8}}]}},
    {"name": "flip", "op": "map", "inputs": ["seed"], "map": {"udf": [{"op": "random_flip_left_right"}]}},
    {"name": "scale", "op": "map", "inputs": ["flip"], "map": {"udf": [{"op": "normalize"}]}},
    {"name": "batch", "op": "batch", "inputs": ["scale"], "batch": {"batch_size": 10}}]})",
                        {"files", "read", "seed", "flip", "scale", "batch"});
  for (const char* n : {"files", "read", "seed"}) {
    INFO(n);
    CHECK_FALSE(N(r, n).random);
    CHECK(N(r, n).cacheable);
  }
  CHECK(N(r, "flip").random);
  for (const char* n : {"flip", "scale", "batch"}) {
    INFO(n);
    CHECK_FALSE(N(r, n).cacheable);
    CHECK(N(r, n).random_below == "flip");
  }
  CHECK_FALSE(N(r, "scale").random);
  CHECK(r.cache_node == "seed");
}

TEST_CASE("Randomness: shuffle and shuffled list_files make everything above them uncacheable", "[analysis][design8]") {
  const Analysis r = Flat(R"({"name": "shuf", "nodes": [
    {"name": "source", "op": "range", "range": {"stop": 1000}},
    {"name": "mix", "op": "shuffle", "inputs": ["source"], "shuffle": {"buffer_size": 10}},
    {"name": "batch", "op": "batch", "inputs": ["mix"], "batch": {"batch_size": 10}}]})",
                        {"source", "mix", "batch"});
  CHECK(N(r, "source").cacheable);
  CHECK(N(r, "mix").random);
  CHECK_FALSE(N(r, "mix").cacheable);
  CHECK_FALSE(N(r, "batch").cacheable);
  CHECK(r.cache_node == "source");

  const Analysis f = Flat(R"({"name": "lf", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"], "shuffle": true}},
    {"name": "read", "op": "tfrecord", "inputs": ["files"]},
    {"name": "batch", "op": "batch", "inputs": ["read"], "batch": {"batch_size": 10}}]})",
                        {"files", "read", "batch"});
  CHECK(N(f, "files").random);
  CHECK_FALSE(N(f, "read").cacheable);
  CHECK(f.cache_node.empty());
  CHECK(HasFinding(f, "Nothing cacheable fits"));
}

// ---- Cardinality -------------------------------------------------------------

TEST_CASE("Cardinality follows take, skip, filter's measured ratio, repeat(k), batch, repeat forever",
          "[analysis][sizes]") {
  TraceBuilder b(R"({"name": "card", "nodes": [
    {"name": "source", "op": "range", "range": {"start": 0, "stop": 1000}},
    {"name": "skip", "op": "skip", "inputs": ["source"], "skip": {"count": 100}},
    {"name": "take", "op": "take", "inputs": ["skip"], "take": {"count": 500}},
    {"name": "keep", "op": "filter", "inputs": ["take"],
     "filter": {"predicate": [{"op": "length_filter", "args": {"min": 1}}]}},
    {"name": "thrice", "op": "repeat", "inputs": ["keep"], "repeat": {"count": 3}},
    {"name": "batch", "op": "batch", "inputs": ["thrice"], "batch": {"batch_size": 7}},
    {"name": "forever", "op": "repeat", "inputs": ["batch"]}]})");
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "source", {250 * t, 2000 * t, 1000000 * t, 0, 0});
    TraceBuilder::Node(s, "skip", {250 * t, 2000 * t, 1000 * t, 0, 250 * t});
    TraceBuilder::Node(s, "take", {250 * t, 2000 * t, 1000 * t, 0, 250 * t});
    // 2 of every 5 pass the filter.
    TraceBuilder::Node(s, "keep", {100 * t, 800 * t, 5000000 * t, 0, 250 * t});
    TraceBuilder::Node(s, "thrice", {100 * t, 800 * t, 1000 * t, 0, 100 * t});
    TraceBuilder::Node(s, "batch", {14 * t, 800 * t, 100000 * t, 0, 100 * t});
    TraceBuilder::Node(s, "forever", {14 * t, 800 * t, 1000 * t, 0, 14 * t});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(N(*r, "source").cardinality.value == 1000);
  CHECK(N(*r, "skip").cardinality.value == 900);
  CHECK(N(*r, "take").cardinality.value == 500);
  CHECK(Rel(N(*r, "keep").cardinality.value, 200));
  CHECK_FALSE(N(*r, "keep").cardinality.exact);
  CHECK(Rel(N(*r, "thrice").cardinality.value, 600));
  CHECK(N(*r, "batch").cardinality.value == 86);  // ceil(600 / 7)
  CHECK(N(*r, "forever").cardinality.kind == Cardinality::Kind::kInfinite);
  CHECK_FALSE(N(*r, "forever").cacheable);
  CHECK_FALSE(N(*r, "forever").materialized_bytes.has_value());
  CHECK(N(*r, "batch").cacheable);
  // bytes per element of batch: 800 / 14 per element.
  CHECK(Rel(*N(*r, "batch").materialized_bytes, 86 * 800.0 / 14));
  CHECK(r->cache_node == "batch");
  const auto j = report::FormatAnalysisJson(*r);
  CHECK(j.find("\"cardinality\": null") != std::string::npos);
}

TEST_CASE("Cardinality: a glob resolved in the trace counts its files, an unresolved one is unknown",
          "[analysis][sizes]") {
  const std::string program = R"({"name": "glob", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "data/*.rec"}},
    {"name": "read", "op": "tfrecord", "inputs": ["files"]},
    {"name": "batch", "op": "batch", "inputs": ["read"], "batch": {"batch_size": 10}}]})";
  for (bool resolved : {true, false}) {
    TraceBuilder b(program);
    for (int t = 1; t <= 2; ++t) {
      auto& s = b.Snapshot(t);
      auto& files = TraceBuilder::Node(s, "files", {2 * t, 20 * t, 0, 0, 0});
      if (resolved) files.set_cardinality(40);
      auto& read = TraceBuilder::Node(s, "read", {100 * t, 800 * t, 1000 * t, 800 * t, 0});
      read.set_files_completed(2);
      read.set_completed_file_records(100);
      read.set_completed_file_bytes(800);
      TraceBuilder::Node(s, "batch", {10 * t, 800 * t, 1000 * t, 0, 100 * t});
    }
    auto r = b.Analyze();
    REQUIRE(r.ok());
    RequireFinite(*r);
    INFO("resolved " << resolved);
    if (resolved) {
      CHECK(N(*r, "files").cardinality.value == 40);
      CHECK(Rel(N(*r, "read").cardinality.value, 40 * 50));
      CHECK(Rel(*r->sources[0].dataset_bytes, 40 * 400));
    } else {
      CHECK(N(*r, "files").cardinality.kind == Cardinality::Kind::kUnknown);
      CHECK(N(*r, "batch").cardinality.kind == Cardinality::Kind::kUnknown);
      CHECK_FALSE(r->sources[0].dataset_bytes.has_value());
      CHECK(HasFinding(*r, "data/*.rec"));
      CHECK(HasFinding(*r, "dataset size is unknown"));
    }
  }
}

TEST_CASE("Nodes under a cache that did no work have no steady-state cost", "[analysis][cache]") {
  TraceBuilder b(R"({"name": "cached", "nodes": [
    {"name": "source", "op": "range", "range": {"stop": 1000}},
    {"name": "work", "op": "map", "inputs": ["source"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 100}}]}},
    {"name": "mem", "op": "cache", "inputs": ["work"]},
    {"name": "again", "op": "repeat", "inputs": ["mem"]},
    {"name": "batch", "op": "batch", "inputs": ["again"], "batch": {"batch_size": 10}}]})",
                 4, 1.0);
  for (int t = 1; t <= 3; ++t) {
    auto& s = b.Snapshot(t);
    // The first epoch ran during the warm-up; afterwards the cache replays.
    TraceBuilder::Node(s, "source", {1000, 8000, 10000000, 0, 0});
    TraceBuilder::Node(s, "work", {1000, 8000, 100000000, 0, 1000});
    TraceBuilder::Node(s, "mem", {1000 * t, 8000 * t, 1000000 * t, 0, 1000});
    TraceBuilder::Node(s, "again", {1000 * t, 8000 * t, 1000000 * t, 0, 1000 * t});
    TraceBuilder::Node(s, "batch", {100 * t, 8000 * t, 2000000 * t, 0, 1000 * t});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK_FALSE(N(*r, "work").steady_state_cost);
  CHECK_FALSE(N(*r, "source").steady_state_cost);
  CHECK(N(*r, "work").limit == Limit::kCached);
  CHECK(N(*r, "mem").steady_state_cost);
  // Bytes per element of the idle nodes still come from the whole run.
  CHECK(*N(*r, "work").bytes_per_element == 8);
  // 200 minibatches in the window (t = 1 .. 3); mem + again + batch CPU only.
  CHECK(Rel(r->cpu_seconds_per_minibatch, (0.002 + 0.002 + 0.004) / 200));
  CHECK(r->ranking[3] == "source");
  CHECK(r->ranking[4] == "work");
}

// ---- Bounds, overrides, windows ------------------------------------------

std::string Testdata(const std::string& name) { return std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/" + name; }

TEST_CASE("What-if overrides: --cores, --disk-bandwidth and --mem replace the traced machine", "[analysis][bounds]") {
  AnalysisOptions opt;
  opt.cores = 32;
  opt.disk_bandwidth_bytes_per_s = 50e6;
  opt.memory_bytes = 200000000;
  auto r = AnalyzeTraceFile(Env::Default(), Testdata("image.json"), opt);
  REQUIRE(r.ok());
  CHECK(Rel(*r->cpu_bound_uncapped, 32 / 0.4));
  CHECK(Rel(*r->cpu_bound, 12.5));  // read's cycle_length cap still holds
  CHECK(Rel(*r->disk_bound, 50e6 / 3.2e6));
  CHECK(Rel(*r->predicted_throughput, 12.5));
  CHECK(Rel(r->cache_budget_bytes, (200e6 - 38735168) * 0.9));
  CHECK(r->cache_node == "files");  // shards' 320 MB no longer fits
  // At 10 MB/s storage is the limit, and the reader is the slowest node.
  opt.disk_bandwidth_bytes_per_s = 10e6;
  r = AnalyzeTraceFile(Env::Default(), Testdata("image.json"), opt);
  REQUIRE(r.ok());
  CHECK(Rel(*r->predicted_throughput, 10e6 / 3.2e6));
  CHECK(r->predicted_limit == "disk");
  CHECK(N(*r, "read").limit == Limit::kStorage);
  CHECK(Rel(*N(*r, "read").scaled_rate, 10e6 / 3.2e6));
  CHECK(r->bottleneck == "read");
}

TEST_CASE("Storage bandwidth comes from the calibrated curve at the readers' parallelism when not throttled",
          "[analysis][bounds]") {
  TraceBuilder b(R"({"name": "curve", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b", "c", "d"]}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 4, "parallelism": 2}},
    {"name": "batch", "op": "batch", "inputs": ["shards"], "batch": {"batch_size": 10}}]})");
  auto* curve = b.header().mutable_machine()->mutable_bandwidth_curve();
  auto* rising = curve->add_pieces();  // 50 MB/s per reader ...
  rising->set_slope(50e6);
  auto* flat = curve->add_pieces();  // ... up to 120 MB/s
  flat->set_intercept(120e6);
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "files", {2 * t, 2 * t, 0, 0, 0});
    TraceBuilder::Node(s, "read", {100 * t, 100000 * t, 1000 * t, 1000000 * t, 0});
    TraceBuilder::Node(s, "shards", {100 * t, 100000 * t, 1000 * t, 0, 2 * t});
    TraceBuilder::Node(s, "batch", {10 * t, 100000 * t, 1000 * t, 0, 100 * t});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  // The reader runs on shards' 2 threads: min(50e6 x 2, 120e6) = 100 MB/s;
  // 10 minibatches read 1 MB, so D = 100 kB per minibatch.
  REQUIRE(r->disk_bandwidth.has_value());
  CHECK(Rel(*r->disk_bandwidth, 100e6));
  CHECK(Rel(*r->disk_bound, 100e6 / 100000));
  // A throttle recorded in the trace wins over the curve.
  b.header().mutable_machine()->set_read_bandwidth_bytes_per_s(30e6);
  r = b.Analyze();
  REQUIRE(r.ok());
  CHECK(Rel(*r->disk_bandwidth, 30e6));
}

TEST_CASE("Max cores: sequential 1, parallel ops the machine, function nodes the cycle length", "[analysis][bounds]") {
  TraceBuilder b(R"({"name": "caps", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"files": ["a", "b"]}},
    {"name": "read", "op": "tfrecord"},
    {"name": "wide", "op": "interleave", "inputs": ["narrow"],
     "interleave": {"function": "read", "cycle_length": 16, "parallelism": 4}},
    {"name": "narrow_read", "op": "tfrecord"},
    {"name": "narrow", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "narrow_read", "cycle_length": 3, "parallelism": 2}},
    {"name": "over", "op": "map", "inputs": ["wide"], "map": {"parallelism": 12, "udf": [{"op": "normalize"}]}},
    {"name": "tail", "op": "prefetch", "inputs": ["over"], "prefetch": {"buffer_size": 1}}]})",
                 8);
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    for (const char* n : {"files", "read", "wide", "narrow_read", "narrow", "over", "tail"}) {
      TraceBuilder::Node(s, n, {100 * t, 800 * t, 10000000LL * t, 0, 100 * t});
    }
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  CHECK(N(*r, "files").max_cores == 1);
  CHECK(N(*r, "tail").max_cores == 1);
  CHECK(N(*r, "tail").limit == Limit::kSequential);
  CHECK(N(*r, "wide").max_cores == 8);
  CHECK(N(*r, "read").max_cores == 8);  // cycle_length 16 > 8 cores
  CHECK(N(*r, "read").cores_now == 4);  // wide's 4 threads
  CHECK(N(*r, "narrow_read").max_cores == 3);
  CHECK(N(*r, "narrow_read").cores_now == 2);
  CHECK(N(*r, "narrow_read").interleave == "narrow");
  // Parallelism 12 on 8 cores: it already uses every core it can.
  CHECK(N(*r, "over").cores_now == 8);
  CHECK(N(*r, "over").limit == Limit::kSequential);
  // Every node costs 0.01 s per 100 minibatches: 10,000 per core-second.
  // The tightest cap is 1 core x 10,000 (files, tail), below 8 / (7 x 1e-4).
  CHECK(Rel(*r->cpu_bound, 1e4));
  CHECK(Rel(*r->cpu_bound_uncapped, 8 / 7e-4));
  CHECK(r->cpu_bound_limit == "files");
}

TEST_CASE("Without caps the CPU bound is the closed form cores / sum(1/R_i)", "[analysis][bounds]") {
  auto r = AnalyzeTraceFile(Env::Default(), Testdata("cpu.json"), {});
  REQUIRE(r.ok());
  double inverse = 0;
  for (const auto& m : r->nodes) inverse += 1 / *m.rate_per_core;
  CHECK(Rel(*r->cpu_bound, 4 / inverse));
  CHECK(r->cpu_bound_limit == "cores");
}

TEST_CASE("The window option picks the snapshots inside it", "[analysis][window]") {
  auto spec = ParseWindowSpec("2:4");
  REQUIRE(spec.ok());
  AnalysisOptions opt;
  opt.window = *spec;
  auto r = AnalyzeTraceFile(Env::Default(), Testdata("cpu.json"), opt);
  REQUIRE(r.ok());
  CHECK(r->window_start_seconds == 2);
  CHECK(r->window_end_seconds == 4);
  CHECK(r->minibatches == 115 - 55);
  CHECK(Rel(r->observed_throughput.value(), 30));
  // START only; and a window that includes warm-up.
  opt.window = *ParseWindowSpec("0:");
  r = AnalyzeTraceFile(Env::Default(), Testdata("cpu.json"), opt);
  REQUIRE(r.ok());
  CHECK(Rel(r->window_start_seconds, 0.5));
  CHECK(r->minibatches == 145 - 10);
  CHECK_FALSE(ParseWindowSpec("4:2").ok());
  CHECK_FALSE(ParseWindowSpec("a:b").ok());
  // A bare duration is the span an imported dump covers: positive only, and
  // refused for a trace of plumber run.
  auto span = ParseWindowSpec("7s");
  REQUIRE(span.ok());
  CHECK(span->span_seconds == 7.0);
  CHECK_FALSE(span->start_seconds);
  CHECK_FALSE(ParseWindowSpec("0").ok());
  CHECK_FALSE(ParseWindowSpec("-3").ok());
  opt.window = *span;
  auto refused = AnalyzeTraceFile(Env::Default(), Testdata("cpu.json"), opt);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("imported dumps") != std::string::npos);
}

TEST_CASE("A binary trace is streamed and analysed exactly like its JSON form", "[analysis][stream]") {
  auto trace = ReadTrace(Env::Default(), Testdata("image.json"));
  REQUIRE(trace.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("plumber-analysis-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string pb = (dir / "image.pb").string();
  REQUIRE(WriteTrace(Env::Default(), pb, *trace, Encoding::kBinary).ok());
  auto from_json = AnalyzeTraceFile(Env::Default(), Testdata("image.json"), {});
  auto from_pb = AnalyzeTraceFile(Env::Default(), pb, {});
  REQUIRE(from_json.ok());
  REQUIRE(from_pb.ok());
  from_pb->source = from_json->source;
  CHECK(report::FormatAnalysisJson(*from_pb) == report::FormatAnalysisJson(*from_json));
  std::filesystem::remove_all(dir);
}

// A filter that keeps a quarter of what a costly map makes: analyze says
// what moving it above the map would spare, and whether the move keeps the
// output. The same trace over a map that can fail says why it is not made.
TEST_CASE("a filter after a costly map: the finding names the saving and the rule's verdict", "[findings]") {
  // 100 minibatches of 8: 800 elements kept of `made`; work 200 us each.
  auto trace = [](const std::string& udf, int64_t made) {
    TraceBuilder b(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 100}},
      {"name": "work", "op": "map", "inputs": ["src"], "map": {"udf": [)" + udf + R"(]}},
      {"name": "keep", "op": "filter", "inputs": ["work"],
       "filter": {"predicate": [{"op": "label_in", "args": {"max": 24}}]}},
      {"name": "again", "op": "repeat", "inputs": ["keep"]},
      {"name": "batch", "op": "batch", "inputs": ["again"], "batch": {"batch_size": 8}}]})",
                   2);
    b.Snapshot(0);
    auto& s = b.Snapshot(10);
    TraceBuilder::Node(s, "src", {made, made * 8, 1'000'000, 0, 0});
    TraceBuilder::Node(s, "work", {made, made * 8, made * 200'000, 0, made});
    TraceBuilder::Node(s, "keep", {800, 800 * 8, 1'000'000, 0, made});
    TraceBuilder::Node(s, "again", {800, 800 * 8, 1'000'000, 0, 800});
    TraceBuilder::Node(s, "batch", {100, 800 * 8, 1'000'000, 0, 800});
    auto r = b.Analyze();
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  // A quarter kept: 6.4 ms of work per minibatch, 4.8 of it for elements
  // the filter drops; the pipeline's CPU is 6.44 ms.
  const Analysis burn = trace(R"({"op": "cpu_burn", "args": {"micros": 200}})", 3200);
  CHECK(HasFinding(
      burn, "keep keeps 25% of the elements work makes: moved above work, it would spare it 75% of its CPU (4.8 ms "
            "per minibatch, 74.53% of the pipeline's). The move keeps the output: work is deterministic, cannot fail "
            "and writes nothing keep's predicate reads: the same elements pass, in the same order."));
  const Analysis decode = trace(R"({"op": "decode_jpeg"})", 3200);
  CHECK(HasFinding(decode, "The move is not made: work can fail on bad data (decode_jpeg): keep above it would hide "
                           "the failures of the elements it drops."));
  // It decodes the component the predicate reads, so no word of the
  // user's makes the move; a decode of another component, vouched for,
  // does.
  CHECK_FALSE(HasFinding(decode, "--assume-valid-data"));
  const Analysis other = trace(R"({"op": "decode_jpeg", "args": {"component": 2}})", 3200);
  CHECK(HasFinding(other, "keep above it would hide the failures of the elements it drops. If every record decodes, "
                          "`plumber rewrite --assume-valid-data` makes it."));
  // A random map blocks the move whatever the user vouches for: no flag
  // is offered.
  const Analysis crop = trace(R"({"op": "random_crop", "args": {"height": 4, "width": 4}})", 3200);
  CHECK(HasFinding(crop, "The move is not made: work is random (random_crop)"));
  CHECK_FALSE(HasFinding(crop, "--assume-valid-data"));
  // A filter that keeps nearly everything is not worth a sentence.
  CHECK_FALSE(HasFinding(trace(R"({"op": "cpu_burn", "args": {"micros": 200}})", 840), "of the elements work makes"));
}

// Two adjacent maps, the lower one pooled: each element crosses threads
// between them, which one fused map would spare. Named with the hand-off's
// calibrated price; maps on one thread are not named.
TEST_CASE("an unfused chain: the finding names the hand-off a fusion spares", "[findings]") {
  auto trace = [](int lower_parallelism) {
    TraceBuilder b(R"({"nodes": [
      {"name": "src", "op": "range", "range": {"stop": 100000}},
      {"name": "a", "op": "map", "inputs": ["src"], "map": {"parallelism": )" +
                       std::to_string(lower_parallelism) + R"(, "udf": [{"op": "add"}]}},
      {"name": "b", "op": "map", "inputs": ["a"], "map": {"udf": [{"op": "add"}]}},
      {"name": "batch", "op": "batch", "inputs": ["b"], "batch": {"batch_size": 100}}]})",
                   2);
    auto* h = b.header().mutable_machine()->mutable_handoff();
    h->set_cpu_ns(10'000);
    h->set_chunked_cpu_ns(1'000);
    h->set_payload_cpu_ns(1'500);
    b.Snapshot(0);
    auto& s = b.Snapshot(1);
    // 10,000 elements of 1 us each in each map: 10 ms per minibatch each.
    TraceBuilder::Node(s, "src", {10000, 80000, 1'000'000, 0, 0});
    TraceBuilder::Node(s, "a", {10000, 80000, 10'000'000, 0, 10000});
    TraceBuilder::Node(s, "b", {10000, 80000, 10'000'000, 0, 10000});
    TraceBuilder::Node(s, "batch", {100, 80000, 1'000'000, 0, 10000});
    auto r = b.Analyze();
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  const Analysis pooled = trace(2);
  // 8-byte elements of 1 us: 1 us each chunked, plus 10 us a chunk of
  // 1,000 (the pool's chunking by wall time): 1.01 us, 100 per minibatch.
  CHECK(HasFinding(pooled, "a hands each element to b on other threads: fused into one map, they would spare that "
                           "hand-off, about 101 us of CPU per minibatch"));
  CHECK_FALSE(HasFinding(trace(1), "hands each element to"));
}

}  // namespace
}  // namespace plumber::analysis
