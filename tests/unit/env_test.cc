// The Env seam: whole-file reads with a ceiling, atomic replacement.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "base/env.h"

using namespace plumber;
namespace fs = std::filesystem;

namespace {

fs::path TempDir() {
  fs::path dir = fs::temp_directory_path() / ("plumber_env_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Fails every write after the first `allowed` appends: a full disk.
class FullDiskEnv : public Env {
 public:
  explicit FullDiskEnv(int allowed) : allowed_(allowed) {}
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& p) override {
    return base_->NewSequentialFile(p);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p) override {
    PLUMBER_ASSIGN_OR_RETURN(auto f, base_->NewWritableFile(p));
    return std::unique_ptr<WritableFile>(new Failing(std::move(f), &allowed_));
  }
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
  class Failing : public WritableFile {
   public:
    Failing(std::unique_ptr<WritableFile> f, int* allowed) : f_(std::move(f)), allowed_(allowed) {}
    Status Append(std::string_view d) override {
      if ((*allowed_)-- <= 0) return Status::IOError(f_->path() + ": write: No space left on device");
      return f_->Append(d);
    }
    Status Flush() override { return f_->Flush(); }
    Status Sync() override { return f_->Sync(); }
    Status Close() override { return f_->Close(); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<WritableFile> f_;
    int* allowed_;
  };
  Env* base_ = Env::Default();
  int allowed_;
};

}  // namespace

TEST_CASE("atomic write replaces the whole file", "[env]") {
  Env* env = Env::Default();
  const std::string path = (TempDir() / "atomic.txt").string();
  REQUIRE(WriteFileAtomically(env, path, "first").ok());
  REQUIRE(WriteFileAtomically(env, path, "second version").ok());
  CHECK(*ReadFileToString(env, path) == "second version");
}

TEST_CASE("a failed atomic write leaves the old file and no temporary", "[env]") {
  const fs::path dir = TempDir() / "full";
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  REQUIRE(WriteFileAtomically(Env::Default(), path, "old contents").ok());
  FullDiskEnv full(0);
  Status s = WriteFileAtomically(&full, path, "new contents");
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("No space left") != std::string::npos);
  CHECK(*ReadFileToString(Env::Default(), path) == "old contents");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

TEST_CASE("reading refuses files over the ceiling", "[env]") {
  const std::string path = (TempDir() / "big.bin").string();
  REQUIRE(WriteFileAtomically(Env::Default(), path, std::string(1000, 'x')).ok());
  auto r = ReadFileToString(Env::Default(), path, 999);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kResourceExhausted);
  CHECK(ReadFileToString(Env::Default(), path, 1000).ok());
}

TEST_CASE("a missing file is NotFound and names the path", "[env]") {
  auto r = ReadFileToString(Env::Default(), "/nonexistent/plumber/file.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kNotFound);
  CHECK(r.status().IsBadInput());
  CHECK(r.status().message().find("/nonexistent/plumber/file.json") != std::string::npos);
}
