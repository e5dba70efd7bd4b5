// The storage seam: counting, throttling (bandwidth and latency), and
// faults injected through the Env.
#include <atomic>
#include <chrono>

#include "fault_env.h"
#include "harness.h"
#include "runtime/compression.h"
#include "traceio/record_io.h"
#include "traceio/trace_io.h"

namespace plumber::runtime::testing {
namespace {

using ::plumber::testing::ShortReadEnv;

// An Env whose reads of files named *fail* break after 100 bytes. Only this
// file needs it, so it stays here rather than in tests/support.
class FaultyEnv final : public EnvWrapper {
 public:
  FaultyEnv() : EnvWrapper(Env::Default()) {}

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    auto f = target()->NewSequentialFile(path);
    if (!f.ok() || path.find("fail") == std::string::npos) return f;
    return std::unique_ptr<SequentialFile>(new Broken(std::move(f).value(), &failures_));
  }
  // Reads refused so far.
  int64_t failures() const { return failures_.load(); }

 private:
  class Broken final : public SequentialFile {
   public:
    Broken(std::unique_ptr<SequentialFile> f, std::atomic<int64_t>* failures)
        : f_(std::move(f)), failures_(failures) {}
    Status Read(size_t n, std::string_view* result, char* scratch) override {
      if (read_ + n > 100) {
        failures_->fetch_add(1);
        return Status::IOError(f_->path() + ": read: Input/output error (injected)");
      }
      read_ += n;
      return f_->Read(n, result, scratch);
    }
    Status Skip(uint64_t n) override { return f_->Skip(n); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<SequentialFile> f_;
    std::atomic<int64_t>* failures_;
    size_t read_ = 0;
  };

  std::atomic<int64_t> failures_{0};
};

std::string WriteRecords(const TempDir& dir, const std::string& name, int n, size_t size) {
  std::string data;
  for (int i = 0; i < n; ++i) data += FrameRecord(std::string(size, static_cast<char>('a' + i % 26)));
  WriteText(dir.File(name), data);
  return dir.File(name);
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST_CASE("reads are throttled to the bandwidth limit", "[storage]") {
  TempDir dir;
  // 4 MB at 20 MB/s: 0.2 s.
  const std::string path = WriteRecords(dir, "big.tfrecord", 40, 100'000 - 16);
  StorageOptions so;
  so.read_bandwidth = 20e6;
  Harness h(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})"}), so);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = h.All();
  const double secs = Seconds(t0);
  CHECK(out.size() == 40);
  CHECK(h.Stats("t").storage_bytes_read() == 4'000'000);
  // Never faster than the limit; slower only by the machine's load (and by
  // a sanitizer build's slower checksums, with another test running: 0.76 s
  // was seen under clang's ASan with coverage).
  CHECK(secs >= 0.2 * 0.95);
  CHECK(secs < 0.2 * 6);
}

TEST_CASE("each read request pays the injected latency", "[storage]") {
  TempDir dir;
  const std::string path = WriteRecords(dir, "r.tfrecord", 4, 1000);
  StorageOptions so;
  so.read_latency_ns = 20'000'000;
  so.request_bytes = 1024;
  Harness h(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})"}), so);
  const auto t0 = std::chrono::steady_clock::now();
  h.All();
  // 4 records of ~1 KB (4064 bytes) in 1 KB requests: 4 requests or more.
  CHECK(Seconds(t0) >= 4 * 0.020);
  // Waiting for storage is not CPU work.
  CHECK(h.Stats("t").active_cpu_ns() < 80'000'000);
}

TEST_CASE("read requests, their latency and the reader's waiting are traced per node", "[storage][tracing]") {
  TempDir dir;
  const std::string path = WriteRecords(dir, "r.tfrecord", 4, 1000);
  StorageOptions so;
  so.read_latency_ns = 10'000'000;
  so.request_bytes = 1024;
  Harness h(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})"}), so);
  h.All();
  const auto t = h.Stats("t");
  // 4064 bytes in 1 KB requests: 4 full ones and the short one that finds
  // the end.
  CHECK(t.storage_requests() == 4);
  CHECK(t.storage_request_ns() >= 4 * 10'000'000);
  CHECK(t.storage_request_ns() < 4 * 10'000'000 * 5);
  // The latency is the reader's own waiting: it holds the thread, and it is
  // part of the reader's own wall time, not of its CPU.
  CHECK(t.wait_ns() >= 4 * 10'000'000);
  CHECK(t.wait_ns() <= t.storage_request_ns());
  CHECK(t.self_wall_ns() >= t.wait_ns());
  CHECK(t.active_cpu_ns() < t.wait_ns() / 4);
}

TEST_CASE("a file cache is read back outside the source's throttle", "[storage]") {
  TempDir dir;
  const std::string path = WriteRecords(dir, "r.tfrecord", 20, 1000);
  StorageOptions so;
  so.read_latency_ns = 20'000'000;
  so.request_bytes = 1024;
  const auto pipeline = Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})",
                               R"({"name":"c","op":"cache","cache":{"filename":"cached"}})"});
  {
    Harness fill(pipeline, so, true, dir.path());
    CHECK(fill.All().size() == 20);
  }
  REQUIRE(Env::Default()->FileExists(dir.File("cached.cache")));
  Harness replay(pipeline, so, true, dir.path());
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(replay.All().size() == 20);
  // The cache file (about 20 KB: 20 requests under the throttle, 0.4 s)
  // is local: no request latency.
  CHECK(Seconds(t0) < 0.2);
  CHECK(replay.Stats("c").wait_ns() == 0);
  CHECK(replay.Stats("c").storage_bytes_read() > 20'000);
}

TEST_CASE("a read error injected through the Env names the node and the file", "[storage]") {
  TempDir dir;
  const std::string path = WriteRecords(dir, "will-fail.tfrecord", 10, 100);
  FaultyEnv env;
  Storage storage(&env, {});
  RunContext ctx{&storage, true};
  auto program = Program::Build(Graph(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})"})),
                                BuildContext{&env, ""});
  REQUIRE(program.ok());
  auto it = (*program)->output()->MakeIterator(IterCtx{&ctx, nullptr, nullptr});
  REQUIRE(it.ok());
  Element e;
  bool end = false;
  Status s;
  int got = 0;
  while ((s = (*it)->GetNext(&e, &end)).ok() && !end) ++got;
  CHECK(got < 10);
  CHECK(env.failures() > 0);
  CHECK(s.code() == Status::Code::kIOError);
  CHECK_THAT(s.message(), Catch::Contains("node 't'") && Catch::Contains("will-fail.tfrecord") &&
                              Catch::Contains("injected"));
}

// ---- short reads ----------------------------------------------------------------
// read(2) may return fewer bytes than asked for before the end of a file
// (pipes, network file systems, signals); Env's contract allows it. A reader
// that took a short read for the end would drop the rest of the file, or
// call an intact file torn.

std::string Varied(int i) { return std::string(1 + (i * 37) % 300, static_cast<char>('a' + i % 26)); }

TEST_CASE("short reads from the Env neither end a TFRecord file early nor drop records", "[storage][faults]") {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 60; ++i) data += FrameRecord(Varied(i));
  WriteText(dir.File("short.tfrecord"), data);
  // The default request size, and requests smaller than most records.
  for (size_t request : {size_t{256 * 1024}, size_t{100}}) {
    INFO("request_bytes " << request);
    ShortReadEnv env("short", 7);
    StorageOptions so;
    so.request_bytes = request;
    Harness h(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + dir.File("short.tfrecord") + R"("]}})"}),
              so, true, "", &env);
    std::vector<Element> out;
    Status s = h.Collect(&out);
    INFO(s.ToString());
    REQUIRE(s.ok());
    REQUIRE(out.size() == 60);
    for (int i = 0; i < 60; ++i) CHECK(out[i][0].strings()[0] == Varied(i));
    CHECK(env.short_reads() > 100);
    const auto stats = h.Stats("t");
    CHECK(stats.storage_bytes_read() == static_cast<int64_t>(data.size()));
    CHECK(stats.files_completed() == 1);
    CHECK(stats.completed_file_records() == 60);
    CHECK(stats.completed_file_bytes() == static_cast<int64_t>(data.size()));
  }
}

TEST_CASE("short reads from the Env keep every line of a text file, plain or compressed", "[storage][faults]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 500; ++i) text += "line " + std::to_string(i) + (i == 499 ? "" : "\n");
  WriteText(dir.File("short.txt"), text);
  auto gz = Compress(Codec::kGzip, text);
  REQUIRE(gz.ok());
  WriteText(dir.File("short.txt.gz"), *gz);
  for (const char* file : {"short.txt", "short.txt.gz"}) {
    INFO(file);
    const std::string codec = std::string(file).ends_with(".gz") ? R"(,"compression":"GZIP")" : "";
    ShortReadEnv env("short", 5);
    StorageOptions so;
    so.request_bytes = 64;
    Harness h(Chain({R"({"name":"t","op":"text_line","text_line":{"files":[")" + dir.File(file) + "\"]" + codec + "}}"}),
              so, true, "", &env);
    std::vector<Element> out;
    Status s = h.Collect(&out);
    INFO(s.ToString());
    REQUIRE(s.ok());
    REQUIRE(out.size() == 500);
    CHECK(out.front()[0].strings()[0] == "line 0");
    CHECK(out.back()[0].strings()[0] == "line 499");
    CHECK(env.short_reads() > 10);
    CHECK(h.Stats("t").completed_file_records() == 500);
  }
}

TEST_CASE("short reads from the Env keep every record of a compressed TFRecord file", "[storage][faults]") {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 40; ++i) data += FrameRecord(Varied(i));
  auto z = Compress(Codec::kZlib, data);
  REQUIRE(z.ok());
  WriteText(dir.File("short.tfrecord.z"), *z);
  ShortReadEnv env("short", 3);
  Harness h(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + dir.File("short.tfrecord.z") +
                   R"("],"compression":"ZLIB"}})"}),
            {}, true, "", &env);
  std::vector<Element> out;
  Status s = h.Collect(&out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(out.size() == 40);
  CHECK(out[39][0].strings()[0] == Varied(39));
  CHECK(env.short_reads() > 10);
}

TEST_CASE("short reads from the Env read back a whole trace, streamed or at once", "[storage][faults]") {
  TempDir dir;
  schema::Trace trace;
  trace.mutable_header()->set_tool_version("1.2.3");
  for (int i = 0; i < 5; ++i) {
    auto* snap = trace.add_snapshots();
    snap->set_wall_ns((i + 1) * 1'000'000);
    snap->add_nodes()->set_name("n" + std::to_string(i));
  }
  trace.mutable_end()->set_status("ok");
  WriteText(dir.File("short.pb"), SerializeTraceBinary(trace));
  ShortReadEnv env("short", 4);

  TraceReadReport report;
  auto whole = ReadTrace(&env, dir.File("short.pb"), &report);
  INFO(whole.status().ToString());
  REQUIRE(whole.ok());
  REQUIRE(whole->snapshots_size() == 5);
  CHECK(whole->snapshots(4).nodes(0).name() == "n4");
  CHECK(whole->end().status() == "ok");
  CHECK_FALSE(report.torn);
  CHECK(report.records == 7);

  auto streamed = TraceFileReader::Open(&env, dir.File("short.pb"));
  REQUIRE(streamed.ok());
  schema::TraceRecord record;
  int records = 0;
  while ((*streamed)->Next(&record)) ++records;
  INFO((*streamed)->status().ToString());
  CHECK((*streamed)->status().ok());
  CHECK(records == 7);
  CHECK_FALSE((*streamed)->report().torn);

  auto header = ReadTraceHeader(&env, dir.File("short.pb"));
  REQUIRE(header.ok());
  CHECK(header->tool_version() == "1.2.3");
  CHECK(env.short_reads() > 10);
}

TEST_CASE("ResolvePath joins relative paths onto the pipeline directory", "[storage]") {
  CHECK(ResolvePath("", "a/b") == "a/b");
  CHECK(ResolvePath("dir", "a/b") == "dir/a/b");
  CHECK(ResolvePath("dir/", "a") == "dir/a");
  CHECK(ResolvePath("dir", "/abs") == "/abs");
}

}  // namespace
}  // namespace plumber::runtime::testing
