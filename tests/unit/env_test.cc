// The Env seam: whole-file reads with a ceiling, atomic replacement.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/env.h"
#include "fault_env.h"

using namespace plumber;
namespace fs = std::filesystem;

namespace {

fs::path TempDir() {
  fs::path dir = fs::temp_directory_path() / ("plumber_env_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("an atomic write to a FIFO writes into it and leaves it a FIFO", "[env]") {
  // A device or a FIFO renamed over would become a regular file: run as
  // root, `plumber run --trace /dev/full` once replaced /dev/full.
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber_fifo");
  REQUIRE(dir.ok());
  const std::string path = dir->path() + "/pipe";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  // The reading end, opened first and without blocking, lets the write
  // open the FIFO at once; the few bytes fit in the pipe's buffer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(fd >= 0);
  const Status s = WriteFileAtomically(Env::Default(), path, "through the pipe");
  std::string received;
  char buf[64];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, static_cast<size_t>(n));
  ::close(fd);
  INFO(s.ToString());
  CHECK(s.ok());
  CHECK(received == "through the pipe");
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir->path())) ++entries;
  CHECK(entries == 1);  // the FIFO, and no temporary beside it
}

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
  // No room at all: the temporary file's first write fails.
  plumber::testing::DiskFullEnv full("", 0);
  Status s = WriteFileAtomically(&full, path, "new contents");
  REQUIRE_FALSE(s.ok());
  CHECK(full.failures() > 0);
  CHECK(s.message().find("No space left") != std::string::npos);
  // The message names the file the user asked for, not the temporary, and
  // a failed write is the user's target: exit 2.
  CHECK(s.message().rfind(path + ": ", 0) == 0);
  CHECK(s.message().find(".tmp.") == std::string::npos);
  CHECK(s.IsBadInput());
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

namespace {

size_t FilesIn(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("an atomic file that is never committed leaves the old file and no temporary", "[env]") {
  const fs::path dir = TempDir() / "abandoned";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  REQUIRE(WriteFileAtomically(Env::Default(), path, "old").ok());
  {
    auto file = AtomicFile::Create(Env::Default(), path);
    REQUIRE(file.ok());
    REQUIRE(file->file()->Append("half of the new").ok());
    CHECK(FilesIn(dir) == 2);  // the temporary beside the old file
  }
  CHECK(*ReadFileToString(Env::Default(), path) == "old");
  CHECK(FilesIn(dir) == 1);
}

TEST_CASE("an exception thrown mid-write removes the atomic file's temporary", "[env]") {
  const fs::path dir = TempDir() / "thrown";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  try {
    auto file = AtomicFile::Create(Env::Default(), path);
    REQUIRE(file.ok());
    REQUIRE(file->file()->Append("partial").ok());
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(FilesIn(dir) == 0);
}

TEST_CASE("a committed atomic file replaces the old one and publishing early keeps appends", "[env]") {
  const fs::path dir = TempDir() / "committed";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  REQUIRE(WriteFileAtomically(Env::Default(), path, "old").ok());
  auto file = AtomicFile::Create(Env::Default(), path);
  REQUIRE(file.ok());
  REQUIRE(file->file()->Append("new ").ok());
  REQUIRE(file->Publish().ok());
  REQUIRE(file->file()->Append("and more").ok());
  REQUIRE(file->Commit().ok());
  CHECK(*ReadFileToString(Env::Default(), path) == "new and more");
  CHECK(FilesIn(dir) == 1);
}
