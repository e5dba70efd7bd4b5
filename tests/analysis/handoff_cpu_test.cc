// The CPU a pooled stage's hand-offs cost outside every node's call
// (UnchargedHandoffCpu, window.h): the process's CPU over the window less
// what the nodes were charged goes to the pooled stages, by their hand-offs,
// unless a node waits or the trace lacks the process's CPU.
#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::Counters;
using testing::RequireFinite;
using testing::TraceBuilder;

// Two pooled stages (a map and a batch) over a source; 100 minibatches in
// the 10 s window from 1 s to 11 s. Per minibatch the nodes are charged
// 1 ms (src), 6 ms (work) and 1 ms (batch): 8 ms.
const char* kPooledPipeline = R"({"name": "pooled", "nodes": [
  {"name": "src", "op": "range", "range": {"stop": 100000000}},
  {"name": "work", "op": "map", "inputs": ["src"], "map": {"parallelism": 2, "udf": [{"op": "cpu_burn", "args": {"micros": 750}}]}},
  {"name": "batch", "op": "batch", "inputs": ["work"], "batch": {"batch_size": 8, "parallelism": 2}}]})";

struct PooledRun {
  double process_ms_per_minibatch = 10;  // what the process spent
  int64_t work_handoffs = 300;           // over the window, per 100 minibatches
  int64_t batch_handoffs = 100;
  int64_t work_wait_ns = 0;
  bool machine_cpu = true;  // the snapshots record the process's CPU
};

TraceBuilder Build(const PooledRun& run) {
  TraceBuilder b(kPooledPipeline, 2);
  for (int k = 0; k < 2; ++k) {
    const int64_t mb = k == 0 ? 10 : 110;
    auto& s = b.Snapshot(k == 0 ? 1 : 11);
    TraceBuilder::Node(s, "src", {mb * 8, mb * 64, mb * 1'000'000, 0, 0});
    auto& work = TraceBuilder::Node(s, "work", {mb * 8, mb * 64, mb * 6'000'000, 0, mb * 8});
    work.set_handoffs(mb * run.work_handoffs / 100);
    work.set_wait_ns(mb * run.work_wait_ns);
    auto& batch = TraceBuilder::Node(s, "batch", {mb, mb * 512, mb * 1'000'000, 0, mb * 8});
    batch.set_handoffs(mb * run.batch_handoffs / 100);
    if (run.machine_cpu) {
      s.set_process_cpu_ns(static_cast<int64_t>(static_cast<double>(mb) * run.process_ms_per_minibatch * 1e6));
      s.set_machine_idle_ns(0);
      s.set_machine_busy_ns(static_cast<int64_t>(k == 0 ? 2e9 : 22e9));
    }
  }
  b.header().set_wait_traced(true);
  return b;
}

double CpuMs(const Analysis& r, const std::string& node) { return 1e3 * r.Find(node)->cpu_seconds_per_minibatch; }

TEST_CASE("CPU the nodes were not charged goes to the pooled stages by their hand-offs", "[analysis][handoff]") {
  // 10 ms spent, 8 charged: 2 ms per minibatch, 3 hand-offs of work's to
  // every 1 of batch's.
  AnalysisOptions two_cores;
  two_cores.cores = 2;
  auto r = Build({}).Analyze(two_cores);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(CpuMs(*r, "src") == Approx(1.0));
  CHECK(CpuMs(*r, "work") == Approx(6.0 + 1.5));
  CHECK(CpuMs(*r, "batch") == Approx(1.0 + 0.5));
  CHECK(r->Find("work")->handoff_cpu_seconds == Approx(0.15));  // 1.5 ms x 100 minibatches
  CHECK(r->Find("src")->handoff_cpu_seconds == 0);
  // The CPU bound pays for all the process spent: 2 cores / 10 ms.
  REQUIRE(r->cpu_bound.has_value());
  CHECK(*r->cpu_bound == Approx(200.0));
  bool said = false;
  for (const auto& f : r->findings) {
    said = said || f.rfind("batch's CPU includes 500 us per minibatch (33.33%) of hand-off work", 0) == 0;
  }
  CHECK(said);
}

TEST_CASE("hand-off CPU is left alone when a node waits, when the nodes were charged it all, or when "
          "the trace lacks the process's CPU",
          "[analysis][handoff]") {
  PooledRun waits;
  waits.work_wait_ns = 2'000'000;  // parked waiters' wake-ups are priced on their own
  PooledRun all_charged;
  all_charged.process_ms_per_minibatch = 7.5;  // less than charged: sampling noise, not hand-offs
  PooledRun no_process_cpu;
  no_process_cpu.machine_cpu = false;
  PooledRun no_handoffs;
  no_handoffs.work_handoffs = no_handoffs.batch_handoffs = 0;
  for (const PooledRun& run : {waits, all_charged, no_process_cpu, no_handoffs}) {
    auto r = Build(run).Analyze();
    REQUIRE(r.ok());
    CHECK(CpuMs(*r, "work") == Approx(6.0));
    CHECK(CpuMs(*r, "batch") == Approx(1.0));
    CHECK(r->Find("work")->handoff_cpu_seconds == 0);
    CHECK(r->Find("batch")->handoff_cpu_seconds == 0);
  }
}

}  // namespace
}  // namespace plumber::analysis
