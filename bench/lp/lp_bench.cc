// Benchmark of the optimizer's programs: the throughput LP on a
// 1,000-node pipeline and the cache MILP with 50 candidates, each reported
// as a ratio to the time it takes to parse a trace of the same pipeline
// (1,000 nodes, 20 snapshots) in the same run, since absolute times on a
// shared machine mean little. Usage: lp_bench [--nodes N] [--candidates K]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "lp/cache_choice.h"
#include "lp/throughput.h"
#include "trace.pb.h"
#include "traceio/trace_io.h"

using namespace plumber;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

schema::Trace MakeTrace(int nodes, int snapshots) {
  schema::Trace t;
  auto* p = t.mutable_header()->mutable_program();
  for (int i = 0; i < nodes; ++i) {
    auto* n = p->add_nodes();
    n->set_name("n" + std::to_string(i));
    if (i == 0) {
      n->set_op("range");
      n->mutable_range()->set_stop(1 << 30);
    } else {
      n->set_op("map");
      n->add_inputs("n" + std::to_string(i - 1));
      n->mutable_map()->add_udf()->set_op("add");
    }
  }
  for (int s = 1; s <= snapshots; ++s) {
    auto* snap = t.add_snapshots();
    snap->set_wall_ns(int64_t{s} * 1'000'000'000);
    for (int i = 0; i < nodes; ++i) {
      auto* n = snap->add_nodes();
      n->set_name("n" + std::to_string(i));
      n->set_elements_produced(int64_t{s} * 1000);
      n->set_active_cpu_ns(int64_t{s} * (1000 + i) * 1000);
      n->set_bytes_produced(int64_t{s} * 8000);
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 1000, candidates = 50, repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--candidates")) candidates = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
  }
  const std::string bytes = SerializeTraceBinary(MakeTrace(nodes, 20));
  double parse = 1e300, lp_time = 1e300, milp_time = 1e300;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> unit(0, 1);
  lp::ThroughputProblem tp;
  tp.cores = 32;
  for (int i = 0; i < nodes; ++i) tp.stages.push_back({"n" + std::to_string(i), 1e-4 * (1 + unit(rng)), i % 3 ? 32.0 : 1.0});
  lp::CacheProblem cp;
  cp.cores = 32;
  cp.bandwidth = 1e9;
  cp.memory_budget = 100e9;
  for (int i = 0; i < candidates * 2; ++i) {
    lp::CacheNode n;
    n.name = "c" + std::to_string(i);
    n.cpu_seconds_per_minibatch = 1e-3 * unit(rng);
    n.max_cores = 32;
    if (i > 0) n.consumers = {static_cast<int>(rng() % i)};
    n.cacheable = i % 2 == 1;
    n.materialized_bytes = 1e9 * 10 * unit(rng);
    n.storage_bytes_per_minibatch = i >= candidates * 2 - 5 ? 1e6 : 0;
    cp.nodes.push_back(n);
  }
  double x_lp = 0, x_milp = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = Clock::now();
    auto trace = ParseTrace(bytes, "bench.pb");
    auto t1 = Clock::now();
    auto plan = lp::SolveThroughput(tp);
    auto t2 = Clock::now();
    auto cache = lp::SolveCacheChoice(cp);
    auto t3 = Clock::now();
    if (!trace.ok() || !plan.ok() || !cache.ok()) {
      std::fprintf(stderr, "bench failed\n");
      return 1;
    }
    x_lp = plan->throughput;
    x_milp = cache->throughput;
    parse = std::min(parse, Seconds(t0, t1));
    lp_time = std::min(lp_time, Seconds(t1, t2));
    milp_time = std::min(milp_time, Seconds(t2, t3));
  }
  std::printf("trace parse (%d nodes x 20 snapshots, %zu bytes): %.4f s\n", nodes, bytes.size(), parse);
  std::printf("throughput LP, %d stages:   %.4f s = %.2fx the parse (X = %.4g)\n", nodes, lp_time, lp_time / parse, x_lp);
  std::printf("cache MILP, %d candidates:  %.4f s = %.2fx the parse (X = %.4g)\n", candidates, milp_time,
              milp_time / parse, x_milp);
  return 0;
}
