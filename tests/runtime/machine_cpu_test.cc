// The machine's CPU time a run records (runtime/machine_cpu.h): /proc/stat
// parsed by hand-written examples, and whole runs over an Env whose
// /proc/stat the test writes, so that every recorded value is known in
// advance; a missing or garbled /proc/stat leaves the fields out and the
// run goes on.
#include <unistd.h>

#include <deque>
#include <mutex>

#include "base/env.h"
#include "harness.h"
#include "runtime/machine_cpu.h"
#include "runtime/run.h"
#include "traceio/trace_io.h"

namespace plumber::runtime::testing {
namespace {

// Two CPUs: user nice system idle iowait irq softirq steal guest guest_nice.
const char* kStat =
    "cpu  100 20 30 400 50 6 7 8 90 9\n"
    "cpu0 60 10 10 150 20 3 3 4 50 5\n"
    "cpu1 40 10 20 250 30 3 4 4 40 4\n"
    "intr 12345 1 2 3 0 0 0\n"
    "ctxt 999\n"
    "btime 1700000000\n"
    "processes 42\n";

TEST_CASE("/proc/stat: idle is idle + iowait, busy is user to steal without guest time", "[run][machine_cpu]") {
  auto all = ParseProcStat(kStat, {});
  REQUIRE(all.ok());
  CHECK(all->idle == 400 + 50);
  CHECK(all->busy == 100 + 20 + 30 + 6 + 7 + 8);
  // The run's CPUs, line by line.
  auto one = ParseProcStat(kStat, {1});
  REQUIRE(one.ok());
  CHECK(one->idle == 250 + 30);
  CHECK(one->busy == 40 + 10 + 20 + 3 + 4 + 4);
  auto both = ParseProcStat(kStat, {0, 1});
  REQUIRE(both.ok());
  CHECK(both->idle == 150 + 20 + 250 + 30);
  CHECK(both->busy == 60 + 10 + 10 + 3 + 3 + 4 + 40 + 10 + 20 + 3 + 4 + 4);
  // A CPU without its line (offline) fails rather than counting less.
  auto missing = ParseProcStat(kStat, {0, 2});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "/proc/stat: no readable line for cpu2");
  // Old kernels write four columns; fewer, or words, are not a CPU line.
  auto old = ParseProcStat("cpu 1 2 3 4\n", {});
  REQUIRE(old.ok());
  CHECK(old->idle == 4);
  CHECK(old->busy == 6);
  CHECK_FALSE(ParseProcStat("cpu 1 2 3\n", {}).ok());
  CHECK_FALSE(ParseProcStat("cpu 1 2 x 4\n", {}).ok());
  CHECK_FALSE(ParseProcStat("", {}).ok());
  CHECK_FALSE(ParseProcStat("intr 1 2 3\n", {}).ok());
  // Clock ticks to nanoseconds (USER_HZ is 100 nearly everywhere).
  const int64_t hz = sysconf(_SC_CLK_TCK);
  CHECK(TicksToNanos(static_cast<uint64_t>(hz)) == 1'000'000'000);
  CHECK(TicksToNanos(0) == 0);
}

// Serves /proc/stat from what the test says: each read advances every CPU
// the run may use by 10 ticks of idle and 5 of busy time. `mode` breaks it.
class ProcStatEnv final : public EnvWrapper {
 public:
  enum class Mode { kCounting, kMissing, kGarbled };
  explicit ProcStatEnv(Mode mode) : EnvWrapper(Env::Default()), mode_(mode), cpus_(RunnableCpus()) {}

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    if (path != "/proc/stat") return target()->NewSequentialFile(path);
    std::lock_guard<std::mutex> lock(mu_);
    ++reads_;
    if (mode_ == Mode::kMissing) return Status::NotFound("/proc/stat: No such file or directory");
    std::string text;
    if (mode_ == Mode::kGarbled) {
      text = "cpu this is not a number\n";
    } else {
      const uint64_t idle = 1000 + 10 * reads_, busy = 500 + 5 * reads_;
      text = "cpu  " + std::to_string(busy * cpus_.size()) + " 0 0 " + std::to_string(idle * cpus_.size()) + " 0\n";
      for (int c : cpus_) {
        text += "cpu" + std::to_string(c) + " " + std::to_string(busy) + " 0 0 " + std::to_string(idle) + " 0\n";
      }
      text += "intr 0\n";
    }
    texts_.push_back(std::move(text));
    return NewMemorySequentialFile(texts_.back(), path);
  }

  int reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_;
  }
  size_t cpus() const { return cpus_.size(); }

 private:
  const Mode mode_;
  const std::vector<int> cpus_;
  std::mutex mu_;
  int reads_ = 0;
  std::deque<std::string> texts_;  // the files' bytes, alive as long as the Env
};

const char* kMachineBurnJson = R"({"name":"burn","nodes":[
  {"name":"src","op":"range","range":{"stop":1000000}},
  {"name":"burn","op":"map","inputs":["src"],"map":{"udf":[{"op":"cpu_burn","args":{"micros":200}}]}},
  {"name":"batch","op":"batch","inputs":["burn"],"batch":{"batch_size":8}}]})";

StatusOr<schema::Trace> RunWith(ProcStatEnv* env, const std::string& trace_path) {
  auto p = ParsePipeline(kMachineBurnJson, "test");
  REQUIRE(p.ok());
  RunConfig config;
  config.batches = 30;
  config.snapshot_every_seconds = 0.02;
  config.trace_path = trace_path;
  auto result = RunPipeline(env, Graph(*p), config);
  REQUIRE(result.ok());
  CHECK(result->end_status == "ok");
  CHECK(result->error.ok());
  return ReadTrace(Env::Default(), trace_path);
}

TEST_CASE("a run records the machine's idle and busy time since it began, cumulative", "[run][machine_cpu]") {
  TempDir dir;
  ProcStatEnv env(ProcStatEnv::Mode::kCounting);
  auto trace = RunWith(&env, dir.File("t.pb"));
  REQUIRE(trace.ok());
  REQUIRE(trace->snapshots_size() >= 2);
  // One read at the start (the run's CPUs line by line), then one per
  // snapshot, in the order they were written: snapshot i is read i + 2, so
  // i + 1 reads past the start, each 10 idle and 5 busy ticks on every CPU.
  CHECK(env.reads() == 1 + trace->snapshots_size());
  const auto cpus = static_cast<uint64_t>(env.cpus());
  for (int i = 0; i < trace->snapshots_size(); ++i) {
    const auto& s = trace->snapshots(i);
    INFO("snapshot " << i);
    REQUIRE(s.has_machine_idle_ns());
    REQUIRE(s.has_machine_busy_ns());
    const uint64_t reads = static_cast<uint64_t>(i) + 1;
    CHECK(s.machine_idle_ns() == TicksToNanos(10 * reads * cpus));
    CHECK(s.machine_busy_ns() == TicksToNanos(5 * reads * cpus));
    if (i > 0) CHECK(s.machine_idle_ns() > trace->snapshots(i - 1).machine_idle_ns());
  }
}

TEST_CASE("without /proc/stat a run records no machine CPU time and does not fail", "[run][machine_cpu]") {
  for (auto mode : {ProcStatEnv::Mode::kMissing, ProcStatEnv::Mode::kGarbled}) {
    INFO((mode == ProcStatEnv::Mode::kMissing ? "missing" : "garbled"));
    TempDir dir;
    ProcStatEnv env(mode);
    auto trace = RunWith(&env, dir.File("t.pb"));
    REQUIRE(trace.ok());
    REQUIRE(trace->snapshots_size() >= 1);
    CHECK(trace->end().status() == "ok");
    // Tried once at the start (line by line, then the aggregate line) and
    // not again: a snapshot never reads a file that was not there.
    CHECK(env.reads() == 2);
    for (const auto& s : trace->snapshots()) {
      CHECK_FALSE(s.has_machine_idle_ns());
      CHECK_FALSE(s.has_machine_busy_ns());
      CHECK(s.process_cpu_ns() > 0);
    }
  }
}

TEST_CASE("the real /proc/stat gives a run the machine's CPU time", "[run][machine_cpu]") {
  if (!Env::Default()->FileExists("/proc/stat")) {
    WARN("no /proc/stat here: nothing to check");
    return;
  }
  TempDir dir;
  auto p = ParsePipeline(kMachineBurnJson, "test");
  REQUIRE(p.ok());
  RunConfig config;
  config.seconds = 0.3;
  config.snapshot_every_seconds = 0.1;
  config.trace_path = dir.File("t.pb");
  auto result = RunPipeline(Env::Default(), Graph(*p), config);
  REQUIRE(result.ok());
  const auto& last = result->final_snapshot;
  REQUIRE(last.has_machine_idle_ns());
  REQUIRE(last.has_machine_busy_ns());
  // The run burnt CPU the whole time, and the kernel saw it (to its tick).
  CHECK(last.machine_busy_ns() > 0);
  CHECK(last.machine_idle_ns() + last.machine_busy_ns() > last.wall_ns() / 2);
}

}  // namespace
}  // namespace plumber::runtime::testing
