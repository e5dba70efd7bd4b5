// Fitting the bandwidth-vs-parallelism curve: concave, through the measured
// hull, flat beyond the best measurement.
#include <catch2/catch.hpp>

#include "lp/bandwidth_curve.h"

using namespace plumber::lp;

TEST_CASE("a latency-bound then saturated source fits two pieces", "[curve]") {
  // 10 MB/s per reader up to 8 readers, then 80 MB/s flat.
  auto pieces = FitConcaveCurve({{1, 10e6}, {2, 20e6}, {4, 40e6}, {8, 80e6}, {16, 80e6}});
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0].slope == Approx(10e6));
  CHECK(pieces[0].intercept == Approx(0).margin(1e-3));
  CHECK(pieces[1].slope == 0);
  CHECK(pieces[1].intercept == Approx(80e6));
  CHECK(CurveBandwidth(pieces, 3) == Approx(30e6));
  CHECK(CurveBandwidth(pieces, 32) == Approx(80e6));
}

TEST_CASE("noise below the hull does not bend the curve", "[curve]") {
  // p=4 measured low: the hull goes over it; p=16 lower than p=8: flat at the best.
  auto pieces = FitConcaveCurve({{1, 10e6}, {2, 19e6}, {4, 30e6}, {8, 70e6}, {16, 60e6}});
  CHECK(CurveBandwidth(pieces, 16) == Approx(70e6));
  for (double p : {1.0, 2.0, 4.0, 8.0}) CHECK(CurveBandwidth(pieces, p) >= 0);
  // Concave: slopes never increase.
  for (size_t i = 1; i < pieces.size(); ++i) CHECK(pieces[i].slope <= pieces[i - 1].slope);
  // The curve passes through the hull points it kept.
  CHECK(CurveBandwidth(pieces, 8) == Approx(70e6));
  CHECK(CurveBandwidth(pieces, 1) == Approx(10e6));
}

TEST_CASE("the fitted curve bounds the throughput LP", "[curve]") {
  ThroughputProblem p;
  p.cores = 64;
  p.stages = {{"decode", 0.0001, 64}};
  p.storage.bytes_per_minibatch = 1e6;
  p.storage.curve = FitConcaveCurve({{1, 10e6}, {2, 20e6}, {4, 40e6}, {8, 80e6}, {16, 80e6}});
  p.storage.max_parallelism = 16;
  auto plan = SolveThroughput(p);
  REQUIRE(plan.ok());
  CHECK(plan->throughput == Approx(80));
  CHECK(plan->read_parallelism >= 8 - 1e-6);
}

TEST_CASE("invalid points are ignored, none gives no curve", "[curve]") {
  CHECK(FitConcaveCurve({}).empty());
  CHECK(FitConcaveCurve({{0, 5e6}, {-1, 3e6}}).empty());
  auto one = FitConcaveCurve({{4, 40e6}});
  CHECK(CurveBandwidth(one, 4) == Approx(40e6));
  CHECK(CurveBandwidth(one, 100) == Approx(40e6));
}
