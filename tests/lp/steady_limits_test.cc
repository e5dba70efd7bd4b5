// The closed-form limits (lp/steady_limits.h) against the throughput LP they
// stand for: on any problem without a bandwidth curve the least limit is
// the LP's optimum, and its name the LP's binding constraint. Random
// problems, so that no rule can drift from its row unseen.
#include <catch2/catch.hpp>

#include <random>

#include "lp/steady_limits.h"
#include "lp/throughput.h"

using namespace plumber;
using namespace plumber::lp;

TEST_CASE("steady limits: each rule by hand", "[steady_limits]") {
  ThroughputProblem p;
  p.cores = 4;
  // read waits: 2 ms of CPU and 18 of waiting per minibatch on at most 8
  // threads; decode 10 ms of CPU on at most 2 cores.
  p.stages = {{"read", 0.002, 4, 0.020, 8}, {"decode", 0.010, 2, 0.010, 1}};
  p.groups = {{"consumer", {1}, 1, 0.001}};
  p.storage.bytes_per_minibatch = 1e6;
  p.storage.bandwidth = 50e6;
  const auto limits = SteadyLimits(p);
  REQUIRE(limits.size() == 6);
  using Kind = SteadyLimit::Kind;
  CHECK(limits[0].kind == Kind::kGroup);
  CHECK(limits[0].throughput == Approx(1 / 0.011));  // the group's 1 thread over decode and the step
  CHECK(limits[1].kind == Kind::kCores);
  CHECK(limits[1].throughput == Approx(4 / 0.012));
  CHECK(limits[2].kind == Kind::kStage);
  CHECK(limits[2].throughput == Approx(4 / 0.002));  // read's core cap
  CHECK(limits[3].throughput == Approx(2 / 0.010));  // decode's
  CHECK(limits[4].kind == Kind::kStorage);
  CHECK(limits[4].throughput == Approx(50));
  CHECK(limits[5].kind == Kind::kThreads);
  CHECK(limits[5].throughput == Approx(8 / 0.020));
  const auto tightest = TightestLimit(p);
  REQUIRE(tightest);
  CHECK(tightest->throughput == Approx(50));
  CHECK(BindingName(p, *tightest) == "storage");
}

TEST_CASE("steady limits: nothing costs, nothing bounds", "[steady_limits]") {
  ThroughputProblem p;
  p.cores = 2;
  p.stages = {{"prefetch", 0, 1, 0, 1}};
  CHECK(SteadyLimits(p).empty());
  CHECK_FALSE(TightestLimit(p));
}

TEST_CASE("steady limits: the least of them is the throughput LP's optimum and binding", "[steady_limits]") {
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<double> cost(0.0005, 0.02), cap(0.5, 8), wait(0, 0.05);
  std::uniform_int_distribution<int> stages_n(1, 6), coin(0, 3), threads(1, 64);
  for (int trial = 0; trial < 200; ++trial) {
    ThroughputProblem p;
    p.cores = 1 + coin(rng) * 2;
    const int n = stages_n(rng);
    for (int i = 0; i < n; ++i) {
      StageCost s;
      s.name = "s" + std::to_string(i);
      s.cpu_seconds_per_minibatch = coin(rng) == 0 ? 0.0 : cost(rng);
      s.max_cores = cap(rng);
      s.service_seconds_per_minibatch = coin(rng) == 0 ? s.cpu_seconds_per_minibatch + wait(rng) : 0.0;
      s.max_threads = threads(rng);
      p.stages.push_back(s);
    }
    if (coin(rng) > 0) {
      ThreadGroupCost g;
      g.name = "g";
      g.threads = threads(rng);
      for (int i = 0; i < n; i += 2) g.stages.push_back(i);
      g.extra_seconds_per_minibatch = coin(rng) == 0 ? cost(rng) : 0.0;
      p.groups.push_back(g);
    }
    if (coin(rng) == 0) {
      p.storage.bytes_per_minibatch = 1e6;
      p.storage.bandwidth = 1e6 * cap(rng) * 20;
    }
    const auto closed = TightestLimit(p);
    const auto lp = SolveThroughput(p);
    if (!closed) {
      CHECK_FALSE(lp.ok());
      continue;
    }
    INFO("trial " << trial << ": closed form " << closed->throughput << " (" << BindingName(p, *closed) << ")");
    REQUIRE(lp.ok());
    CHECK(lp->throughput == Approx(closed->throughput).epsilon(1e-6));
    // The LP names one of the limits that meet its optimum.
    bool named = false;
    for (const auto& limit : SteadyLimits(p)) {
      named = named || (BindingName(p, limit) == lp->binding &&
                        limit.throughput == Approx(closed->throughput).epsilon(1e-6));
    }
    CHECK(named);
  }
}
