// The cores the analysis plans with: --cores when given;
// else the cores the run really had (its own CPU plus the machine's idle
// time over the window) when clearly fewer than the machine's; else the
// machine's. Each report says which. Traces without the machine's CPU time
// (older ones, imported dumps) plan with the machine's cores as before.
#include <nlohmann/json.hpp>

#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::Counters;
using testing::HasFinding;
using testing::RequireFinite;
using testing::TraceBuilder;

// A parallel map of 70 ms of CPU per minibatch and a batch of 10 ms: 80 ms
// of CPU per minibatch, 100 minibatches in the 10 s window from 1 s to 11 s.
const char* kBusyPipeline = R"({"name": "busy", "nodes": [
  {"name": "src", "op": "range", "range": {"stop": 100000000}},
  {"name": "burn", "op": "map", "inputs": ["src"], "map": {"parallelism": 4, "udf": [{"op": "cpu_burn", "args": {"micros": 8750}}]}},
  {"name": "batch", "op": "batch", "inputs": ["burn"], "batch": {"batch_size": 8}}]})";

// The machine's CPU time at one snapshot, cumulative since the run began
// (seconds); nullopt leaves the fields out, as older traces do.
struct MachineCpu {
  double process = 0;
  double idle = 0;
  double busy = 0;
};

TraceBuilder Build(int cores, std::optional<MachineCpu> at1, std::optional<MachineCpu> at11) {
  TraceBuilder b(kBusyPipeline, cores);
  for (int k = 0; k < 2; ++k) {
    const double t = k == 0 ? 1 : 11;
    const int64_t mb = k == 0 ? 10 : 110;
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "src", {mb * 8, mb * 64, 0, 0, 0});
    TraceBuilder::Node(s, "burn", {mb * 8, mb * 64, mb * 70'000'000, 0, mb * 8});
    TraceBuilder::Node(s, "batch", {mb, mb * 512, mb * 10'000'000, 0, mb * 8});
    const auto& m = k == 0 ? at1 : at11;
    s.set_process_cpu_ns(mb * 80'000'000);
    if (m) {
      s.set_process_cpu_ns(static_cast<int64_t>(m->process * 1e9));
      s.set_machine_idle_ns(static_cast<int64_t>(m->idle * 1e9));
      s.set_machine_busy_ns(static_cast<int64_t>(m->busy * 1e9));
    }
  }
  return b;
}

// Two cores for 10 s: 20 core-seconds. The run used 8 s of CPU (0.8 of a
// core), other processes 10 s (one core), and 2 s went idle. The run could
// have had 8 + 2 = 10 s of CPU: 1 core of the 2.
TraceBuilder HalfBusy() {
  return Build(2, MachineCpu{0.8, 0.2, 1.8}, MachineCpu{8.8, 2.2, 19.8});
}

std::string MachineLine(const Analysis& r) {
  const std::string text = report::FormatAnalysisText(r);
  const size_t at = text.find("machine:");
  REQUIRE(at != std::string::npos);
  return text.substr(at, text.find('\n', at) - at);
}


TEST_CASE("a run on a machine half busy with other work is planned for the core it had", "[analysis][cores]") {
  AnalysisOptions opt;
  opt.solve_programs = true;
  auto r = HalfBusy().Analyze(opt);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  RequireFinite(*r);
  REQUIRE(r->effective_cores.has_value());
  CHECK(*r->effective_cores == Approx(1.0));
  CHECK(r->machine_cores == 2);
  CHECK(r->cores == 1);
  CHECK(r->cores_from == CoresFrom::kRun);
  CHECK(r->cores_source == "the run had 1 of the machine's 2 cores; other processes used the rest");
  // 80 ms of CPU per minibatch on one core: 12.5 minibatches/s, where the
  // whole machine would promise 25.
  REQUIRE(r->cpu_bound.has_value());
  CHECK(*r->cpu_bound == Approx(12.5));
  CHECK(r->cpu_bound_limit == "cores");
  // The plan that rewrite and provision start from has the same core.
  REQUIRE(r->plan.has_value());
  CHECK(r->plan->cores == 1);
  CHECK(r->Find("burn")->max_cores == 1);

  CHECK(MachineLine(*r) ==
        "machine:              1 core (the run had 1 of the machine's 2 cores; other processes used the rest), "
        "34.4 GB memory for caching, storage unknown");
  CHECK(HasFinding(*r, "The run had 1 of the machine's 2 cores (other processes used the rest), so everything "
                       "here is planned for 1 core; give --cores 2 to plan for the whole machine."));
  const auto j = nlohmann::json::parse(report::FormatAnalysisJson(*r));
  CHECK(j["machine"]["cores"] == 1);
  CHECK(j["machine"]["cores_from"] == "run");
  CHECK(j["machine"]["machine_cores"] == 2);
  CHECK(j["machine"]["effective_cores"].get<double>() == Approx(1.0));
  const auto rank = nlohmann::json::parse(report::FormatRankJson(*r, 0));
  CHECK(rank["cores"] == 1);
  CHECK(rank["cores_from"] == "run");
  CHECK(report::FormatRankText(*r, 0).find("; planned for 1 core (the run had 1 of the machine's 2 cores") !=
        std::string::npos);
}

TEST_CASE("given --cores, the analysis plans with them over the cores the run had, and the report still says what it had", "[analysis][cores]") {
  AnalysisOptions opt;
  opt.cores = 2;
  auto r = HalfBusy().Analyze(opt);
  REQUIRE(r.ok());
  CHECK(r->cores == 2);
  CHECK(r->cores_from == CoresFrom::kGiven);
  CHECK(*r->effective_cores == Approx(1.0));
  CHECK(r->cores_source == "given by --cores; the run had 1 of the machine's 2 cores");
  CHECK(*r->cpu_bound == Approx(25.0));
  CHECK(MachineLine(*r).rfind("machine:              2 cores (given by --cores; the run had 1 of the machine's 2 "
                              "cores), ",
                              0) == 0);
  CHECK_FALSE(HasFinding(*r, "give --cores"));
  const auto j = nlohmann::json::parse(report::FormatAnalysisJson(*r));
  CHECK(j["machine"]["cores_from"] == "given");
}

TEST_CASE("a trace without the machine's CPU time plans with the machine's cores, as before", "[analysis][cores]") {
  // The same run recorded by a plumber that did not read /proc/stat.
  auto r = Build(2, std::nullopt, std::nullopt).Analyze();
  REQUIRE(r.ok());
  CHECK_FALSE(r->effective_cores.has_value());
  CHECK(r->cores == 2);
  CHECK(r->cores_from == CoresFrom::kMachine);
  CHECK(r->cores_source == "the machine's 2 cores");
  CHECK(*r->cpu_bound == Approx(25.0));
  for (const auto& w : r->warnings) CHECK(w.find("cores") == std::string::npos);
  // The machine line reads as it always did.
  CHECK(MachineLine(*r) == "machine:              2 cores, 34.4 GB memory for caching, storage unknown");
  const auto j = nlohmann::json::parse(report::FormatAnalysisJson(*r));
  CHECK(j["machine"]["cores_from"] == "machine");
  CHECK(j["machine"]["effective_cores"].is_null());
  // Recorded at one end of the window only: not usable, and not a problem.
  auto half = Build(2, std::nullopt, MachineCpu{8.8, 2.2, 19.8}).Analyze();
  REQUIRE(half.ok());
  CHECK_FALSE(half->effective_cores.has_value());
  CHECK(half->cores == 2);
}

TEST_CASE("a run that had nearly the whole machine plans with the machine's cores", "[analysis][cores]") {
  // The run used 15 s, others 1.5 s, 3.5 s idle: it had 1.85 of 2 cores,
  // above 0.9 of the machine.
  auto r = Build(2, MachineCpu{0, 0, 0}, MachineCpu{15, 3.5, 16.5}).Analyze();
  REQUIRE(r.ok());
  CHECK(*r->effective_cores == Approx(1.85));
  CHECK(r->cores == 2);
  CHECK(r->cores_from == CoresFrom::kMachine);
  CHECK(r->cores_source == "the machine's 2 cores; the run had 1.85 of them");
  CHECK(MachineLine(*r).rfind("machine:              2 cores (the machine's 2 cores; the run had 1.85 of them), ",
                              0) == 0);
}

TEST_CASE("the cores the run had round to the nearest whole core, capped at the machine's", "[analysis][cores]") {
  auto with = [](int cores, double process, double idle) {
    auto r = Build(cores, MachineCpu{0, 0, 0}, MachineCpu{process, idle, 10.0 * cores - idle}).Analyze();
    REQUIRE(r.ok());
    return *r;
  };
  // 5.6 of 8: plan with 6.
  Analysis a = with(8, 40, 16);
  CHECK(*a.effective_cores == Approx(5.6));
  CHECK(a.cores == 6);
  CHECK(a.cores_from == CoresFrom::kRun);
  // 1.4 of 2: plan with 1.
  a = with(2, 8, 6);
  CHECK(*a.effective_cores == Approx(1.4));
  CHECK(a.cores == 1);
  // 1.6 of 2: below 0.9 of the machine, but the nearest whole core is the
  // machine's two.
  a = with(2, 8, 8);
  CHECK(a.cores == 2);
  CHECK(a.cores_from == CoresFrom::kMachine);
  // 7.5 of 8 is not clearly fewer: the machine's.
  a = with(8, 40, 35);
  CHECK(a.cores == 8);
  CHECK(a.cores_from == CoresFrom::kMachine);
  // A run that barely ran on an idle-looking machine: at least 1 core, and
  // never more than the machine's (idle on CPUs it could not use).
  a = with(4, 0.1, 0.5);
  CHECK(a.cores == 1);
  a = with(4, 10, 39.9);
  CHECK(*a.effective_cores == Approx(4.0));
  CHECK(a.cores == 4);
}

TEST_CASE("machine CPU time that goes backwards is ignored with a warning", "[analysis][cores]") {
  auto r = Build(2, MachineCpu{1, 5, 5}, MachineCpu{8, 2, 19}).Analyze();
  REQUIRE(r.ok());
  CHECK_FALSE(r->effective_cores.has_value());
  CHECK(r->cores == 2);
  CHECK(r->cores_from == CoresFrom::kMachine);
  bool warned = false;
  for (const auto& w : r->warnings) warned |= w.find("the machine's CPU time") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("without the machine's cores the analysis assumes 1 and says so", "[analysis][cores]") {
  auto r = Build(0, MachineCpu{0.8, 0.2, 1.8}, MachineCpu{8.8, 2.2, 19.8}).Analyze();
  REQUIRE(r.ok());
  CHECK(r->cores == 1);
  CHECK(r->cores_from == CoresFrom::kAssumed);
  CHECK_FALSE(r->effective_cores.has_value());
  CHECK(MachineLine(*r).rfind("machine:              1 core (assumed: the trace does not record the machine's cores; "
                              "give --cores), ",
                              0) == 0);
}

}  // namespace
}  // namespace plumber::analysis
