// The optimize loop's step table and JSON (lib/report/optimize_format.h):
// the stages a rewrite priced with costs learned in earlier steps are
// listed in the row of the step that rewrite made. A hand-made result, no
// runs.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/optimize_format.h"

using namespace plumber;

namespace {

optimize::OptimizeResult TwoSteps() {
  optimize::OptimizeResult r;
  optimize::Step s0;
  s0.index = 0;
  s0.measured = 100;
  s0.complete = true;
  s0.end_status = "ok";
  optimize::Step s1 = s0;
  s1.index = 1;
  s1.measured = 150;
  s1.changes.push_back({"work", "parallelism", "2", "1", "why", 150});
  s1.learned.push_back({"work", 1});
  s1.learned.push_back({"decode", 3});
  r.steps = {s0, s1};
  r.best_step = 1;
  r.stopped_because = "reached the limit of 2 steps";
  return r;
}

}  // namespace

TEST_CASE("optimize report: the stages priced with learned costs", "[report][optimize]") {
  const optimize::OptimizeResult r = TwoSteps();
  const std::string table = report::StepTable(r);
  CHECK(table.find("work parallelism 2->1") != std::string::npos);
  CHECK(table.find("(priced with costs learned in earlier steps: work at 1, decode at 3)") != std::string::npos);

  auto json = nlohmann::json::parse(report::StepJson(r, ""));
  CHECK(json["steps"][0]["learned_costs"].empty());
  REQUIRE(json["steps"][1]["learned_costs"].size() == 2);
  CHECK(json["steps"][1]["learned_costs"][0]["stage"] == "work");
  CHECK(json["steps"][1]["learned_costs"][0]["parallelism"] == 1);
  CHECK(json["steps"][1]["learned_costs"][1]["stage"] == "decode");
  CHECK(json["steps"][1]["learned_costs"][1]["parallelism"] == 3);
}

TEST_CASE("optimize report: the lines around the table say what was written and kept", "[report][optimize]") {
  const optimize::OptimizeResult r = TwoSteps();
  CHECK(r.has_best());
  const std::string table = report::StepTable(r);
  const std::string wrote = report::OptimizeText("p.json", r, 2.5, "p.optimized.json", "");
  CHECK(wrote == "optimize: p.json (2.5 s per run)\n" + table + "wrote p.optimized.json (step 1)\n");
  const std::string kept = report::OptimizeText("p.json", r, 5, "", "traces/");
  CHECK(kept == "optimize: p.json (5 s per run)\n" + table + "nothing written: no run completed\ntraces in traces/\n");
}

TEST_CASE("optimize report: a prediction error that rounds to none is +0 percent and the run length has no exponent",
          "[report][optimize]") {
  optimize::OptimizeResult r = TwoSteps();
  // 0.4% under the measured rate prints as a whole percent: "-0%" would
  // read as a loss that is not there.
  r.steps[1].predicted = 149.4;
  r.steps[0].predicted = 103;
  const std::string table = report::StepTable(r);
  CHECK(table.find("-0%") == std::string::npos);
  CHECK(table.find(" +0%  ") != std::string::npos);
  CHECK(table.find(" +3%  ") != std::string::npos);
  const std::string text = report::OptimizeText("p.json", r, 1e-5, "", "");
  CHECK(text.rfind("optimize: p.json (10 us per run)\n", 0) == 0);
}
