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

TEST_CASE("dataloader model: the crossing shares the cores, a restarting pool idles them while it starts",
          "[dataloader]") {
  const ProgramGraph g = GraphOf(kLoader);
  // 2 workers on 2 cores: the pool allows 2 / 40 ms = 50 batches/s, the
  // main process 1 / 5 ms = 200, the in-flight bound 2 x 2 / 45 ms = 88.9;
  // the cores run the workers' 40 ms and the crossing's 5 ms of CPU a
  // batch: 2 / 45 ms = 44.4, the tightest.
  const auto persistent = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, true}, 2, 0);
  REQUIRE(persistent.evaluation.steady_throughput);
  CHECK(*persistent.evaluation.steady_throughput == Approx(2 / 0.045));
  CHECK(persistent.evaluation.limit == "cpu");
  REQUIRE(persistent.in_flight_bound);
  CHECK(*persistent.in_flight_bound == Approx(4 / 0.045));
  // 10 batches are 5 full rounds of 2: the first round's build is work the
  // cores count, the last leaves no worker idle, so the epoch costs only
  // the last crossing, off the cores: 10 / 50 + 5 ms = 205 ms against the
  // cores' 225.
  CHECK(persistent.restart_seconds == Approx(0.045));
  CHECK(*persistent.evaluation.throughput == Approx(2 / 0.045));
  // 11 batches: the 6th round has 1 batch, so one core idles 40 ms: the
  // cores' epoch is 20 ms + 11 x 22.5 ms = 267.5 ms (the workers' 6
  // rounds and a crossing, 245 ms, are shorter).
  DataLoaderMeasured odd = Measured();
  odd.batches_per_epoch = 11;
  const auto uneven = EvaluateDataLoader(g, LoaderCosts(g), odd, {2, 2, true}, 2, 0);
  CHECK(*uneven.evaluation.throughput == Approx(11 / 0.2675));
  // Not persistent: the two workers start one after the other, 100 ms
  // each, with the cores idle: 200 ms + 225 ms an epoch.
  const auto restarted = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, false}, 2, 0);
  CHECK(restarted.restart_seconds == Approx(0.245));
  CHECK(*restarted.evaluation.throughput == Approx(10 / 0.425));
  // The consumer's step adds to the main process's crossing: 1 / (5 + 25
  // ms) = 33.3, below the cores' 44.4.
  const auto stepped = EvaluateDataLoader(g, LoaderCosts(g), Measured(), {2, 2, true}, 2, 0.025);
  CHECK(*stepped.evaluation.steady_throughput == Approx(1 / 0.030));
  CHECK(stepped.evaluation.limit == "threads");
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

// A traced run of 2 workers on 2 cores, 40 batches in the window with 1.6 s
// of the nodes' CPU (40 ms a batch) and 1.8 s of the processes' (5 ms a
// batch crossing), over 4 epochs.
schema::TraceHeader LoaderHeader(bool persistent) {
  schema::TraceHeader h;
  h.mutable_machine()->set_cores(2);
  schema::DataLoaderConfig* c = h.mutable_imported()->mutable_dataloader();
  c->set_num_workers(2);
  c->set_batch_size(32);
  c->set_prefetch_factor(2);
  c->set_persistent_workers(persistent);
  c->set_dataset_length(320);
  return h;
}

SelectedWindow LoaderWindow() {
  SelectedWindow w;
  w.start.emplace();
  w.start->set_process_cpu_ns(200'000'000);
  w.end.set_process_cpu_ns(2'000'000'000);
  schema::DataLoaderCounters* k = w.end.mutable_dataloader();
  k->set_epochs(4);
  k->set_workers_started(8);
  k->set_worker_start_ns(80'000'000);  // 20 ms an epoch: 10 ms a worker
  // 4 x 100 ms for the first batches and 4 x 25 ms for the ends: 125 ms an
  // epoch, 80 ms beyond a batch's 45 ms.
  k->set_first_batch_wait_ns(400'000'000);
  k->set_epoch_end_wait_ns(100'000'000);
  return w;
}

TEST_CASE("dataloader model: a restarting pool is priced by what the main process waited", "[dataloader]") {
  const auto restarting = MeasureDataLoader(LoaderHeader(false), LoaderWindow(), 40, 1.6);
  REQUIRE(restarting);
  REQUIRE(restarting->crossing_seconds);
  CHECK(*restarting->crossing_seconds == Approx(0.005));
  CHECK(restarting->batches_per_epoch == 10);
  // 80 ms an epoch over 2 workers, more than their 10 ms start.
  REQUIRE(restarting->worker_start_seconds);
  CHECK(*restarting->worker_start_seconds == Approx(0.040));
  // A persistent pool's waits are its first batches, not restarts: only
  // the start is measured.
  const auto persistent = MeasureDataLoader(LoaderHeader(true), LoaderWindow(), 40, 1.6);
  REQUIRE(persistent);
  CHECK(*persistent->worker_start_seconds == Approx(0.010));
  // No waits recorded (a trace from before they were): the start stands.
  SelectedWindow quiet = LoaderWindow();
  quiet.end.mutable_dataloader()->set_first_batch_wait_ns(0);
  quiet.end.mutable_dataloader()->set_epoch_end_wait_ns(0);
  CHECK(*MeasureDataLoader(LoaderHeader(false), quiet, 40, 1.6)->worker_start_seconds == Approx(0.010));
}

}  // namespace
}  // namespace plumber::analysis
