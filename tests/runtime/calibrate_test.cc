// Source calibration: under per-request latency, more readers get more
// bandwidth, and a pipeline without a reader under an interleave says why
// it cannot be calibrated.
#include <catch2/catch.hpp>

#include <filesystem>

#include "harness.h"
#include "runtime/calibrate.h"
#include "runtime/datagen.h"

using namespace plumber;
using namespace plumber::runtime;
using namespace plumber::runtime::testing;

TEST_CASE("latency-bound reading scales with read parallelism", "[calibrate]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/data");
  ImageGenOptions gen;
  gen.files = 8;
  gen.records_per_file = 16;
  gen.width = gen.height = 64;
  REQUIRE(GenerateImages(Env::Default(), dir.path() + "/data", gen).ok());
  auto p = ParsePipeline(R"({"nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "data/*.tfrecord"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read"}},
    {"name": "batch", "op": "batch", "inputs": ["shards"], "batch": {"batch_size": 4}}]})",
                         "t.json");
  REQUIRE(p.ok());
  StorageOptions storage;
  storage.read_latency_ns = 10'000'000;  // 10 ms per request
  storage.request_bytes = 4096;          // small requests: latency dominates
  auto points = MeasureSourceBandwidth(Env::Default(), Graph(*p), dir.path(), storage, 0.4, {1, 4});
  INFO(points.status().ToString());
  REQUIRE(points.ok());
  REQUIRE(points->size() == 2);
  CHECK((*points)[0].parallelism == 1);
  CHECK((*points)[0].bytes_per_s > 0);
  // Four readers wait on four requests at once: well above one reader's
  // rate even on a loaded machine (ideal: 4x).
  CHECK((*points)[1].bytes_per_s > 2.0 * (*points)[0].bytes_per_s);
}

TEST_CASE("calibration needs a reader under an interleave", "[calibrate]") {
  auto p = ParsePipeline(R"({"nodes": [{"name": "src", "op": "range", "range": {"stop": 10}}]})", "t.json");
  REQUIRE(p.ok());
  auto points = MeasureSourceBandwidth(Env::Default(), Graph(*p), "", StorageOptions{}, 0.1);
  REQUIRE_FALSE(points.ok());
  CHECK(points.status().code() == Status::Code::kFailedPrecondition);
  CHECK_THAT(points.status().message(), Catch::Contains("interleave"));
}
