// The in-memory Env (base/mem_env.h) and EnvWrapper: the Env contract held
// without a disk -- reads, truncating and appending writes, rename, remove,
// glob, sizes, the whole-file helpers -- and errors that name the path as
// env_posix.cc's do.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "base/env.h"
#include "base/mem_env.h"

using namespace plumber;

namespace {

Status WriteAll(Env* env, const std::string& path, std::string_view data, bool append = false) {
  auto file = append ? env->NewAppendableFile(path) : env->NewWritableFile(path);
  if (!file.ok()) return file.status();
  PLUMBER_RETURN_IF_ERROR((*file)->Append(data));
  return (*file)->Close();
}

std::string Contents(Env* env, const std::string& path) {
  auto s = ReadFileToString(env, path);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

// Counts the calls that reach its target, to prove EnvWrapper forwards.
class CountingEnv final : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    ++writes;
    return EnvWrapper::NewWritableFile(path);
  }
  int writes = 0;
};

}  // namespace

TEST_CASE("mem env: a written file reads back, in pieces and whole", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  REQUIRE(WriteAll(env.get(), "dir/a.txt", "hello, world").ok());
  CHECK(env->FileExists("dir/a.txt"));
  CHECK_FALSE(env->FileExists("a.txt"));

  auto file = env->NewSequentialFile("dir/a.txt");
  REQUIRE(file.ok());
  CHECK((*file)->path() == "dir/a.txt");
  char scratch[16];
  std::string_view got;
  REQUIRE((*file)->Read(5, &got, scratch).ok());
  CHECK(got == "hello");
  REQUIRE((*file)->Skip(2).ok());
  REQUIRE((*file)->Read(16, &got, scratch).ok());
  CHECK(got == "world");
  // Only an empty read is the end, and it stays the end.
  REQUIRE((*file)->Read(16, &got, scratch).ok());
  CHECK(got.empty());
  REQUIRE((*file)->Skip(100).ok());
  REQUIRE((*file)->Read(16, &got, scratch).ok());
  CHECK(got.empty());

  CHECK(Contents(env.get(), "dir/a.txt") == "hello, world");
}

TEST_CASE("mem env: a reader gathers a file through ReadFully and sees bytes appended later", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  auto w = env->NewWritableFile("log");
  REQUIRE(w.ok());
  REQUIRE((*w)->Append("abc").ok());
  auto r = env->NewSequentialFile("log");
  REQUIRE(r.ok());
  char scratch[8];
  std::string_view got;
  REQUIRE(ReadFully(r->get(), 8, &got, scratch).ok());
  CHECK(got == "abc");
  // The end was only the end so far: an appending writer goes on.
  REQUIRE((*w)->Append("defg").ok());
  REQUIRE(ReadFully(r->get(), 8, &got, scratch).ok());
  CHECK(got == "defg");
  REQUIRE((*w)->Close().ok());
  CHECK((*w)->Append("x").code() == Status::Code::kFailedPrecondition);
}

TEST_CASE("mem env: a writable file truncates, an appendable one appends", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  REQUIRE(WriteAll(env.get(), "f", "0123456789").ok());
  REQUIRE(WriteAll(env.get(), "f", "abc").ok());
  CHECK(Contents(env.get(), "f") == "abc");
  REQUIRE(WriteAll(env.get(), "f", "def", /*append=*/true).ok());
  CHECK(Contents(env.get(), "f") == "abcdef");
  // Appending creates a missing file.
  REQUIRE(WriteAll(env.get(), "g", "new", /*append=*/true).ok());
  CHECK(Contents(env.get(), "g") == "new");
  auto size = env->GetFileSize("f");
  REQUIRE(size.ok());
  CHECK(*size == 6);
  size = env->GetFileSize("empty");
  CHECK(size.status().code() == Status::Code::kNotFound);
  REQUIRE(WriteAll(env.get(), "empty", "").ok());
  size = env->GetFileSize("empty");
  REQUIRE(size.ok());
  CHECK(*size == 0);
}

TEST_CASE("mem env: rename replaces the target whole, remove forgets the name", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  REQUIRE(WriteAll(env.get(), "old", "old bytes").ok());
  REQUIRE(WriteAll(env.get(), "new", "new bytes").ok());
  // A reader of the replaced file keeps its bytes, as with an open fd.
  auto reader = env->NewSequentialFile("old");
  REQUIRE(reader.ok());
  REQUIRE(env->RenameFile("new", "old").ok());
  CHECK_FALSE(env->FileExists("new"));
  CHECK(Contents(env.get(), "old") == "new bytes");
  char scratch[32];
  std::string_view got;
  REQUIRE((*reader)->Read(sizeof(scratch), &got, scratch).ok());
  CHECK(got == "old bytes");
  // Renaming a file onto itself changes nothing.
  REQUIRE(env->RenameFile("old", "old").ok());
  CHECK(Contents(env.get(), "old") == "new bytes");

  REQUIRE(env->RemoveFile("old").ok());
  CHECK_FALSE(env->FileExists("old"));
  Status again = env->RemoveFile("old");
  CHECK(again.code() == Status::Code::kNotFound);
  CHECK(again.message() == "old: unlink: No such file or directory");
}

TEST_CASE("mem env: glob matches names like glob(3), sorted", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  for (const char* name : {"data/s-2.rec", "data/s-10.rec", "data/s-1.rec", "data/sub/s-3.rec", "data/.s-4.rec",
                           "data/s-1.idx", "other/s-5.rec"}) {
    REQUIRE(WriteAll(env.get(), name, name).ok());
  }
  auto matched = env->Glob("data/s-*.rec");
  REQUIRE(matched.ok());
  // `*` neither crosses '/' nor matches a leading '.'.
  CHECK(*matched == std::vector<std::string>{"data/s-1.rec", "data/s-10.rec", "data/s-2.rec"});
  matched = env->Glob("*/s-?.rec");
  REQUIRE(matched.ok());
  CHECK(*matched == std::vector<std::string>{"data/s-1.rec", "data/s-2.rec", "other/s-5.rec"});
  matched = env->Glob("data/s-1.idx");
  REQUIRE(matched.ok());
  CHECK(*matched == std::vector<std::string>{"data/s-1.idx"});
  matched = env->Glob("nothing/*");
  REQUIRE(matched.ok());
  CHECK(matched->empty());
}

TEST_CASE("mem env: WriteFileAtomically and ReadFileToString work over memory", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  REQUIRE(WriteFileAtomically(env.get(), "out/report.json", "first").ok());
  REQUIRE(WriteFileAtomically(env.get(), "out/report.json", "second version").ok());
  CHECK(Contents(env.get(), "out/report.json") == "second version");
  // No temporary file is left beside it.
  auto all = env->Glob("out/*");
  REQUIRE(all.ok());
  CHECK(*all == std::vector<std::string>{"out/report.json"});
  // The ceiling holds over memory too.
  auto big = ReadFileToString(env.get(), "out/report.json", 5);
  CHECK(big.status().code() == Status::Code::kResourceExhausted);
  CHECK_THAT(big.status().message(), Catch::Contains("out/report.json"));
  // Nothing reached the real disk.
  CHECK_FALSE(Env::Default()->FileExists("out/report.json"));
}

TEST_CASE("mem env: errors are NotFound and name the path as on disk", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  auto r = ReadFileToString(env.get(), "/no/such/file.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kNotFound);
  CHECK(r.status().IsBadInput());
  // The same text as env_posix.cc's for the same missing file.
  auto disk = ReadFileToString(Env::Default(), "/no/such/file.json");
  CHECK(r.status() == disk.status());
  CHECK(r.status().message() == "/no/such/file.json: open: No such file or directory");

  auto size = env->GetFileSize("gone.bin");
  CHECK(size.status().code() == Status::Code::kNotFound);
  CHECK(size.status().message() == "gone.bin: stat: No such file or directory");
  Status renamed = env->RenameFile("from.txt", "to.txt");
  CHECK(renamed.code() == Status::Code::kNotFound);
  CHECK(renamed.message() == "from.txt: rename: No such file or directory");
  CHECK_FALSE(env->FileExists("to.txt"));
}

TEST_CASE("mem env: many threads write, rename and read without losing a file", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  constexpr int kThreads = 4, kFiles = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kFiles; ++i) {
        const std::string name = "t" + std::to_string(t) + "/f" + std::to_string(i);
        if (!WriteFileAtomically(env.get(), name, name).ok()) ++failures;
        auto back = ReadFileToString(env.get(), name);
        if (!back.ok() || *back != name) ++failures;
        (void)env->Glob("t*/f*");
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  auto all = env->Glob("t*/f*");
  REQUIRE(all.ok());
  CHECK(all->size() == size_t{kThreads * kFiles});
}

TEST_CASE("mem env: the clock is the base Env's", "[env][mem_env]") {
  auto env = NewMemEnv(Env::Default());
  const int64_t before = Env::Default()->NowNanos();
  const int64_t now = env->NowNanos();
  CHECK(now >= before);
  CHECK(now <= Env::Default()->NowNanos());
  CHECK(env->NowUnixNanos() > int64_t{1'500'000'000} * 1'000'000'000);
}

TEST_CASE("EnvWrapper forwards every call it does not override to its target", "[env]") {
  auto mem = NewMemEnv(Env::Default());
  CountingEnv env(mem.get());
  CHECK(env.target() == mem.get());
  REQUIRE(WriteFileAtomically(&env, "a", "bytes").ok());
  CHECK(env.writes == 1);
  // Everything landed in the target, and reads back through either.
  CHECK(mem->FileExists("a"));
  CHECK(Contents(&env, "a") == "bytes");
  CHECK(*env.GetFileSize("a") == 5);
  REQUIRE(WriteAll(&env, "a", "+", /*append=*/true).ok());
  CHECK(Contents(mem.get(), "a") == "bytes+");
  REQUIRE(env.RenameFile("a", "b").ok());
  CHECK(*env.Glob("*") == std::vector<std::string>{"b"});
  REQUIRE(env.RemoveFile("b").ok());
  CHECK_FALSE(env.FileExists("b"));
  CHECK(env.NowNanos() > 0);
  CHECK(env.NowUnixNanos() > 0);
}
