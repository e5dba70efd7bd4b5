// What `plumber run` puts in a trace's header beyond the run itself
// (runtime/run_header.h): the command line as typed, read through an Env,
// and the storage bandwidth curve fitted to the calibration's points.
#include <catch2/catch.hpp>

#include <string>

#include "base/mem_env.h"
#include "runtime/run_header.h"

namespace plumber::runtime {
namespace {

TEST_CASE("run header: the command line is the NUL-terminated arguments", "[run_header]") {
  auto env = NewMemEnv(Env::Default());
  const char typed[] = "plumber\0run\0p.json\0--trace\0\0";  // an empty last argument
  REQUIRE(WriteFileAtomically(env.get(), "cmdline", std::string(typed, sizeof(typed) - 1)).ok());
  CHECK(ReadCommandLine(env.get(), "cmdline") ==
        std::vector<std::string>{"plumber", "run", "p.json", "--trace", ""});
  // Bytes after the last NUL are no argument; an unreadable file is none.
  REQUIRE(WriteFileAtomically(env.get(), "torn", std::string("plumber\0ru", 10)).ok());
  CHECK(ReadCommandLine(env.get(), "torn") == std::vector<std::string>{"plumber"});
  CHECK(ReadCommandLine(env.get(), "missing").empty());
}

TEST_CASE("run header: this process's command line names the test binary", "[run_header]") {
  const auto argv = ReadCommandLine(Env::Default());
  REQUIRE_FALSE(argv.empty());
  CHECK(argv[0].find("runtime_test") != std::string::npos);
}

TEST_CASE("run header: the curve keeps the points and fits the concave hull", "[run_header]") {
  const schema::BandwidthCurve curve =
      FitBandwidthCurve({{1, 10e6}, {2, 20e6}, {4, 40e6}, {8, 80e6}, {16, 80e6}});
  REQUIRE(curve.points_size() == 5);
  CHECK(curve.points(3).parallelism() == 8);
  CHECK(curve.points(3).bytes_per_s() == 80e6);
  // Linear to p=8 (10 MB/s per reader), flat at the best measured after.
  REQUIRE(curve.pieces_size() == 2);
  CHECK(curve.pieces(0).slope() == Approx(10e6));
  CHECK(curve.pieces(0).intercept() == Approx(0).margin(1));
  CHECK(curve.pieces(1).slope() == Approx(0).margin(1e-9));
  CHECK(curve.pieces(1).intercept() == Approx(80e6));

  const schema::BandwidthCurve none = FitBandwidthCurve({});
  CHECK(none.points_size() == 0);
  CHECK(none.pieces_size() == 0);
}

}  // namespace
}  // namespace plumber::runtime
