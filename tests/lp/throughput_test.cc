// The throughput LP against closed forms. theta is not unique, so the tests
// compare X and the binding constraint, and check theta only for
// feasibility.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "lp/throughput.h"

using namespace plumber;
using namespace plumber::lp;

namespace {

void CheckFeasible(const ThroughputProblem& p, const ThroughputPlan& plan) {
  REQUIRE(plan.cores.size() == p.stages.size());
  double total = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    CHECK(plan.cores[i] >= -1e-9);
    CHECK(plan.cores[i] <= p.stages[i].max_cores + 1e-9);
    CHECK(plan.cores[i] + 1e-9 >= plan.throughput * p.stages[i].cpu_seconds_per_minibatch);
    total += plan.cores[i];
  }
  CHECK(total <= p.cores + 1e-7);
}

}  // namespace

TEST_CASE("without caps X* = cores / sum of CPU costs", "[throughput]") {
  ThroughputProblem p;
  p.cores = 8;
  p.stages = {{"read", 0.01, 8}, {"decode", 0.5, 8}, {"batch", 0.04, 8}};
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(8 / 0.55));
  CHECK(plan->binding == "cores");
  CheckFeasible(p, *plan);
}

TEST_CASE("a sequential stage slower than the rest bounds X at its rate", "[throughput]") {
  ThroughputProblem p;
  p.cores = 32;
  p.stages = {{"shuffle", 0.2, 1}, {"decode", 0.5, 32}};
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(5.0));
  CHECK(plan->binding == "stage:shuffle");
  CheckFeasible(p, *plan);
}

TEST_CASE("a zero-CPU stage does not force the bound to zero", "[throughput]") {
  ThroughputProblem p;
  p.cores = 4;
  p.stages = {{"prefetch", 0.0, 1}, {"map", 0.1, 4}};
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(40));
}

TEST_CASE("the storage bound binds when bandwidth is short", "[throughput]") {
  // The paper's ResNet example: 128 x 110 kB per minibatch at 100 MB/s.
  ThroughputProblem p;
  p.cores = 64;
  p.stages = {{"decode", 0.01, 64}};
  p.storage.bytes_per_minibatch = 128 * 110e3;
  p.storage.bandwidth = 100e6;
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(100e6 / (128 * 110e3)));
  CHECK(plan->binding == "storage");
}

TEST_CASE("the bandwidth curve reaches the objective", "[throughput]") {
  // bandwidth(p) = min(20 MB/s * p, 5 MB/s * p + 60 MB/s, 120 MB/s); p <= 16.
  ThroughputProblem p;
  p.cores = 64;
  p.stages = {{"decode", 0.001, 64}};
  p.storage.bytes_per_minibatch = 1e6;
  p.storage.curve = {{20e6, 0}, {5e6, 60e6}, {0, 120e6}};
  p.storage.max_parallelism = 16;
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(120));
  CHECK(plan->binding == "bandwidth_curve");
  CHECK(plan->read_parallelism >= 12 - 1e-6);  // the least p that reaches 120 MB/s

  p.storage.max_parallelism = 2;  // too few readers: 40 MB/s
  plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(40));
}

TEST_CASE("X* matches the closed form on random problems", "[throughput]") {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> cost(0.0, 0.2), caps(0.5, 16), cores(1, 64);
  for (int trial = 0; trial < 200; ++trial) {
    ThroughputProblem p;
    p.cores = cores(rng);
    const int n = 1 + static_cast<int>(rng() % 8);
    double sum_c = 0, best = 1e300;
    for (int i = 0; i < n; ++i) {
      const double c = (rng() % 5 == 0) ? 0.0 : cost(rng);
      const double cap = (rng() % 3 == 0) ? 1.0 : caps(rng);
      p.stages.push_back({"s" + std::to_string(i), c, cap});
      sum_c += c;
      if (c > 0) best = std::min(best, cap / c);
    }
    if (sum_c == 0) continue;
    best = std::min(best, p.cores / sum_c);
    if (rng() % 2 == 0) {
      p.storage.bytes_per_minibatch = 1e6;
      p.storage.bandwidth = 1e6 * std::uniform_real_distribution<double>(1, 500)(rng);
      best = std::min(best, p.storage.bandwidth / p.storage.bytes_per_minibatch);
    }
    auto plan = SolveThroughput(p);
    INFO("trial " << trial);
    REQUIRE(plan.ok());
    CHECK(plan->throughput == Approx(best).epsilon(1e-6));
    CheckFeasible(p, *plan);
  }
}

TEST_CASE("degenerate problems give clear messages", "[throughput]") {
  ThroughputProblem zero_cores;
  zero_cores.cores = 0;
  zero_cores.stages = {{"map", 0.1, 1}};
  auto r = SolveThroughput(zero_cores);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("more than 0 cores"));

  ThroughputProblem free_only;
  free_only.cores = 4;
  free_only.stages = {{"prefetch", 0, 1}};
  auto f = SolveThroughput(free_only);
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.status().message(), Catch::Contains("nothing bounds the throughput"));

  ThroughputProblem negative;
  negative.cores = 4;
  negative.stages = {{"map", -1, 1}};
  CHECK(SolveThroughput(negative).status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("a stage that waits is held by its threads, not by cores", "[throughput][wait]") {
  // call: 0.2 ms CPU + 2 ms waiting per minibatch; at most 8 threads.
  ThroughputProblem p;
  p.cores = 2;
  p.stages = {{"src", 0.0001, 1}, {"call", 0.0002, 2, 0.0022, 8}};
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(8 / 0.0022));
  CHECK(plan->binding == "threads:call");
  // With threads to spare the cores bind: waiting takes none.
  p.stages[1].max_threads = 1000;
  plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(2 / 0.0003));
  CHECK(plan->binding == "cores");
}

TEST_CASE("stages sharing a thread group add up", "[throughput][wait]") {
  // A naive chain on the consumer's one thread: 1 + 2 + 3 ms.
  ThroughputProblem p;
  p.cores = 8;
  p.stages = {{"b1", 0.001, 1}, {"b2", 0.002, 1}, {"b3", 0.003, 1}};
  p.groups = {{"consumer", {0, 1, 2}, 1, 0}};
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(1 / 0.006));
  CHECK(plan->binding == "group:consumer");
  // A prefetch between b2 and b3 splits the group: the slower half binds.
  p.groups = {{"consumer", {2}, 1, 0}, {"prefetch's thread", {0, 1}, 1, 0}};
  plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(1 / 0.003));
  // The consumer's model step counts on its thread.
  p.groups[0].extra_seconds_per_minibatch = 0.002;
  plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(1 / 0.005));
  CHECK(plan->binding == "group:consumer");
}

TEST_CASE("thread group rows are checked", "[throughput][wait]") {
  ThroughputProblem p;
  p.cores = 2;
  p.stages = {{"a", 0.001, 1}};
  p.groups = {{"g", {3}, 1, 0}};
  auto plan = SolveThroughput(p);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(), Catch::Contains("thread group 'g'"));
  p.groups = {{"g", {0}, 0, 0}};
  CHECK_FALSE(SolveThroughput(p).ok());
}
