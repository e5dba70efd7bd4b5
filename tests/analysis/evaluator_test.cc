// The one evaluator (analysis/evaluator.h) on a program whose costs are all
// stated here: each limit by hand, the ceiling, the CPU no node holds, and
// the throughput LP over the same rows as a cross-check.
#include "analysis/evaluator.h"

#include "lp/throughput.h"
#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::GraphOf;

// source -> decode (a pool of 4) -> batch, with a prefetch at the output:
// groups are the consumer, decode's workers, decode's input lock and the
// prefetch's thread.
const char* kProgram = R"({"name": "p", "nodes": [
  {"name": "source", "op": "range", "range": {"stop": 1000}},
  {"name": "decode", "op": "map", "inputs": ["source"], "map": {"parallelism": 4, "udf": [{"op": "cpu_burn", "args": {"micros": 100}}]}},
  {"name": "batch", "op": "batch", "inputs": ["decode"], "batch": {"batch_size": 10}},
  {"name": "out", "op": "prefetch", "inputs": ["batch"], "prefetch": {"buffer_size": 2}}]})";

// Per minibatch: source 1 ms, decode 20 ms of CPU and 20 of waiting, batch
// 2 ms, the prefetch nothing.
ProgramCosts Costs(const ProgramGraph& g) {
  ProgramCosts c;
  c.nodes.resize(static_cast<size_t>(g.size()));
  c.nodes[g.Find("source")] = {true, 0.001, 0.001, 0};
  c.nodes[g.Find("decode")] = {true, 0.020, 0.040, 0};
  c.nodes[g.Find("batch")] = {true, 0.002, 0.002, 0};
  return c;
}

TEST_CASE("evaluator: a pool of 4 that waits, on 1 core and on 8", "[evaluator]") {
  const ProgramGraph g = GraphOf(kProgram);
  const ThreadGroups tg = BuildThreadGroups(g);
  EvaluationMachine one;
  one.cores = 1;
  Evaluation e = Evaluate(g, tg, Costs(g), one, nullptr);
  // The cores: 1 / 23 ms; decode's 4 workers, which also pull the source,
  // allow 4 / 41 ms.
  REQUIRE(e.throughput);
  CHECK(*e.throughput == Approx(1 / 0.023));
  CHECK(e.limit == "cpu");
  CHECK(e.bottleneck == "decode");
  CHECK(e.cores[g.Find("decode")] == Approx(0.020 / 0.023));

  EvaluationMachine eight;
  eight.cores = 8;
  e = Evaluate(g, tg, Costs(g), eight, nullptr);
  CHECK(*e.throughput == Approx(4 / 0.041));
  CHECK(e.limit == "threads");
  CHECK(e.bottleneck == "decode");
  CHECK(*e.bounds.cpu == Approx(8 / 0.023));
  // Every group with service has its own bound: the prefetch's thread
  // runs the batch.
  const int prefetch_thread = tg.group_of[g.Find("batch")];
  CHECK(*e.group_throughput[prefetch_thread] == Approx(1 / 0.002));
}

TEST_CASE("evaluator: the model step on the consumer, a ceiling, the cores", "[evaluator]") {
  const ProgramGraph g = GraphOf(kProgram);
  const ThreadGroups tg = BuildThreadGroups(g);
  EvaluationMachine m;
  m.cores = 8;
  m.step_seconds = 0.050;  // the consumer's thread: 1 / 50 ms
  Evaluation e = Evaluate(g, tg, Costs(g), m, nullptr);
  CHECK(*e.throughput == Approx(20));
  CHECK(e.limit == "threads");
  CHECK(e.bottleneck == "consumer");  // no costed node runs on the consumer's thread

  m.step_seconds = 0;
  m.ceiling = 30;
  e = Evaluate(g, tg, Costs(g), m, nullptr);
  CHECK(*e.throughput == Approx(30));
  CHECK(e.limit == "ceiling");
  CHECK(*e.bounds.other == Approx(30));

  m.ceiling.reset();
  m.cores = 1;
  ProgramCosts c = Costs(g);
  // The batch pays 27 ms more a minibatch (a hand-off on its thread): the
  // cores now carry 50 ms a minibatch.
  c.nodes[g.Find("batch")].cpu_seconds = c.nodes[g.Find("batch")].service_seconds = 0.029;
  e = Evaluate(g, tg, c, m, nullptr);
  CHECK(*e.throughput == Approx(20));
  CHECK(e.limit == "cpu");
}

TEST_CASE("evaluator: a group's extra time (a pool's input lock passing) binds that group alone", "[evaluator]") {
  const ProgramGraph g = GraphOf(kProgram);
  const ThreadGroups tg = BuildThreadGroups(g);
  int lock = -1;
  for (size_t k = 0; k < tg.groups.size(); ++k) {
    if (tg.groups[k].serialized) lock = static_cast<int>(k);
  }
  REQUIRE(lock > 0);
  EvaluationMachine m;
  m.cores = 8;
  ProgramCosts c = Costs(g);
  // The source's 1 ms a minibatch under decode's input lock, and 14 ms of
  // the lock passing between workers: 1 / 15 ms, below the workers' 4 / 41.
  c.group_extra_seconds.assign(tg.groups.size(), 0.0);
  c.group_extra_seconds[lock] = 0.014;
  Evaluation e = Evaluate(g, tg, c, m, nullptr);
  CHECK(*e.throughput == Approx(1 / 0.015));
  CHECK(e.limit == "threads");
  CHECK(*e.group_throughput[lock] == Approx(1 / 0.015));
  // The workers' own bound is untouched.
  CHECK(*e.group_throughput[tg.group_of[g.Find("decode")]] == Approx(4 / 0.041));
  // Without it the workers hold the program, as above.
  c.group_extra_seconds.clear();
  CHECK(*Evaluate(g, tg, c, m, nullptr).throughput == Approx(4 / 0.041));
}

TEST_CASE("evaluator: a node that does no work costs nothing, and storage binds", "[evaluator]") {
  const ProgramGraph g = GraphOf(kProgram);
  const ThreadGroups tg = BuildThreadGroups(g);
  ProgramCosts c = Costs(g);
  c.nodes[g.Find("decode")].works = false;  // under a cache
  c.nodes[g.Find("source")].storage_bytes = 1e6;
  EvaluationMachine m;
  m.cores = 8;
  m.storage_bandwidth = 10e6;
  const Evaluation e = Evaluate(g, tg, c, m, nullptr);
  CHECK(*e.throughput == Approx(10));
  CHECK(e.limit == "storage");
  CHECK(e.bottleneck == "source");
  CHECK(e.cores[g.Find("decode")] == 0);
}

TEST_CASE("evaluator: the throughput LP over the same rows agrees", "[evaluator]") {
  const ProgramGraph g = GraphOf(kProgram);
  const ThreadGroups tg = BuildThreadGroups(g);
  for (const double cores : {1.0, 2.0, 8.0}) {
    for (const double step : {0.0, 0.010, 0.100}) {
      const ProgramCosts c = Costs(g);
      EvaluationMachine m;
      m.cores = cores;
      m.step_seconds = step;
      const Evaluation e = Evaluate(g, tg, c, m, nullptr);
      lp::ThroughputProblem p;
      p.cores = cores;
      for (int i = 0; i < g.size(); ++i) {
        const double threads = tg.groups[tg.group_of[i]].threads;
        p.stages.push_back({g.name(i), c.nodes[i].cpu_seconds, threads, c.nodes[i].service_seconds, threads});
      }
      for (size_t k = 0; k < tg.groups.size(); ++k) {
        p.groups.push_back({tg.groups[k].name, tg.groups[k].members, static_cast<double>(tg.groups[k].threads),
                            k == 0 ? step : 0.0});
      }
      const auto solved = lp::SolveThroughput(p);
      REQUIRE(solved.ok());
      INFO(cores << " cores, step " << step);
      CHECK(*e.throughput == Approx(solved->throughput).epsilon(1e-6));
    }
  }
}

}  // namespace
}  // namespace plumber::analysis
