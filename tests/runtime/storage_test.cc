// The storage seam: counting, throttling (bandwidth and latency), and
// faults injected through the Env.
#include <chrono>

#include "harness.h"
#include "traceio/record_io.h"

namespace plumber::runtime::testing {
namespace {

// An Env whose reads of files named *fail* break after 100 bytes.
class FaultyEnv final : public Env {
 public:
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    auto f = base_->NewSequentialFile(path);
    if (!f.ok() || path.find("fail") == std::string::npos) return f;
    return std::unique_ptr<SequentialFile>(new Broken(std::move(f).value()));
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p) override { return base_->NewWritableFile(p); }
  StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& p) override {
    return base_->NewAppendableFile(p);
  }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  StatusOr<uint64_t> GetFileSize(const std::string& p) override { return base_->GetFileSize(p); }
  Status RenameFile(const std::string& a, const std::string& b) override { return base_->RenameFile(a, b); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  StatusOr<std::vector<std::string>> Glob(const std::string& p) override { return base_->Glob(p); }
  int64_t NowNanos() override { return base_->NowNanos(); }
  int64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

 private:
  class Broken final : public SequentialFile {
   public:
    explicit Broken(std::unique_ptr<SequentialFile> f) : f_(std::move(f)) {}
    Status Read(size_t n, std::string_view* result, char* scratch) override {
      if (read_ + n > 100) return Status::IOError(f_->path() + ": read: Input/output error (injected)");
      read_ += n;
      return f_->Read(n, result, scratch);
    }
    Status Skip(uint64_t n) override { return f_->Skip(n); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<SequentialFile> f_;
    size_t read_ = 0;
  };
  Env* base_ = Env::Default();
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
  // Never faster than the limit; slower only by the machine's load.
  CHECK(secs >= 0.2 * 0.95);
  CHECK(secs < 0.2 * 3);
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

TEST_CASE("a read error injected through the Env names the node and the file", "[storage]") {
  TempDir dir;
  const std::string path = WriteRecords(dir, "will-fail.tfrecord", 10, 100);
  FaultyEnv env;
  Storage storage(&env, {});
  RunContext ctx{&storage, true};
  auto program = Program::Build(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":[")" + path + R"("]}})"}),
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
  CHECK(s.code() == Status::Code::kIOError);
  CHECK_THAT(s.message(), Catch::Contains("node 't'") && Catch::Contains("will-fail.tfrecord") &&
                              Catch::Contains("injected"));
}

TEST_CASE("ResolvePath joins relative paths onto the pipeline directory", "[storage]") {
  CHECK(ResolvePath("", "a/b") == "a/b");
  CHECK(ResolvePath("dir", "a/b") == "dir/a/b");
  CHECK(ResolvePath("dir/", "a") == "dir/a");
  CHECK(ResolvePath("dir", "/abs") == "/abs");
}

}  // namespace
}  // namespace plumber::runtime::testing
