// The tf.data service plan: the sizing arithmetic on numbers worked out by
// hand from testdata/traces/README.md, and the whole plan on the two
// hand-made traces (sharding, the distribute point, which bound holds).
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/service_plan.h"

namespace plumber::analysis {
namespace {

// image.json: sum c_i = 0.4 core-s per minibatch on 8 cores -> 20
// minibatches/s (prefetch's 1-core cap is 200, storage 1e8 / 3.2e6 = 31.25);
// a minibatch after `batch` is 32 x 224 x 224 x 3 float32 = 19267584 bytes.
constexpr double kImageRate = 20;
constexpr double kImageBatchBytes = 19267584;

StatusOr<ServicePlan> PlanFor(const std::string& trace, ServiceRequest request) {
  const std::string path = std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/" + trace;
  return PlanServiceForFile(Env::Default(), path, {}, request);
}

}  // namespace

TEST_CASE("workers are the target over the per-worker rate, rounded up", "[service]") {
  auto s = SizeService(100, kImageRate, kImageRate, std::nullopt, kImageBatchBytes);
  REQUIRE(s.ok());
  CHECK(s->service_needed);
  CHECK(s->workers == 5);  // 100 / 20 exactly: no sixth worker for rounding noise
  CHECK(s->bound == "compute");
  CHECK(s->worker_rate == Approx(20));
  CHECK_FALSE(s->network_rate.has_value());

  s = SizeService(101, kImageRate, kImageRate, std::nullopt, kImageBatchBytes);
  REQUIRE(s.ok());
  CHECK(s->workers == 6);
}

TEST_CASE("the network bounds a worker at network / bytes per minibatch", "[service]") {
  // 10 Gb/s = 1.25e9 B/s: 1.25e9 / 19267584 = 64.88 minibatches/s, above
  // the 20 the cores give, so compute holds.
  auto s = SizeService(100, kImageRate, kImageRate, 1.25e9, kImageBatchBytes);
  REQUIRE(s.ok());
  CHECK(s->bound == "compute");
  REQUIRE(s->network_rate.has_value());
  CHECK(*s->network_rate == Approx(1.25e9 / kImageBatchBytes));
  CHECK(s->workers == 5);

  // 1 Gb/s = 1.25e8 B/s: 6.4876 minibatches/s per worker; 100 / 6.4876 =
  // 15.41 -> 16 workers.
  s = SizeService(100, kImageRate, kImageRate, 1.25e8, kImageBatchBytes);
  REQUIRE(s.ok());
  CHECK(s->bound == "network");
  CHECK(s->worker_rate == Approx(6.48755).epsilon(1e-5));
  CHECK(s->workers == 16);
}

TEST_CASE("one machine that reaches the target needs no service", "[service]") {
  auto s = SizeService(20, kImageRate, kImageRate, std::nullopt, kImageBatchBytes);
  REQUIRE(s.ok());
  CHECK_FALSE(s->service_needed);
  CHECK(s->workers == 1);
}

TEST_CASE("sizing refuses what it cannot bound", "[service]") {
  CHECK(SizeService(100, 20, 20, 0.0, kImageBatchBytes).status().code() == Status::Code::kInvalidArgument);
  CHECK(SizeService(100, 20, 20, -1e9, kImageBatchBytes).status().code() == Status::Code::kInvalidArgument);
  CHECK(SizeService(100, 20, 20, 1e9, std::nullopt).status().code() == Status::Code::kInvalidArgument);
  CHECK(SizeService(100, 20, 20, 1e9, 0.0).status().code() == Status::Code::kInvalidArgument);
  CHECK(SizeService(0, 20, 20, std::nullopt, std::nullopt).status().code() == Status::Code::kInvalidArgument);
  CHECK(SizeService(100, 0, 0, std::nullopt, std::nullopt).status().code() == Status::Code::kFailedPrecondition);
  // A worker at 1e-6 minibatches/s would need 1e8 of them.
  CHECK(SizeService(100, 1e-6, 1e-6, std::nullopt, std::nullopt).status().code() ==
        Status::Code::kFailedPrecondition);
}

TEST_CASE("image.json: dynamic sharding over its files, distribute after batch", "[service]") {
  ServiceRequest r;
  r.target = 100;
  r.worker_network_bytes_per_s = 1.25e8;
  auto p = PlanFor("image.json", r);
  REQUIRE(p.ok());
  CHECK(p->single_machine_rate == Approx(kImageRate));
  CHECK(p->worker_compute_rate == Approx(kImageRate));
  CHECK(p->worker_cores == 8);
  CHECK(p->sharding == ShardingPolicy::kDynamic);
  CHECK(p->file_readers == std::vector<std::string>{"read"});
  REQUIRE(p->files.has_value());
  CHECK(*p->files == 8);
  CHECK(p->distribute_after == "batch");
  CHECK(p->trainer_nodes == std::vector<std::string>{"prefetch"});
  REQUIRE(p->bytes_per_minibatch.has_value());
  CHECK(*p->bytes_per_minibatch == Approx(kImageBatchBytes));
  CHECK(p->sizing.bound == "network");
  CHECK(p->sizing.workers == 16);
  CHECK(p->worker_cache.empty());
  CHECK_THAT(p->cache_note, Catch::Contains("planned off"));
  // Peak buffers: shards 200000 + prefetch 2 x 19267584; no cache.
  CHECK(p->worker_memory_needed_bytes == Approx(38735168));
  CHECK_THAT(p->distribute_code, Catch::Contains("ShardingPolicy.DYNAMIC"));
  // 3.2e6 bytes read per minibatch, from the trace's 100 MB/s throttle.
  CHECK(p->disk_bytes_per_minibatch == Approx(3.2e6));
  REQUIRE(p->worker_disk_bandwidth.has_value());
  CHECK(*p->worker_disk_bandwidth == Approx(1e8));
  // 16 workers, 8 files: what the files allow (8 x 6.49 minibatches/s)
  // and how to cut the data so that every worker helps.
  bool files_caveat = false;
  for (const auto& a : p->assumptions) {
    files_caveat = files_caveat || (a.find("8 files keep at most 8 of the 16 workers") != std::string::npos &&
                                    a.find("reaches at most 51.9 minibatches/s") != std::string::npos &&
                                    a.find("write the data as at least 16 files") != std::string::npos);
  }
  CHECK(files_caveat);
}

TEST_CASE("cpu.json: a range can not be sharded, a bigger worker is held by the sequential source", "[service]") {
  ServiceRequest r;
  r.target = 500;
  r.worker_cores = 8;
  auto p = PlanFor("cpu.json", r);
  REQUIRE(p.ok());
  // One machine: 4 cores / 0.04 core-s = 100. A worker of 8 cores: 200 by
  // cores, but source runs on one core at 1 / 0.006 = 166.67; 500 / 166.67
  // is 3 to within the solver's rounding, so 3 workers, not 4.
  CHECK(p->single_machine_rate == Approx(100));
  CHECK(p->machine_cores == 4);
  CHECK(p->worker_cores == 8);
  CHECK(p->worker_compute_rate == Approx(1 / 0.006));
  CHECK_THAT(p->worker_compute_binding, Catch::Contains("'source'"));
  CHECK(p->sizing.workers == 3);
  CHECK(p->sharding == ShardingPolicy::kOff);
  CHECK_THAT(p->sharding_reason, Catch::Contains("not file-based") && Catch::Contains("'source' (range)"));
  CHECK(p->distribute_after == "batch");
  CHECK(p->trainer_nodes.empty());
  REQUIRE(p->bytes_per_minibatch.has_value());
  CHECK(*p->bytes_per_minibatch == Approx(256));
}

TEST_CASE("cpu.json: a target one machine reaches needs no service", "[service]") {
  ServiceRequest r;
  r.target = 50;
  auto p = PlanFor("cpu.json", r);
  REQUIRE(p.ok());
  CHECK_FALSE(p->sizing.service_needed);
  CHECK(p->sizing.workers == 1);
}

}  // namespace plumber::analysis
