// `plumber provision` as one call (analysis/provision.h): the prices it
// accepts and refuses, and an unreachable target coming back as an answer
// that names the trace, for one machine and for a tf.data service.
#include <catch2/catch.hpp>

#include <string>

#include "analysis/provision.h"

namespace plumber::analysis {
namespace {

const std::string kCpuTrace = std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/cpu.json";

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

}  // namespace
}  // namespace plumber::analysis
