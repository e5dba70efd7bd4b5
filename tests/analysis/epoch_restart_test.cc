// The epoch restart (analysis/epoch_restart.h) on a program and node models
// whose every number is stated here: the latency example's shape, 64 files
// of 16 records under a repeat, read by 64 workers in two requests per
// file. tests/loop/as_traced_test.cc holds the rule against a real run.
#include "analysis/epoch_restart.h"

#include "analysis/analysis.h"
#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::GraphOf;

std::string Reader(int parallelism, const std::string& between = "") {
  const std::string p = std::to_string(parallelism);
  const std::string repeat_input = between.empty() ? "shards" : "between";
  return R"({"name": "io", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "x/*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": )" +
         p + R"(, "parallelism": )" + p + "}}," + between + R"(
    {"name": "repeat", "op": "repeat", "inputs": [")" +
         repeat_input + R"("]},
    {"name": "batch", "op": "batch", "inputs": ["repeat"], "batch": {"batch_size": 64}}]})";
}

NodeModel Node(const std::string& name, double cpu_ms_per_minibatch, int group) {
  NodeModel m;
  m.name = name;
  m.visit_ratio = 64;
  m.elements = 1024;
  m.cpu_seconds_per_minibatch = cpu_ms_per_minibatch * 1e-3;
  m.group = group;
  return m;
}

// Per minibatch of 64 records: read 0.768 ms of CPU on the workers (group
// 1) and 8 requests of 5 ms; shards and repeat 0.116 ms on the consumer.
struct Fixture {
  std::vector<NodeModel> nodes;
  int read_threads = 64;

  Fixture() {
    NodeModel read = Node("read", 0.768, 1);
    read.storage_requests = 128;
    read.request_latency_seconds = 0.005;
    read.wait_seconds_per_minibatch = 0.040;
    NodeModel shards = Node("shards", 0.1, 0);
    shards.cardinality = Cardinality::Exact(1024);
    nodes = {read, shards, Node("repeat", 0.016, 0)};
  }
  const NodeModel* Find(const std::string& name) const {
    for (const auto& m : nodes) {
      if (m.name == name) return &m;
    }
    return nullptr;
  }
  RestartCosts Costs(const ProgramGraph& g) const {
    RestartCosts c;
    c.carried = [this, &g](int i) { return Find(g.name(i)); };
    c.works = [](int) { return true; };
    c.threads = [this, &g](int i) { return g.name(i) == "read" ? read_threads : 1; };
    c.group = [this, &g](int i) {
      const NodeModel* m = Find(g.name(i));
      return m != nullptr ? m->group : 0;
    };
    c.cpu_seconds_per_minibatch = 0.000884;
    c.cores = 2;
    return c;
  }
};

TEST_CASE("epoch restart: the fill waits one request, the drain is the last wave's CPU", "[analysis][restart]") {
  const ProgramGraph g = GraphOf(Reader(64));
  Fixture f;
  const auto r = FindEpochRestart(g, f.Costs(g));
  REQUIRE(r);
  CHECK(r->repeat == "repeat");
  // 1024 records of 64 per minibatch.
  CHECK(r->minibatches_per_epoch == Approx(16));
  CHECK(r->fill_wait_seconds == Approx(0.005));
  // 64 threads x 8 records per request = 512 records, 8 minibatches: the
  // workers' 0.768 ms and the consumer's 0.116 ms a minibatch share the 2
  // cores (3.54 ms), where the workers' alone would take 3.07 ms and the
  // consumer's alone on its thread 0.93 ms.
  CHECK(r->drain_seconds == Approx(8 * 0.000884 / 2));

  // Held by the threads (64 / 40.768 ms = 1570/s): 10.19 ms of epoch plus
  // the drain; the cores (2 / 0.884 ms) with the fill take 12.07 ms.
  SteadyBounds b;
  b.threads = 64 / 0.040768;
  b.cpu = 2 / 0.000884;
  const double epoch = 16 / *b.threads + 8 * 0.000884 / 2;
  CHECK(*r->Apply(b) == Approx(16 / epoch));
  CHECK(*r->Apply(b) < *b.threads * 0.8);
  // With the cores binding, the fill is what is lost.
  SteadyBounds cpu;
  cpu.cpu = 500;
  CHECK(*r->Apply(cpu) == Approx(16 / (0.005 + 16.0 / 500)));
  // A bound of another kind (storage, a plan's ceiling) loses nothing.
  SteadyBounds other;
  other.other = 700;
  CHECK(*r->Apply(other) == Approx(700));
  CHECK_FALSE(r->Apply(SteadyBounds{}));
}

TEST_CASE("epoch restart: one reader's wave is a request's records", "[analysis][restart]") {
  const ProgramGraph g = GraphOf(Reader(1));
  Fixture f;
  f.read_threads = 1;
  const auto r = FindEpochRestart(g, f.Costs(g));
  REQUIRE(r);
  // 8 records, an eighth of a minibatch: read's 0.768 ms per minibatch on
  // its one thread outlasts the consumer's 0.116 ms.
  CHECK(r->drain_seconds == Approx(0.125 * 0.000768));
  // The naive latency example: 16 minibatches at about 24/s lose a
  // tenth of a millisecond per 667 ms epoch.
  SteadyBounds b;
  b.threads = 24;
  CHECK(*r->Apply(b) == Approx(24).epsilon(0.001));
  CHECK(*r->Apply(b) < 24);
}

TEST_CASE("epoch restart: a wave is at most an epoch", "[analysis][restart]") {
  const ProgramGraph g = GraphOf(Reader(64));
  Fixture f;
  f.nodes[1].cardinality = Cardinality::Exact(128);  // 2 minibatches per epoch
  const auto r = FindEpochRestart(g, f.Costs(g));
  REQUIRE(r);
  CHECK(r->minibatches_per_epoch == Approx(2));
  CHECK(r->drain_seconds == Approx(2 * 0.000884 / 2));
}

TEST_CASE("epoch restart: what does not restart, or has no known epoch", "[analysis][restart]") {
  Fixture f;
  SECTION("no repeat") {
    const ProgramGraph g = GraphOf(R"({"name": "g", "nodes": [
      {"name": "src", "op": "range", "range": {"stop": 10}},
      {"name": "batch", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 2}}]})");
    CHECK_FALSE(FindEpochRestart(g, f.Costs(g)));
  }
  SECTION("an epoch of unknown length") {
    const ProgramGraph g = GraphOf(Reader(64));
    f.nodes[1].cardinality = Cardinality::Unknown("files not listed");
    CHECK_FALSE(FindEpochRestart(g, f.Costs(g)));
  }
  SECTION("nodes under a cache do not work after the first epoch: no fill, no drain") {
    const ProgramGraph g = GraphOf(
        Reader(64, R"({"name": "between", "op": "cache", "inputs": ["shards"], "cache": {}},)"));
    RestartCosts c = f.Costs(g);
    // The cache carries shards's elements but was not traced: its model is
    // shards's, its own work is a copy.
    c.carried = [&f, &g](int i) { return f.Find(g.name(i) == "between" ? "shards" : g.name(i)); };
    c.works = [&g](int i) { return g.name(i) == "repeat"; };
    const auto r = FindEpochRestart(g, c);
    REQUIRE(r);
    CHECK(r->minibatches_per_epoch == Approx(16));
    CHECK(r->fill_wait_seconds == 0);
    CHECK(r->drain_seconds == 0);
  }
}

}  // namespace
}  // namespace plumber::analysis
