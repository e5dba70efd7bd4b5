// Provisioning: least cost for a target rate, trading cores for memory when
// a cache is cheaper, and naming the stage that makes a target unreachable.
#include <catch2/catch.hpp>

#include "lp/provisioning.h"

using namespace plumber;
using namespace plumber::lp;

namespace {

// batch <- decode (0.1 core-s per minibatch, parallel) <- read (sequential,
// 1 MB per minibatch).
ProvisionProblem Chain(bool decode_cacheable, double decode_bytes) {
  ProvisionProblem p;
  p.nodes = {
      {"batch", 0.002, 64, 0, {}, false, 0},
      {"decode", 0.1, 64, 0, {0}, decode_cacheable, decode_bytes},
      {"read", 0.001, 1, 1e6, {1}, true, 10e9},
  };
  p.target = 100;
  return p;
}

}  // namespace

TEST_CASE("without caching the cores and bandwidth follow from the target", "[provision]") {
  ProvisionProblem p = Chain(false, 0);
  p.nodes[2].cacheable = false;
  auto plan = SolveProvisioning(p);
  REQUIRE(plan.ok());
  // 100/s x (0.002 + 0.1 + 0.001) core-s = 10.3 cores -> 11 whole cores.
  CHECK(plan->cores == 11);
  CHECK(plan->bandwidth == Approx(100e6));
  CHECK(plan->cached.empty());
  CHECK(plan->cost_per_hour == Approx(11 * 0.0316 + 1 * 0.01));
}

TEST_CASE("a cache wins when memory is cheaper than the cores it saves", "[provision]") {
  ProvisionProblem p = Chain(true, 20e9);  // 20 GB after decode
  auto plan = SolveProvisioning(p);
  REQUIRE(plan.ok());
  CHECK(plan->cached == std::vector<int>{1});
  CHECK(plan->cores == 1);                 // only batch still works: 0.2 cores
  CHECK(plan->bandwidth == Approx(0).margin(1));
  CHECK(plan->memory_bytes == Approx(20e9));

  // At $1 per GB-hour even the 10 GB source cache ($10/h) costs more than
  // the 11 cores and 100 MB/s it would save (about $0.36/h).
  p.prices.per_gb_hour = 1.0;
  plan = SolveProvisioning(p);
  REQUIRE(plan.ok());
  CHECK(plan->cached.empty());
  CHECK(plan->cores == 11);
}

TEST_CASE("an unreachable target names the sequential stage", "[provision]") {
  ProvisionProblem p = Chain(false, 0);
  p.nodes[2].cacheable = false;
  p.nodes[2].cpu_seconds_per_minibatch = 0.05;  // read: at most 20/s on one core
  auto plan = SolveProvisioning(p);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == Status::Code::kFailedPrecondition);
  CHECK_THAT(plan.status().message(), Catch::Contains("unreachable") && Catch::Contains("'read'") &&
                                          Catch::Contains("at most 20 minibatches/s"));
}

TEST_CASE("an unreachable target is said without an exponent and with one core singular", "[provision]") {
  ProvisionProblem p = Chain(false, 0);
  p.nodes[2].cacheable = false;
  p.nodes[2].cpu_seconds_per_minibatch = 2e-5;  // read: at most 50k/s on one core
  p.target = 2e5;
  auto plan = SolveProvisioning(p);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(), Catch::StartsWith("target 200k minibatches/s is unreachable: ") &&
                                          Catch::Contains("stage 'read' reaches at most 50k minibatches/s "
                                                          "(1 core x 50k per core)"));
}

TEST_CASE("provisioning refuses a non-positive target", "[provision]") {
  ProvisionProblem p = Chain(false, 0);
  p.target = 0;
  CHECK(SolveProvisioning(p).status().code() == Status::Code::kInvalidArgument);
}
