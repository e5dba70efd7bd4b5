// plumber check's conditions on the hand traces (testdata/traces/README.md
// gives their numbers): each condition passes and fails where it should,
// a baseline catches a 20% slowdown of one stage and ignores 2% noise, and
// config files parse, merge and refuse what they should.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "report/check.h"

namespace plumber::report {
namespace {

analysis::Analysis Analyze(const std::string& name) {
  auto r = analysis::AnalyzeTraceFile(Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/" + name, {});
  REQUIRE(r.ok());
  return std::move(*r);
}

CheckOutcome Eval(const analysis::Analysis& r, const CheckConditions& c, const analysis::Analysis* base = nullptr) {
  auto out = EvaluateCheck(r, base, c);
  REQUIRE(out.ok());
  return std::move(*out);
}

TEST_CASE("each condition holds and fails on the cpu trace", "[check]") {
  // X0 = 30, predicted 100, 40 ms CPU per minibatch, bottleneck burn; as
  // traced 25: source, burn and batch share the consumer's one thread, so
  // 1 / (6 + 32 + 2 ms).
  const auto cpu = Analyze("cpu.json");
  CheckConditions c;
  SECTION("observed throughput") {
    c.min_throughput = 30;
    CHECK(Eval(cpu, c).ok());
    c.min_throughput = 30.5;
    auto out = Eval(cpu, c);
    REQUIRE(out.results.size() == 1);
    CHECK_FALSE(out.ok());
    CHECK(out.results[0].expected == "at least 30.5 minibatches/s");
    CHECK(out.results[0].found == "30 minibatches/s");
  }
  SECTION("predicted throughput") {
    c.min_predicted = 99;
    CHECK(Eval(cpu, c).ok());
    c.min_predicted = 101;
    auto out = Eval(cpu, c);
    CHECK_FALSE(out.ok());
    // The best prediction, with the as-traced one beside it.
    CHECK(out.results[0].found == "100 minibatches/s; as traced 25 minibatches/s (burn, held by threads)");
  }
  SECTION("as-traced throughput") {
    REQUIRE(cpu.as_traced.throughput);
    CHECK(*cpu.as_traced.throughput == Approx(25));
    c.min_as_traced = 24;
    auto pass = Eval(cpu, c);
    REQUIRE(pass.results.size() == 1);
    CHECK(pass.ok());
    CHECK(pass.results[0].what == "as-traced throughput");
    c.min_as_traced = 26;
    auto out = Eval(cpu, c);
    REQUIRE(out.results.size() == 1);
    CHECK_FALSE(out.ok());
    CHECK(out.results[0].expected == "at least 26 minibatches/s");
    CHECK(out.results[0].found ==
          "25 minibatches/s (burn, held by threads); best parallelism 100 minibatches/s");
    CHECK(FormatCheckText("cpu.json", out).find("FAIL cpu.json: as-traced throughput: expected at least 26") == 0);
    // The best prediction (100) passing does not rescue the as-traced floor.
    c.min_predicted = 90;
    auto both = Eval(cpu, c);
    REQUIRE(both.results.size() == 2);
    CHECK(both.results[0].ok);
    CHECK_FALSE(both.results[1].ok);
  }
  SECTION("CPU per minibatch") {
    c.max_cpu_per_batch = 0.041;
    CHECK(Eval(cpu, c).ok());
    c.max_cpu_per_batch = 0.035;
    auto out = Eval(cpu, c);
    CHECK_FALSE(out.ok());
    CHECK(out.results[0].found == "40 ms");
    CHECK(out.results[0].expected == "at most 35 ms");
  }
  SECTION("bottleneck") {
    c.expect_bottleneck = "burn";
    CHECK(Eval(cpu, c).ok());
    c.expect_bottleneck = "batch";
    auto out = Eval(cpu, c);
    CHECK_FALSE(out.ok());
    CHECK(out.results[0].expected == "batch");
    CHECK(out.results[0].found == "burn");
    c.expect_bottleneck = "no_such_node";
    auto bad = EvaluateCheck(cpu, nullptr, c);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().IsBadInput());
    CHECK(bad.status().message().find("nodes: source, burn, batch") != std::string::npos);
  }
}

TEST_CASE("a baseline catches a 20% slowdown of one stage", "[check]") {
  const auto cpu = Analyze("cpu.json");
  const auto slow = Analyze("cpu-slow-burn.json");
  CheckConditions c;
  c.baseline = "cpu.json";
  c.tolerance = 0.10;
  auto out = Eval(slow, c, &cpu);
  CHECK_FALSE(out.ok());
  std::vector<std::string> failed;
  std::string burn_found;
  for (const auto& r : out.results) {
    if (!r.ok) failed.push_back(r.what);
    if (r.what == "burn: CPU per minibatch") burn_found = r.found;
  }
  // burn: 32 ms -> 38.4 ms per minibatch; predicted 4 / 0.0464 = 86.2 < 90;
  // as traced (one thread) 1 / 0.0464 = 21.55 < 22.5.
  REQUIRE(failed ==
          std::vector<std::string>{"burn: CPU per minibatch", "predicted throughput", "as-traced throughput"});
  CHECK(burn_found.find("38.4 ms (+20.0%; rate per core 31.25 -> 26.04") == 0);
  const CheckResult& as_traced = out.results.back();
  CHECK(as_traced.expected.find("at least 22.5 minibatches/s (baseline ") == 0);
  CHECK(as_traced.expected.find("cpu.json 25 - 10%)") != std::string::npos);
  CHECK(as_traced.found == "21.55 minibatches/s (-13.8%; burn, held by threads)");
  // With a 25% tolerance the same traces pass.
  c.tolerance = 0.25;
  CHECK(Eval(slow, c, &cpu).ok());
}

TEST_CASE("a baseline ignores 2% noise", "[check]") {
  const auto cpu = Analyze("cpu.json");
  const auto noisy = Analyze("cpu-noise.json");
  CheckConditions c;
  c.baseline = "cpu.json";
  auto out = Eval(noisy, c, &cpu);  // default tolerance 10%
  CHECK(out.ok());
  CHECK(out.results.size() == 8);  // 3 nodes x (CPU, bytes) + predicted + as traced
  CHECK(out.notes.empty());
  // ... but not with a 1% tolerance.
  c.tolerance = 0.01;
  CHECK_FALSE(Eval(noisy, c, &cpu).ok());
}

TEST_CASE("check configs parse, merge and resolve paths", "[check]") {
  auto cfg = ParseCheckConfig(R"({"tolerance": "5%", "min_predicted": 50, "min_as_traced": "24/s",
      "traces": [{"trace": "traces/cpu.json", "expect_bottleneck": "burn", "max_cpu_per_batch": "45ms"},
                 {"trace": "traces/b.json", "baseline": "traces/cpu.json", "min_throughput": "2K/s"}]})",
                              "cfg.json", "data");
  REQUIRE(cfg.ok());
  REQUIRE(cfg->traces.size() == 2);
  CHECK(cfg->traces[1].trace == "data/traces/b.json");
  CHECK(*cfg->traces[1].conditions.baseline == "data/traces/cpu.json");
  CHECK(*cfg->traces[1].conditions.min_throughput == Approx(2000));
  auto c = ConditionsFor(*cfg, "data/./traces/cpu.json");
  CHECK(*c.tolerance == Approx(0.05));
  CHECK(*c.min_predicted == Approx(50));
  CHECK(*c.min_as_traced == Approx(24));
  // A flag states it again: the flag wins.
  CheckConditions flags;
  flags.min_as_traced = 30;
  CheckConditions merged = c;
  merged.MergeFrom(flags);
  CHECK(*merged.min_as_traced == Approx(30));
  CHECK(*merged.min_predicted == Approx(50));
  CHECK(*c.expect_bottleneck == "burn");
  CHECK(*c.max_cpu_per_batch == Approx(0.045));
  CHECK_FALSE(c.baseline);
  // An absolute path names the same entry.
  auto abs = ConditionsFor(*cfg, (std::filesystem::current_path() / "data/traces/cpu.json").string());
  CHECK(abs.expect_bottleneck.value_or("") == "burn");
  // A trace the config does not list gets the defaults only.
  auto other = ConditionsFor(*cfg, "elsewhere.json");
  CHECK_FALSE(other.expect_bottleneck);
  CHECK(*other.min_predicted == Approx(50));
}

TEST_CASE("check configs refuse what they cannot mean", "[check]") {
  auto error = [](const std::string& json) {
    auto cfg = ParseCheckConfig(json, "cfg.json", "");
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.status().IsBadInput());
    return cfg.status().message();
  };
  CHECK(error("{").find("cfg.json: not valid JSON") == 0);
  CHECK(error(R"({"min_thruput": 3})").find("'min_thruput': unknown key") != std::string::npos);
  CHECK(error(R"({"max_cpu_per_batch": "40"})").find("needs a unit") != std::string::npos);
  CHECK(error(R"({"max_cpu_per_batch": 40})").find("expected a string") != std::string::npos);
  CHECK(error(R"({"tolerance": "10"})").find("'10%'") != std::string::npos);
  CHECK(error(R"({"min_as_traced": "fast"})").find("'min_as_traced': 'fast' is not a throughput") !=
        std::string::npos);
  CHECK(error(R"({"traces": [{"min_predicted": 3}]})").find("traces[0]: 'trace'") != std::string::npos);
}

TEST_CASE("check flags parse with units", "[check]") {
  CHECK(*ParseThroughput("30") == Approx(30));
  CHECK(*ParseThroughput("1.5K/s") == Approx(1500));
  CHECK_FALSE(ParseThroughput("fast").ok());
  CHECK(*ParseCpuPerBatch("40ms") == Approx(0.04));
  CHECK(*ParseCpuPerBatch("0.04s") == Approx(0.04));
  CHECK_FALSE(ParseCpuPerBatch("40").ok());
  CHECK_FALSE(ParseCpuPerBatch("40 parsecs").ok());
}

}  // namespace
}  // namespace plumber::report
