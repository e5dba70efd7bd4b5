// Whole runs meeting a hostile file system: input files that vanish or
// shrink after the run has committed to them, and a disk that fills up
// while the trace is written. Each must end the run with an error that
// names the node and file (or the trace), never a crash or a hang, and the
// trace must keep every snapshot that was completely written.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "fault_env.h"
#include "harness.h"
#include "runtime/run.h"
#include "traceio/record_io.h"
#include "traceio/trace_check.h"
#include "traceio/trace_io.h"

namespace plumber::runtime::testing {
namespace {

using ::plumber::testing::DiskFullEnv;
using ::plumber::testing::HookEnv;

constexpr int kRecords = 20;
constexpr size_t kPayload = 200;
constexpr size_t kFrame = kPayload + kRecordHeaderBytes + kRecordFooterBytes;

// data/s-0.tfrecord .. s-{n-1}.tfrecord, kRecords records of kPayload bytes.
void WriteShards(const TempDir& dir, int n) {
  std::filesystem::create_directories(dir.File("data"));
  for (int f = 0; f < n; ++f) {
    std::string data;
    for (int i = 0; i < kRecords; ++i) data += FrameRecord(std::string(kPayload, static_cast<char>('a' + f)));
    WriteText(dir.File("data/s-" + std::to_string(f) + ".tfrecord"), data);
  }
}

// Shards read one after the other (cycle 1, so the order is fixed), slowed
// down so that the run takes long enough for several snapshots before it
// reaches the shard the test breaks.
schema::Pipeline ShardPipeline() {
  return Chain({R"({"name":"files","op":"list_files","list_files":{"pattern":"data/s-*.tfrecord"}})",
                R"({"name":"shards","op":"interleave","interleave":{"function":"read","cycle_length":1}})",
                R"({"name":"slow","op":"map","map":{"udf":[{"op":"sleep","args":{"micros":2000}}]}})",
                R"({"name":"batch","op":"batch","batch":{"batch_size":2}})"},
               {R"({"name":"read","op":"tfrecord"})"});
}

RunConfig ShardConfig(const TempDir& dir) {
  RunConfig config;
  config.trace_path = dir.File("t.pb");
  config.base_dir = dir.path();
  config.snapshot_every_seconds = 0.01;
  config.seconds = 60;  // a safety net: every run here must end long before
  return config;
}

const schema::NodeStats* Node(const schema::Snapshot& snap, const std::string& name) {
  for (const auto& n : snap.nodes()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// The trace of a run that ended in `result`: it reads back whole (the run
// itself failed, not the trace), its end record carries the error, and it
// holds every snapshot the run took.
schema::Trace ExpectErrorTrace(const std::string& path, const RunResult& result) {
  TraceReadReport report;
  auto trace = ReadTrace(Env::Default(), path, &report);
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  for (const auto& p : ValidateTrace(*trace)) {
    INFO(p.ToString());
    CHECK(false);
  }
  CHECK_FALSE(report.torn);
  CHECK(trace->end().status() == "error");
  CHECK(trace->end().message() == result.error.ToString());
  CHECK(trace->snapshots_size() == result.snapshots);
  CHECK(report.records == static_cast<uint64_t>(2 + trace->snapshots_size()));
  return *std::move(trace);
}

TEST_CASE("a file deleted after list_files globbed it ends the run naming the node and the file", "[faults][run]") {
  TempDir dir;
  WriteShards(dir, 4);
  const std::string victim = dir.File("data/s-2.tfrecord");
  HookEnv env;
  // The glob has matched s-2; it disappears before anyone opens it.
  env.on_glob = [&](const std::vector<std::string>& matched) {
    REQUIRE(matched.size() == 4);
    REQUIRE(::unlink(victim.c_str()) == 0);
  };
  const RunConfig config = ShardConfig(dir);
  auto result = RunPipeline(&env, Graph(ShardPipeline()), config);
  REQUIRE(result.ok());
  CHECK(env.glob_hooks() > 0);
  CHECK(result->end_status == "error");
  CHECK(result->error.code() == Status::Code::kNotFound);
  CHECK_THAT(result->error.message(), Catch::Contains("node 'read'") && Catch::Contains(victim));
  // Shards 0 and 1 were read whole before the run reached the gap.
  CHECK(result->batches == kRecords);
  const schema::Trace trace = ExpectErrorTrace(config.trace_path, *result);
  CHECK(trace.snapshots_size() >= 3);
  const auto* read = Node(trace.snapshots(trace.snapshots_size() - 1), "read");
  REQUIRE(read != nullptr);
  CHECK(read->files_completed() == 2);
  CHECK(read->completed_file_records() == 2 * kRecords);
}

TEST_CASE("a file truncated after the glob ends the run with a torn record at its offset", "[faults][run]") {
  TempDir dir;
  WriteShards(dir, 3);
  const std::string victim = dir.File("data/s-1.tfrecord");
  HookEnv env;
  env.on_glob = [&](const std::vector<std::string>&) { std::filesystem::resize_file(victim, 10 * kFrame + 50); };
  const RunConfig config = ShardConfig(dir);
  auto result = RunPipeline(&env, Graph(ShardPipeline()), config);
  REQUIRE(result.ok());
  CHECK(env.glob_hooks() > 0);
  CHECK(result->end_status == "error");
  CHECK(result->error.code() == Status::Code::kCorruption);
  CHECK_THAT(result->error.message(), Catch::Contains("node 'read'") && Catch::Contains(victim) &&
                                          Catch::Contains("record 10 at offset " + std::to_string(10 * kFrame)));
  // Shard 0 and the ten whole records of shard 1: 30 elements, 15 batches.
  CHECK(result->batches == 15);
  ExpectErrorTrace(config.trace_path, *result);
}

TEST_CASE("a file that shrinks while it is read ends the run with an error at the record's offset", "[faults][run]") {
  TempDir dir;
  WriteShards(dir, 3);
  const std::string victim = dir.File("data/s-1.tfrecord");
  HookEnv env;
  // Storage sized the file before opening it: the reader expects all of it
  // and finds it cut after record 7 (plus a few bytes of record 8).
  std::atomic<int> shrunk{0};
  env.on_open = [&](const std::string& path, int) {
    if (path != victim) return;
    std::filesystem::resize_file(victim, 8 * kFrame + 30);
    ++shrunk;
  };
  RunConfig config = ShardConfig(dir);
  // Small requests, so that the cut is met in the middle of the file rather
  // than in the first request.
  config.storage.request_bytes = 512;
  auto result = RunPipeline(&env, Graph(ShardPipeline()), config);
  REQUIRE(result.ok());
  CHECK(env.open_hooks() > 0);
  CHECK(shrunk.load() > 0);
  CHECK(result->end_status == "error");
  CHECK(result->error.code() == Status::Code::kCorruption);
  CHECK_THAT(result->error.message(),
             Catch::Contains("node 'read'") && Catch::Contains(victim) &&
                 Catch::Contains("record 8 at offset " + std::to_string(8 * kFrame)) && Catch::Contains("shrank"));
  CHECK(result->batches == (kRecords + 8) / 2);
  ExpectErrorTrace(config.trace_path, *result);
}

// ---- a full disk under the trace --------------------------------------------

const char* kFaultsBurnJson = R"({"name":"burn","nodes":[
  {"name":"src","op":"range","range":{"stop":100000000}},
  {"name":"burn","op":"map","inputs":["src"],"map":{"udf":[{"op":"cpu_burn","args":{"micros":100}}]}},
  {"name":"batch","op":"batch","inputs":["burn"],"batch":{"batch_size":4}}]})";

schema::Pipeline Burn() {
  auto p = ParsePipeline(kFaultsBurnJson, "test");
  REQUIRE(p.ok());
  return *p;
}

// Framed size of the record starting at `offset` of a binary trace.
uint64_t FramedAt(const std::string& bytes, uint64_t offset) {
  REQUIRE(bytes.size() >= offset + 8);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return kRecordHeaderBytes + len + kRecordFooterBytes;
}

TEST_CASE("a disk that fills up under the trace stops the run with an error naming the trace", "[faults][run]") {
  TempDir dir;
  // The sizes of the preamble plus header, and of one snapshot, from a
  // trace of the same pipeline on a disk with room.
  RunConfig probe;
  probe.trace_path = dir.File("probe.pb");
  probe.batches = 20;
  probe.snapshot_every_seconds = 0.01;
  REQUIRE(RunPipeline(Env::Default(), Graph(Burn()), probe).ok());
  auto probe_bytes = ReadFileToString(Env::Default(), probe.trace_path);
  REQUIRE(probe_bytes.ok());
  const uint64_t head = kTracePreambleBytes + FramedAt(*probe_bytes, kTracePreambleBytes);
  const uint64_t snap = FramedAt(*probe_bytes, head);

  struct Case {
    uint64_t capacity;
    int64_t min_snapshots;  // whole snapshots that certainly fit
  };
  // Room for half a snapshot, and for two and a half (give or take the few
  // bytes by which headers and snapshots of two runs differ).
  for (Case c : {Case{head + snap / 2, 0}, Case{head + 5 * snap / 2, 1}}) {
    INFO("capacity " << c.capacity << " (header " << head << ", snapshot " << snap << ")");
    const std::string path = dir.File("full-" + std::to_string(c.capacity) + ".pb");
    DiskFullEnv env("full-", c.capacity);
    RunConfig config;
    config.trace_path = path;
    config.seconds = 60;  // the run must stop at the failure, long before
    config.snapshot_every_seconds = 0.01;
    const auto t0 = std::chrono::steady_clock::now();
    auto result = RunPipeline(&env, Graph(Burn()), config);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(result.ok());
    CHECK(secs < 20);
    CHECK(env.failures() >= 1);
    CHECK(result->end_status == "error");
    CHECK(result->error.IsBadInput());  // exit 2, as every failed write
    CHECK_THAT(result->error.message(), Catch::Contains(path) && Catch::Contains("No space left on device"));
    CHECK(result->snapshots >= c.min_snapshots);
    // Everything that fitted, and not a byte more, reached the file.
    auto size = Env::Default()->GetFileSize(path);
    REQUIRE(size.ok());
    CHECK(*size == c.capacity);
    TraceReadReport report;
    auto trace = ReadTrace(Env::Default(), path, &report);
    INFO(trace.status().ToString());
    REQUIRE(trace.ok());
    CHECK(trace->header().program().output() == "batch");
    CHECK(trace->snapshots_size() == result->snapshots);
    CHECK_FALSE(trace->has_end());
    CHECK(report.records == static_cast<uint64_t>(1 + trace->snapshots_size()));
    // The record being written when the disk filled is the torn tail.
    CHECK(report.torn);
    CHECK(report.torn_offset < c.capacity);
    CHECK(c.capacity - report.torn_offset < 2 * snap);
    for (const auto& p : ValidateTrace(*trace)) {
      INFO(p.ToString());
      CHECK(false);
    }
  }
}

TEST_CASE("a disk too full for the trace's header fails the run before it starts", "[faults][run]") {
  TempDir dir;
  const std::string path = dir.File("full.pb");
  DiskFullEnv env("full.pb", 100);
  RunConfig config;
  config.trace_path = path;
  config.seconds = 60;
  auto result = RunPipeline(&env, Graph(Burn()), config);
  REQUIRE_FALSE(result.ok());
  CHECK(env.failures() > 0);
  // A failed write is an error about the target the user chose (exit 2).
  CHECK(result.status().code() == Status::Code::kFailedPrecondition);
  CHECK(result.status().IsBadInput());
  CHECK_THAT(result.status().message(), Catch::Contains(path) && Catch::Contains("No space left on device"));
}

}  // namespace
}  // namespace plumber::runtime::testing
