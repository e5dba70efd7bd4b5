// The model's view of threads and waiting on
// programs and synthetic traces whose every number is stated here: thread
// groups per op, the as-traced prediction, the CPU-only bound on a
// storage-bound trace, stages that wait, old traces, and caches that save
// nothing. tests/loop/as_traced_test.cc holds the same rules against real
// runs of the runtime.
#include "analysis/thread_groups.h"
#include "trace_builder.h"

namespace plumber::analysis {
namespace {

using testing::Counters;
using testing::GraphOf;
using testing::TraceBuilder;

const ThreadGroup& GroupOf(const ProgramGraph& g, const ThreadGroups& tg, const std::string& node) {
  const int i = g.Find(node);
  REQUIRE(i >= 0);
  REQUIRE(tg.group_of[i] >= 0);
  return tg.groups[tg.group_of[i]];
}

bool Serialized(const ThreadGroups& tg, const std::string& owner_group, const ProgramGraph& g, const std::string& node) {
  for (const auto& group : tg.groups) {
    if (!group.serialized || group.name != owner_group) continue;
    for (int i : group.members) {
      if (g.name(i) == node) return true;
    }
  }
  return false;
}

TEST_CASE("thread groups follow each op's thread use", "[analysis][groups]") {
  const ProgramGraph g = GraphOf(R"({"name": "g", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "x/*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 3, "parallelism": 3}},
    {"name": "parse", "op": "map", "inputs": ["shards"], "map": {"parallelism": 1, "udf": [{"op": "add", "args": {"value": 1}}]}},
    {"name": "decode", "op": "map", "inputs": ["parse"], "map": {"parallelism": 4, "udf": [{"op": "add", "args": {"value": 1}}]}},
    {"name": "shuffle", "op": "shuffle", "inputs": ["decode"], "shuffle": {"buffer_size": 10}},
    {"name": "batch", "op": "batch", "inputs": ["shuffle"], "batch": {"batch_size": 4, "parallelism": 2}},
    {"name": "prefetch", "op": "prefetch", "inputs": ["batch"], "prefetch": {"buffer_size": 2}},
    {"name": "seq", "op": "map", "inputs": ["prefetch"], "map": {"parallelism": 1, "udf": [{"op": "add", "args": {"value": 1}}]}}]})");
  const ThreadGroups tg = BuildThreadGroups(g);
  // Inline on the consumer's thread: the output map and the prefetch itself.
  CHECK(GroupOf(g, tg, "seq").name == "consumer");
  CHECK(GroupOf(g, tg, "prefetch").name == "consumer");
  CHECK(GroupOf(g, tg, "seq").threads == 1);
  // The prefetch runs its input on a thread of its own; a pooled batch runs
  // its work on its workers, which pull its input (the shuffle) in turns.
  CHECK(GroupOf(g, tg, "batch").name == "batch's workers");
  CHECK(GroupOf(g, tg, "batch").threads == 2);
  CHECK(GroupOf(g, tg, "shuffle").name == "batch's workers");
  CHECK(Serialized(tg, "batch's input lock", g, "shuffle"));
  // decode, a pool of its own under the shuffle, makes its elements on its
  // workers: batch's lock only takes them out of its buffer.
  CHECK_FALSE(Serialized(tg, "batch's input lock", g, "decode"));
  // decode's workers, whose input (parse, the interleave, files) is pulled
  // one at a time under decode's input lock.
  CHECK(GroupOf(g, tg, "decode").name == "decode's workers");
  CHECK(GroupOf(g, tg, "decode").threads == 4);
  CHECK(GroupOf(g, tg, "parse").name == "decode's workers");
  CHECK(Serialized(tg, "decode's input lock", g, "parse"));
  CHECK(Serialized(tg, "decode's input lock", g, "shards"));
  CHECK(GroupOf(g, tg, "shards").name == "decode's workers");
  CHECK(GroupOf(g, tg, "files").name == "decode's workers");
  // The parallel interleave's function runs on its workers.
  CHECK(GroupOf(g, tg, "read").name == "shards's workers");
  CHECK(GroupOf(g, tg, "read").threads == 3);
  CHECK_FALSE(Serialized(tg, "decode's input lock", g, "read"));
  // The prefetch's thread holds nothing but the pooled batch's consumer
  // side: batch's work is on its workers.
  bool prefetch_thread = false;
  for (const auto& group : tg.groups) prefetch_thread = prefetch_thread || group.name == "prefetch's thread";
  CHECK(prefetch_thread);
}

TEST_CASE("a sequential interleave runs its function on its consumer's thread", "[analysis][groups]") {
  const ProgramGraph g = GraphOf(R"({"name": "g", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "x/*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 4, "parallelism": 1}},
    {"name": "batch", "op": "batch", "inputs": ["shards"], "batch": {"batch_size": 4}}]})");
  const ThreadGroups tg = BuildThreadGroups(g);
  REQUIRE(tg.groups.size() == 1);
  CHECK(tg.groups[0].members.size() == 4);
}

// A map that waits 8 ms per element and burns 1 ms, batch of 4, on 2
// cores, over 10 s: 1 minibatch = 36 ms of the consumer's thread (plus
// what the batch burns per minibatch, `batch_cpu_ns`); the source reads
// `src_storage` bytes from storage per element.
TraceBuilder WaitingMap(bool wait_traced, int64_t batch_cpu_ns = 0, int64_t src_storage = 0) {
  TraceBuilder b(R"({"name": "remote", "nodes": [
    {"name": "src", "op": "range", "range": {"stop": 1000000000}},
    {"name": "call", "op": "map", "inputs": ["src"], "map": {"parallelism": 1, "udf": [{"op": "sleep", "args": {"micros": 8000}}]}},
    {"name": "batch", "op": "batch", "inputs": ["call"], "batch": {"batch_size": 4}}]})",
                 /*cores=*/2);
  b.header().set_wait_traced(wait_traced);
  for (int t = 0; t <= 1; ++t) {
    auto& s = b.Snapshot(10.0 * t);
    const int64_t mb = 270 * t, el = 4 * mb;
    TraceBuilder::Node(s, "src", {el, el * 8, 0, el * src_storage, 0});
    auto& call = TraceBuilder::Node(s, "call", {el, el * 8, el * 1'000'000, 0, el});
    if (wait_traced) {
      call.set_wait_ns(el * 8'000'000);
      call.set_self_wall_ns(el * 9'000'000);
    }
    TraceBuilder::Node(s, "batch", {mb, mb * 32, mb * batch_cpu_ns, 0, el});
  }
  return b;
}

TEST_CASE("a stage that waits: as traced its thread binds, with threads the cores do", "[analysis][wait]") {
  AnalysisOptions opt;
  opt.solve_programs = true;
  auto r = WaitingMap(true).Analyze(opt);
  REQUIRE(r.ok());
  const NodeModel* call = r->Find("call");
  CHECK(call->wait_seconds_per_minibatch == Approx(0.032));
  CHECK(call->service_seconds_per_minibatch == Approx(0.036));
  CHECK(call->limit == Limit::kWait);
  CHECK(r->bottleneck == "call");
  // As traced: one thread, 36 ms per minibatch.
  REQUIRE(r->as_traced.throughput);
  CHECK(*r->as_traced.throughput == Approx(1 / 0.036));
  CHECK(r->as_traced.limit == "threads");
  CHECK(r->as_traced.bottleneck == "call");
  CHECK(*r->wait_bound == Approx(1 / 0.036));
  // CPU only: 2 cores over 4 ms of CPU per minibatch, map at most 2 cores.
  CHECK(*r->cpu_bound == Approx(2 / 0.004));
  // Best parallelism: threads up to 64 per core (128 here) give 128 / 36 ms
  // = 3556/s, more than the cores allow: CPU-bound at 500/s.
  CHECK(*r->predicted_throughput == Approx(500));
  CHECK(r->warnings.empty());
  bool said = false;
  for (const auto& f : r->findings) said = said || f.find("call waits 32 ms per minibatch") != std::string::npos;
  CHECK(said);
  // The plan needs 18 of them in flight (Little's law: 500/s x 36 ms).
  REQUIRE(r->plan);
  const StagePlan* stage = r->plan->Find("call");
  REQUIRE(stage);
  CHECK(stage->threads == Approx(18));
  // What rank tells the user: the same 18 lift it to where the cores bind.
  REQUIRE(call->threads_to_pass);
  CHECK(*call->threads_to_pass == 18);
  CHECK_THAT(call->limit_text, Catch::EndsWith("; 18 would lift it to 500 minibatches/s, where the cores limit"));
}

TEST_CASE("a stage that waits is sized to the next limit, the slowest other stage or the machine", "[analysis][wait]") {
  SECTION("a batch burning 8 ms a minibatch binds at 125/s, before the cores (2 / 12 ms = 167/s)") {
    auto r = WaitingMap(true, 8'000'000).Analyze(AnalysisOptions{});
    REQUIRE(r.ok());
    const NodeModel* call = r->Find("call");
    REQUIRE(call->limit == Limit::kWait);
    REQUIRE(call->threads_to_pass);
    // 125/s x 36 ms = 4.5 threads.
    CHECK(*call->threads_to_pass == 5);
    CHECK_THAT(call->limit_text, Catch::EndsWith("; 5 would lift it to 125 minibatches/s, where batch limits"));
    // Nobody else waits: nobody else is sized.
    CHECK_FALSE(r->Find("batch")->threads_to_pass);
  }
  SECTION("storage binds first: 1.28 MB a minibatch at 100 MB/s is 78/s") {
    AnalysisOptions opt;
    opt.disk_bandwidth_bytes_per_s = 100e6;
    auto r = WaitingMap(true, 0, 320'000).Analyze(opt);
    REQUIRE(r.ok());
    REQUIRE(r->disk_bound);
    CHECK(*r->disk_bound == Approx(78.125));
    const NodeModel* call = r->Find("call");
    REQUIRE(call->limit == Limit::kWait);
    REQUIRE(call->threads_to_pass);
    // 78/s x 36 ms = 2.8 threads.
    CHECK(*call->threads_to_pass == 3);
    CHECK_THAT(call->limit_text, Catch::EndsWith("; 3 would lift it to 78.12 minibatches/s, where storage limits"));
  }
}

TEST_CASE("a trace written before waiting was traced warns and models CPU only", "[analysis][wait]") {
  auto r = WaitingMap(false).Analyze();
  REQUIRE(r.ok());
  CHECK_FALSE(r->wait_traced);
  REQUIRE(r->warnings.size() == 1);
  CHECK_THAT(r->warnings[0], Catch::Contains("does not record waiting"));
  CHECK(r->Find("call")->wait_seconds_per_minibatch == 0);
  CHECK(*r->as_traced.throughput == Approx(1 / 0.004));
}

TEST_CASE("bounds.cpu is CPU-only on a storage-bound trace", "[analysis][wait]") {
  // 100 MB/s of storage, 10 MB per minibatch: storage allows 10/s; the CPU
  // (2 cores over 20 ms per minibatch) allows 100/s.
  TraceBuilder b(R"({"name": "io", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "x/*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read", "cycle_length": 2}},
    {"name": "batch", "op": "batch", "inputs": ["shards"], "batch": {"batch_size": 10}}]})",
                 /*cores=*/2);
  b.header().set_wait_traced(true);
  b.header().mutable_machine()->set_read_bandwidth_bytes_per_s(100e6);
  for (int t = 0; t <= 1; ++t) {
    auto& s = b.Snapshot(10.0 * t);
    const int64_t mb = 100 * t, el = 10 * mb;
    TraceBuilder::Node(s, "files", {2 * t, 20, 0, 0, 0}).set_cardinality(2);
    auto& read = TraceBuilder::Node(s, "read", {el, el * 1'000'000, el * 1'000'000, el * 1'000'000, 0});
    read.set_wait_ns(el * 9'000'000);
    read.set_storage_requests(el * 4);
    read.set_storage_request_ns(el * 9'000'000);
    TraceBuilder::Node(s, "shards", {el, el * 1'000'000, el * 500'000, 0, el});
    TraceBuilder::Node(s, "batch", {mb, mb * 10'000'000, mb * 5'000'000, 0, el});
  }
  AnalysisOptions opt;
  opt.solve_programs = true;
  auto r = b.Analyze(opt);
  REQUIRE(r.ok());
  REQUIRE(r->disk_bound);
  CHECK(*r->disk_bound == Approx(10));
  // 20 ms of CPU per minibatch: read 10, shards 5, batch 5; read may use
  // 2 cores (cycle_length 2), the others 1: 2 cores / 20 ms = 100/s.
  REQUIRE(r->cpu_bound);
  CHECK(*r->cpu_bound == Approx(100));
  for (const auto& w : r->warnings) CHECK_THAT(w, !Catch::Contains("differs from the closed form"));
  CHECK(*r->predicted_throughput == Approx(10));
  CHECK(r->predicted_limit == "disk");
  // As traced the reader's 100 ms of service per minibatch on the consumer's
  // thread (a sequential interleave) binds first: 10/s exactly as storage.
  REQUIRE(r->as_traced.throughput);
  CHECK(*r->as_traced.throughput <= 10 + 1e-9);
  CHECK(r->Find("read")->request_latency_seconds.value_or(0) == Approx(0.00225));
}

TEST_CASE("no cache of a subtree that costs next to nothing (a list of file names)", "[analysis][plan]") {
  TraceBuilder b(R"({"name": "files-only", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "x/*"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read", "cycle_length": 1}},
    {"name": "shuffle", "op": "shuffle", "inputs": ["shards"], "shuffle": {"buffer_size": 10}},
    {"name": "repeat", "op": "repeat", "inputs": ["shuffle"]},
    {"name": "batch", "op": "batch", "inputs": ["repeat"], "batch": {"batch_size": 10}}]})",
                 2);
  b.header().set_wait_traced(true);
  for (int t = 0; t <= 1; ++t) {
    auto& s = b.Snapshot(10.0 * t);
    const int64_t mb = 100 * t, el = 10 * mb;
    TraceBuilder::Node(s, "files", {2 * t, 20, 1000 * t, 0, 0}).set_cardinality(2);
    TraceBuilder::Node(s, "read", {el, el * 1000, el * 1'000'000, el * 1000, 0}).set_wait_ns(el * 2'000'000);
    TraceBuilder::Node(s, "shards", {el, el * 1000, el * 10'000, 0, el});
    TraceBuilder::Node(s, "shuffle", {el, el * 1000, el * 10'000, 0, el});
    TraceBuilder::Node(s, "repeat", {el, el * 1000, el * 1'000, 0, el});
    TraceBuilder::Node(s, "batch", {mb, mb * 10000, mb * 100'000, 0, el});
  }
  AnalysisOptions opt;
  opt.solve_programs = true;
  auto r = b.Analyze(opt);
  REQUIRE(r.ok());
  REQUIRE(r->plan);
  // files is finite and deterministic under a repeat, but caching two file
  // names saves 1 us per minibatch: not a candidate.
  CHECK(r->plan->cache_node != "files");
}

TEST_CASE("the consumer's wait is at most the whole window, even when a wait began before it", "[analysis][wait]") {
  // 10 s window (1 s to 11 s); the consumer's counter grows by 12 s in it,
  // since the wait under way at 1 s is counted when it ends.
  TraceBuilder b(R"({"name": "w", "nodes": [
    {"name": "src", "op": "range", "range": {"stop": 100000000}},
    {"name": "batch", "op": "batch", "inputs": ["src"], "batch": {"batch_size": 8}}]})",
                 2);
  for (int k = 0; k < 2; ++k) {
    const int64_t mb = k == 0 ? 10 : 110;
    auto& s = b.Snapshot(k == 0 ? 1 : 11);
    TraceBuilder::Node(s, "src", {mb * 8, mb * 64, mb * 1'000'000, 0, 0});
    TraceBuilder::Node(s, "batch", {mb, mb * 512, mb * 100'000, 0, mb * 8});
    s.mutable_root()->set_next_calls(mb);
    s.mutable_root()->set_wait_ns(k == 0 ? 0 : 12'000'000'000);
  }
  b.header().set_wait_traced(true);
  auto r = b.Analyze();
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->consumer_wait_seconds);
  CHECK(*r->consumer_wait_seconds == Approx(0.12));  // 12 s over 100 minibatches, as counted
  REQUIRE(r->consumer_wait_fraction);
  CHECK(*r->consumer_wait_fraction == 1.0);
}

}  // namespace
}  // namespace plumber::analysis
