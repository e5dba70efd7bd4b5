// The cache MILP against brute-force enumeration on random DAGs, and
// against the paper's greedy "nearest the root that fits" on chains.
#include <catch2/catch.hpp>

#include <random>

#include "lp/cache_choice.h"

using namespace plumber;
using namespace plumber::lp;

namespace {

// Best X over every subset of candidates that fits the budget.
double BruteForce(const CacheProblem& p) {
  std::vector<int> candidates;
  for (int i = 0; i < static_cast<int>(p.nodes.size()); ++i) {
    if (p.nodes[i].cacheable && p.nodes[i].materialized_bytes <= p.memory_budget) candidates.push_back(i);
  }
  double best = 0;
  for (uint32_t mask = 0; mask < (1u << candidates.size()); ++mask) {
    std::vector<int> chosen;
    double bytes = 0;
    for (size_t b = 0; b < candidates.size(); ++b) {
      if (mask & (1u << b)) {
        chosen.push_back(candidates[b]);
        bytes += p.nodes[candidates[b]].materialized_bytes;
      }
    }
    if (bytes <= p.memory_budget) best = std::max(best, ThroughputWithCaches(p, chosen));
  }
  return best;
}

CacheProblem RandomDag(std::mt19937& rng, bool chain) {
  std::uniform_real_distribution<double> unit(0, 1);
  CacheProblem p;
  p.cores = 1 + 15 * unit(rng);
  p.bandwidth = rng() % 2 ? 1e6 * (10 + 490 * unit(rng)) : 0;
  p.memory_budget = 1e9 * 10 * unit(rng);
  p.max_throughput = 1e5;
  const int n = 2 + static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i) {
    CacheNode node;
    node.name = "n" + std::to_string(i);
    node.cpu_seconds_per_minibatch = rng() % 4 == 0 ? 0.0 : 0.2 * unit(rng);
    node.max_cores = rng() % 3 == 0 ? 1.0 : 1 + 15 * unit(rng);
    if (i > 0) {
      if (chain) {
        node.consumers = {i - 1};
      } else {
        node.consumers.push_back(static_cast<int>(rng() % i));
        if (i > 1 && rng() % 3 == 0) {
          int other = static_cast<int>(rng() % i);
          if (other != node.consumers[0]) node.consumers.push_back(other);
        }
      }
    }
    node.cacheable = rng() % 2 == 0;
    node.materialized_bytes = 1e9 * 8 * unit(rng);
    p.nodes.push_back(node);
  }
  // The last nodes read storage, as sources do.
  p.nodes[n - 1].storage_bytes_per_minibatch = 1e6 * (1 + 9 * unit(rng));
  return p;
}

}  // namespace

TEST_CASE("cache MILP equals brute force on 200 random DAGs", "[cache]") {
  std::mt19937 rng(2022);
  for (int trial = 0; trial < 200; ++trial) {
    CacheProblem p = RandomDag(rng, /*chain=*/false);
    auto plan = SolveCacheChoice(p);
    INFO("trial " << trial << ": " << plan.status().ToString());
    REQUIRE(plan.ok());
    const double best = BruteForce(p);
    CHECK(plan->throughput == Approx(best).epsilon(1e-6));
    CHECK(plan->cached_bytes <= p.memory_budget);
    // The reported X is what the chosen caches really give.
    CHECK(ThroughputWithCaches(p, plan->cached) == Approx(plan->throughput));
  }
}

TEST_CASE("on chains the MILP picks the candidate nearest the root that fits", "[cache]") {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CacheProblem p = RandomDag(rng, /*chain=*/true);
    int greedy = -1;
    for (int i = 0; i < static_cast<int>(p.nodes.size()); ++i) {
      if (p.nodes[i].cacheable && p.nodes[i].materialized_bytes <= p.memory_budget) {
        greedy = i;
        break;
      }
    }
    auto plan = SolveCacheChoice(p);
    INFO("trial " << trial << ": " << plan.status().ToString());
    REQUIRE(plan.ok());
    CHECK(plan->throughput == Approx(BruteForce(p)).epsilon(1e-6));
    if (greedy < 0) {
      CHECK(plan->cached.empty());
    } else {
      CHECK(plan->cached == std::vector<int>{greedy});
      ++checked;
    }
  }
  CHECK(checked > 50);  // the generator must exercise the greedy case
}

TEST_CASE("the paper's example: decode does not fit, the interleave does", "[cache]") {
  // batch <- crop (random) <- decode (790 GB) <- interleave (148 GB) <- read.
  CacheProblem p;
  p.cores = 32;
  p.bandwidth = 1e9;
  p.memory_budget = 300e9;
  p.nodes = {
      {"batch", 0.001, 32, 0, {}, false, 0},
      {"crop", 0.01, 32, 0, {0}, false, 0},
      {"decode", 0.5, 32, 0, {1}, true, 790e9},
      {"interleave", 0.001, 32, 0, {2}, true, 148e9},
      {"read", 0.002, 1, 15e6, {3}, true, 148e9},
  };
  auto plan = SolveCacheChoice(p);
  REQUIRE(plan.ok());
  CHECK(plan->cached == std::vector<int>{3});
  CHECK(plan->cached_bytes == 148e9);
  CHECK_FALSE(plan->active[4]);
  CHECK(plan->active[2]);
  CHECK(plan->throughput == Approx(32 / 0.511));
}

TEST_CASE("an empty candidate set still solves the throughput program", "[cache]") {
  CacheProblem p;
  p.cores = 4;
  p.memory_budget = 1e9;
  p.nodes = {{"batch", 0.01, 4, 0, {}, false, 0}, {"map", 0.09, 4, 0, {0}, false, 0}};
  auto plan = SolveCacheChoice(p);
  REQUIRE(plan.ok());
  CHECK(plan->cached.empty());
  CHECK(plan->throughput == Approx(40));
}

TEST_CASE("bad cache problems are refused clearly", "[cache]") {
  CacheProblem p;
  CHECK_THAT(SolveCacheChoice(p).status().message(), Catch::Contains("no nodes"));
  p.nodes = {{"a", 0.1, 1, 0, {5}, false, 0}};
  p.cores = 1;
  CHECK_THAT(SolveCacheChoice(p).status().message(), Catch::Contains("bad consumer"));
  p.nodes[0].consumers.clear();
  p.cores = 0;
  CHECK_THAT(SolveCacheChoice(p).status().message(), Catch::Contains("more than 0 cores"));
}
