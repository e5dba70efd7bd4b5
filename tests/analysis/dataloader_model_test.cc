// The DataLoader's model (analysis/dataloader_model.h) on a program whose
// costs are all stated here, every figure computed by hand: one pool of N
// worker processes running the whole chain, the main process paying each
// batch's crossing, the restart at each epoch of a non-persistent pool, and
// the in-flight bound of prefetch_factor x num_workers batches.
#include "analysis/dataloader_model.h"

#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::GraphOf;

// The shape the tracer writes: a source, a transform, the collate and the
// worker queue the main process takes batches from.
const char* kLoader = R"({"name": "p", "nodes": [
  {"name": "getitem", "op": "range", "range": {"stop": 320}},
  {"name": "decode", "op": "map", "inputs": ["getitem"], "map": {"parallelism": 2, "udf": [{"op": "cpu_burn", "args": {"micros": 100}}]}},
  {"name": "collate", "op": "batch", "inputs": ["decode"], "batch": {"batch_size": 32}},
  {"name": "prefetch", "op": "prefetch", "inputs": ["collate"], "prefetch": {"buffer_size": 4}}]})";

// Per batch: getitem 2 ms, decode 30 ms, collate 8 ms (40 ms on one
// worker); the queue's counters are the main process's wait, 50 ms here,
// which must not count as work.
ProgramCosts LoaderCosts(const ProgramGraph& g) {
  ProgramCosts c;
  c.nodes.resize(static_cast<size_t>(g.size()));
  c.nodes[g.Find("getitem")] = {true, 0.002, 0.002, 0};
  c.nodes[g.Find("decode")] = {true, 0.030, 0.030, 0};
  c.nodes[g.Find("collate")] = {true, 0.008, 0.008, 0};
  c.nodes[g.Find("prefetch")] = {true, 0.0, 0.050, 0};
  return c;
}

DataLoaderMeasured Measured() {
  DataLoaderMeasured m;
  m.batches_per_epoch = 10;
  m.worker_start_seconds = 0.1;
  m.crossing_seconds = 0.005;
  return m;
}

TEST_CASE("dataloader model: the workers are one pool running the whole chain", "[dataloader]") {
  const ProgramGraph g = GraphOf(kLoader);
  const ThreadGroups tg = DataLoaderThreadGroups(g, 3);
  REQUIRE(tg.groups.size() == 2);
  CHECK(tg.groups[0].members == std::vector<int>{g.Find("prefetch")});
  CHECK(tg.groups[1].threads == 3);
  CHECK(tg.groups[1].members.size() == 3);
  CHECK_FALSE(tg.groups[1].serialized);
  CHECK(tg.group_of[g.Find("getitem")] == 1);
  CHECK(tg.group_of[g.Find("collate")] == 1);
  // No workers: the main process builds every batch.
  const ThreadGroups inline_tg = DataLoaderThreadGroups(g, 0);
  REQUIRE(inline_tg.groups.size() == 1);
  CHECK(inline_tg.groups[0].members.size() == 4);
}

TEST_CASE("dataloader model: no workers, the main process builds each batch", "[dataloader]") {
  const ProgramGraph g = GraphOf(kLoader);
  const auto d = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {0, 2, false}, 2, 0);
  // 40 ms a batch on one thread; nothing crosses, nothing restarts.
  REQUIRE(d.evaluation.throughput);
  CHECK(*d.evaluation.throughput == Approx(25.0));
  CHECK_FALSE(d.in_flight_bound);
  CHECK_FALSE(d.evaluation.restart);
}

TEST_CASE("dataloader model: persistent workers pay the first batch an epoch, others their start too",
          "[dataloader]") {
  const ProgramGraph g = GraphOf(kLoader);
  // 2 workers on 2 cores: the pool allows 2 / 40 ms = 50 batches/s, the
  // cores 2 / 40 ms of CPU = 50, the main process 1 / 5 ms = 200, the
  // in-flight bound 2 x 2 / 45 ms = 88.9. An epoch of 10 batches takes
  // 10 / 50 = 200 ms plus its fill.
  const auto persistent = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, true}, 2, 0);
  REQUIRE(persistent.evaluation.steady_throughput);
  CHECK(*persistent.evaluation.steady_throughput == Approx(50.0));
  REQUIRE(persistent.in_flight_bound);
  CHECK(*persistent.in_flight_bound == Approx(4 / 0.045));
  // The fill: the first batch built (40 ms) and crossed (5 ms).
  CHECK(persistent.restart_seconds == Approx(0.045));
  CHECK(*persistent.evaluation.throughput == Approx(10 / 0.245));
  // Not persistent: the two workers start one after the other, 100 ms each.
  const auto restarted = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, false}, 2, 0);
  CHECK(restarted.restart_seconds == Approx(0.245));
  CHECK(*restarted.evaluation.throughput == Approx(10 / 0.445));
  // The consumer's step adds to the main process's crossing: 1 / (5 + 25
  // ms) = 33.3, below the pool's 50.
  const auto stepped = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, true}, 2, 0.025);
  CHECK(*stepped.evaluation.steady_throughput == Approx(1 / 0.030));
  CHECK(stepped.evaluation.bottleneck == "consumer");
}

TEST_CASE("dataloader model: prefetch_factor bounds the batches in flight", "[dataloader]") {
  const ProgramGraph g = GraphOf(kLoader);
  DataLoaderMeasured m = Measured();
  m.crossing_seconds = 0.010;
  // 2 workers, 1 batch each in flight: 2 / (40 + 10 ms) = 40 batches/s,
  // below the pool's 50 and the main process's 100.
  const auto one = EvaluateDataLoader(g, LoaderCosts(g), m, {2, 1, true}, 4, 0);
  CHECK(*one.evaluation.steady_throughput == Approx(40.0));
  CHECK(one.evaluation.limit == "ceiling");
  // Two each: 80, and the pool's 50 holds.
  const auto two = EvaluateDataLoader(g, LoaderCosts(g), m, {2, 2, true}, 4, 0);
  CHECK(*two.evaluation.steady_throughput == Approx(50.0));
  CHECK(two.evaluation.limit == "threads");
}

}  // namespace
}  // namespace plumber::analysis
