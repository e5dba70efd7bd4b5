// The Env seam as a whole: EnvWrapper hands every virtual of Env to its
// target (a recording Env answers each call with a value of its own, so a
// wrapper that answered for itself would show), and the directory and
// free-space calls, over memory and over the real file system.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/mem_env.h"

using namespace plumber;
namespace fs = std::filesystem;

namespace {

// Records each call as "Name(args)" and answers with values no real Env
// would give, so that the test sees they came from here.
class RecordingEnv final : public Env {
 public:
  std::vector<std::string> calls;

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    calls.push_back("NewSequentialFile(" + path + ")");
    return Status::NotFound("recorded " + path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    calls.push_back("NewWritableFile(" + path + ")");
    return Status::IOError("recorded " + path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    calls.push_back("NewAppendableFile(" + path + ")");
    return Status::Cancelled("recorded " + path);
  }
  bool FileExists(const std::string& path) override {
    calls.push_back("FileExists(" + path + ")");
    return true;
  }
  StatusOr<uint64_t> GetFileSize(const std::string& path) override {
    calls.push_back("GetFileSize(" + path + ")");
    return uint64_t{4242};
  }
  StatusOr<double> GetModificationTime(const std::string& path) override {
    calls.push_back("GetModificationTime(" + path + ")");
    return 12.5;
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    calls.push_back("RenameFile(" + from + "," + to + ")");
    return Status::OutOfRange("recorded rename");
  }
  Status RemoveFile(const std::string& path) override {
    calls.push_back("RemoveFile(" + path + ")");
    return Status::Internal("recorded remove");
  }
  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override {
    calls.push_back("Glob(" + pattern + ")");
    return std::vector<std::string>{"g1", "g2"};
  }
  Status CreateDirectories(const std::string& dir) override {
    calls.push_back("CreateDirectories(" + dir + ")");
    return Status::Corruption("recorded mkdir");
  }
  Status RemoveDirectoryRecursively(const std::string& dir) override {
    calls.push_back("RemoveDirectoryRecursively(" + dir + ")");
    return Status::FailedPrecondition("recorded rmdir");
  }
  StatusOr<std::string> MakeTempDir(const std::string& prefix) override {
    calls.push_back("MakeTempDir(" + prefix + ")");
    return std::string("/recorded/") + prefix;
  }
  StatusOr<uint64_t> FreeBytes(const std::string& path) override {
    calls.push_back("FreeBytes(" + path + ")");
    return uint64_t{777};
  }
  int64_t NowNanos() override {
    calls.push_back("NowNanos()");
    return 11;
  }
  int64_t NowUnixNanos() override {
    calls.push_back("NowUnixNanos()");
    return 22;
  }
};

}  // namespace

TEST_CASE("EnvWrapper hands every virtual of Env to its target, with its answer", "[env]") {
  RecordingEnv target;
  EnvWrapper env(&target);
  CHECK(env.NewSequentialFile("s").status().message() == "recorded s");
  CHECK(env.NewWritableFile("w").status().code() == Status::Code::kIOError);
  CHECK(env.NewAppendableFile("a").status().code() == Status::Code::kCancelled);
  CHECK(env.FileExists("e"));
  CHECK(*env.GetFileSize("z") == 4242);
  CHECK(*env.GetModificationTime("m") == 12.5);
  CHECK(env.RenameFile("f", "t").code() == Status::Code::kOutOfRange);
  CHECK(env.RemoveFile("r").code() == Status::Code::kInternal);
  CHECK(*env.Glob("*") == std::vector<std::string>{"g1", "g2"});
  CHECK(env.CreateDirectories("d").code() == Status::Code::kCorruption);
  CHECK(env.RemoveDirectoryRecursively("x").code() == Status::Code::kFailedPrecondition);
  CHECK(*env.MakeTempDir("p-") == "/recorded/p-");
  CHECK(*env.FreeBytes("/") == 777);
  CHECK(env.NowNanos() == 11);
  CHECK(env.NowUnixNanos() == 22);
  // One call each, in order, with the arguments as given: Env has fifteen
  // virtuals (besides its destructor) and each one reached the target.
  CHECK(target.calls == std::vector<std::string>{
                            "NewSequentialFile(s)", "NewWritableFile(w)", "NewAppendableFile(a)", "FileExists(e)",
                            "GetFileSize(z)", "GetModificationTime(m)", "RenameFile(f,t)", "RemoveFile(r)", "Glob(*)",
                            "CreateDirectories(d)", "RemoveDirectoryRecursively(x)", "MakeTempDir(p-)",
                            "FreeBytes(/)", "NowNanos()", "NowUnixNanos()"});
}

TEST_CASE("mem env: free space is the capacity less the bytes its files hold", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default(), 1000);
  CHECK(*env->FreeBytes("/") == 1000);
  REQUIRE(WriteFileAtomically(env.get(), "/data/a", std::string(300, 'x')).ok());
  CHECK(*env->FreeBytes("/data") == 700);
  CHECK(*env->FreeBytes("/data/a") == 700);
  REQUIRE(WriteFileAtomically(env.get(), "/data/b", std::string(900, 'y')).ok());
  CHECK(*env->FreeBytes("/") == 0);  // past its capacity: nothing left, never negative
  REQUIRE(env->RemoveFile("/data/b").ok());
  CHECK(*env->FreeBytes("/") == 700);
  // statvfs(2) wants a path that exists.
  const auto missing = env->FreeBytes("/elsewhere");
  CHECK(missing.status().code() == Status::Code::kNotFound);
  CHECK(missing.status().message() == "/elsewhere: statvfs: No such file or directory");
}

TEST_CASE("mem env: temporary directories are new names, removed with their files", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  const std::string first = *env->MakeTempDir("plumber-t-");
  const std::string second = *env->MakeTempDir("plumber-t-");
  CHECK(first == "/tmp/plumber-t-000001");
  CHECK(second == "/tmp/plumber-t-000002");
  CHECK(env->FreeBytes(first).ok());
  REQUIRE(WriteFileAtomically(env.get(), first + "/step-0.pb", "trace").ok());
  REQUIRE(WriteFileAtomically(env.get(), first + "/deep/step-1.pb", "trace").ok());
  // A sibling whose name merely starts with the directory's stays.
  REQUIRE(WriteFileAtomically(env.get(), first + "x/keep", "kept").ok());
  REQUIRE(env->RemoveDirectoryRecursively(first).ok());
  CHECK(*env->Glob("/tmp/*/*") == std::vector<std::string>{"/tmp/plumber-t-000001x/keep"});
  CHECK(env->FreeBytes(first).status().code() == Status::Code::kNotFound);
  CHECK(env->RemoveDirectoryRecursively("/never/made").ok());
  {
    auto scoped = ScopedTempDir::Make(env.get(), "scoped-");
    REQUIRE(scoped.ok());
    CHECK(scoped->path() == "/tmp/scoped-000003");
    REQUIRE(WriteFileAtomically(env.get(), scoped->path() + "/f", "x").ok());
  }
  CHECK_FALSE(env->FileExists("/tmp/scoped-000003/f"));
}

TEST_CASE("mem env: a directory cannot take a file's name, and files keep no times", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  REQUIRE(env->CreateDirectories("/out/traces").ok());
  CHECK(env->CreateDirectories("/out/traces").ok());  // existing: no error
  CHECK(env->FreeBytes("/out/traces").ok());
  REQUIRE(WriteFileAtomically(env.get(), "/out/file", "x").ok());
  const Status s = env->CreateDirectories("/out/file");
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message() == "/out/file: not a directory");
  CHECK(env->GetModificationTime("/out/file").status().code() == Status::Code::kUnimplemented);
}

TEST_CASE("posix env: temporary directories, directories and free space", "[env]") {
  Env* env = Env::Default();
  std::string kept;
  {
    auto dir = ScopedTempDir::Make(env, "plumber-env-seam-");
    REQUIRE(dir.ok());
    kept = dir->path();
    CHECK(fs::path(kept).filename().string().rfind("plumber-env-seam-", 0) == 0);
    CHECK(fs::path(kept).filename().string().size() == std::string("plumber-env-seam-XXXXXX").size());
    CHECK(fs::is_directory(kept));
    const std::string nested = kept + "/a/b/c";
    REQUIRE(env->CreateDirectories(nested).ok());
    CHECK(fs::is_directory(nested));
    REQUIRE(WriteFileAtomically(env, nested + "/f", "bytes").ok());
    const Status on_file = env->CreateDirectories(nested + "/f");
    CHECK_FALSE(on_file.ok());
    CHECK(on_file.message().rfind(nested + "/f: cannot create the directory: ", 0) == 0);
    // The same figure statvfs(2) gives std::filesystem, give or take what
    // other processes wrote in between.
    const auto free = env->FreeBytes(kept);
    REQUIRE(free.ok());
    const double available = static_cast<double>(fs::space(kept).available);
    CHECK(static_cast<double>(*free) == Approx(available).epsilon(0.01));
    CHECK(env->FreeBytes(kept + "/missing").status().code() == Status::Code::kNotFound);
  }
  CHECK_FALSE(fs::exists(kept));
}
