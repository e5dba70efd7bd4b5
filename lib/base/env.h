// Env: the seam through which plumber touches files, directories, free
// space and the clock, after LevelDB's Env. Production code uses
// Env::Default(); tests substitute an Env that injects faults (short reads,
// failed writes, a full disk) or a fake clock, usually an EnvWrapper over
// the real one, or the in-memory Env of mem_env.h. Every error names the
// path it concerns.
//
// Every virtual of Env is pure, so that EnvWrapper must forward each one:
// a virtual added here without its forwarder in EnvWrapper leaves the
// wrapper abstract, which the static_assert below turns into a compile
// error (a default body here would let a wrapper silently answer for its
// target instead).
//
// The clock: wall and monotonic time for library code come from here. The
// runtime's per-element timing reads CLOCK_MONOTONIC and the thread CPU
// clock directly (runtime/stats.h), as a virtual call per element would
// show in the costs it measures; its one test seam is the thread CPU clock,
// which Env does not model.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"

namespace plumber {

// A file read front to back. Not thread-safe; one reader at a time.
class SequentialFile {
 public:
  SequentialFile() = default;
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;
  virtual ~SequentialFile() = default;

  // Reads up to n bytes into scratch (or elsewhere: *result may point at
  // the file's own buffer) and points *result at what was read. Like
  // read(2), a result may be shorter than n although the file goes on (a
  // pipe, a network file system, a signal); only an empty result means the
  // end of the file. Callers that need n bytes use ReadFully. Errors are
  // returned as a Status naming the file.
  virtual Status Read(size_t n, std::string_view* result, char* scratch) = 0;

  // Skips n bytes; skipping past the end stops at the end.
  virtual Status Skip(uint64_t n) = 0;

  virtual const std::string& path() const = 0;
};

// A file written front to back. Data reaches the file system at Flush, Sync
// or Close; a destructor without Close closes and ignores errors.
class WritableFile {
 public:
  WritableFile() = default;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;
  virtual ~WritableFile() = default;

  virtual Status Append(std::string_view data) = 0;
  // Hands buffered data to the operating system.
  virtual Status Flush() = 0;
  // Flush, then ask the device to make it durable.
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  virtual const std::string& path() const = 0;
};

class Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  // The process-wide real file system and clock. Never null, never freed.
  static Env* Default();

  virtual StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) = 0;
  // Creates or truncates.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // Creates or appends to the end.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  virtual StatusOr<uint64_t> GetFileSize(const std::string& path) = 0;
  // Last modification, seconds since the Unix epoch (sub-second where the
  // file system keeps it). Envs without file times answer Unimplemented.
  virtual StatusOr<double> GetModificationTime(const std::string& path) = 0;
  // Atomically replaces `to` by `from` (rename(2) on one file system).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // Paths matching a shell glob, sorted. No match is an empty list.
  virtual StatusOr<std::vector<std::string>> Glob(const std::string& pattern) = 0;

  // Creates `dir` and its missing parents. An existing directory is no
  // error; an existing file of that name is one (naming `dir`).
  virtual Status CreateDirectories(const std::string& dir) = 0;
  // Removes `dir` and everything below it. A missing `dir` is no error.
  virtual Status RemoveDirectoryRecursively(const std::string& dir) = 0;
  // Creates a new, empty directory named `prefix` and six more characters
  // in the temporary directory ($TMPDIR, else /tmp, for the real file
  // system) and returns its path. Two calls never return the same path.
  virtual StatusOr<std::string> MakeTempDir(const std::string& prefix) = 0;
  // Bytes an unprivileged writer may still store on the file system that
  // holds `path` (which must exist).
  virtual StatusOr<uint64_t> FreeBytes(const std::string& path) = 0;

  // Monotonic clock, nanoseconds from an arbitrary origin.
  virtual int64_t NowNanos() = 0;
  // Wall clock, nanoseconds since the Unix epoch.
  virtual int64_t NowUnixNanos() = 0;
};

// An Env that hands every call to another, after LevelDB's EnvWrapper: a
// subclass overrides only the calls it changes (a fault, a hook, a counter)
// and meets the target's real behaviour everywhere else. The target is not
// owned and must outlive the wrapper. Calls forward as they are, on the
// caller's thread; the wrapper adds no locking of its own, so it is as
// thread-safe as its target.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}

  Env* target() const { return target_; }

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    return target_->NewSequentialFile(path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return target_->NewWritableFile(path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    return target_->NewAppendableFile(path);
  }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  StatusOr<uint64_t> GetFileSize(const std::string& path) override { return target_->GetFileSize(path); }
  StatusOr<double> GetModificationTime(const std::string& path) override {
    return target_->GetModificationTime(path);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    return target_->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override { return target_->Glob(pattern); }
  Status CreateDirectories(const std::string& dir) override { return target_->CreateDirectories(dir); }
  Status RemoveDirectoryRecursively(const std::string& dir) override {
    return target_->RemoveDirectoryRecursively(dir);
  }
  StatusOr<std::string> MakeTempDir(const std::string& prefix) override { return target_->MakeTempDir(prefix); }
  StatusOr<uint64_t> FreeBytes(const std::string& path) override { return target_->FreeBytes(path); }
  int64_t NowNanos() override { return target_->NowNanos(); }
  int64_t NowUnixNanos() override { return target_->NowUnixNanos(); }

 private:
  Env* const target_;
};

// Env's virtuals are all pure, so this fails to compile while EnvWrapper
// lacks a forwarder for one of them.
static_assert(!std::is_abstract_v<EnvWrapper>, "EnvWrapper must forward every virtual of Env");

// A directory made by env->MakeTempDir and removed, with its contents, when
// this object goes away (a failure to remove it is logged through spdlog,
// as a destructor cannot return it). A default-constructed one holds nothing.
class ScopedTempDir {
 public:
  static StatusOr<ScopedTempDir> Make(Env* env, const std::string& prefix);
  ScopedTempDir() = default;
  ScopedTempDir(ScopedTempDir&& other) noexcept : env_(other.env_), path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScopedTempDir& operator=(ScopedTempDir&& other) noexcept;
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  ~ScopedTempDir();
  const std::string& path() const { return path_; }

 private:
  ScopedTempDir(Env* env, std::string path) : env_(env), path_(std::move(path)) {}
  Env* env_ = nullptr;
  std::string path_;
};

// A SequentialFile over bytes in memory (which must outlive it), named
// `name` in errors: lets parsers share one code path for files and buffers.
std::unique_ptr<SequentialFile> NewMemorySequentialFile(std::string_view data, std::string name);

// Reads until n bytes are in scratch or a Read comes back empty, so that a
// result shorter than n does mean the end of the file (short reads are
// gathered, never mistaken for it). *result always points into scratch.
Status ReadFully(SequentialFile* file, size_t n, std::string_view* result, char* scratch);

// Reads the whole file. Refuses files larger than max_bytes with
// ResourceExhausted rather than allocating them.
StatusOr<std::string> ReadFileToString(Env* env, const std::string& path,
                                       uint64_t max_bytes = uint64_t{1} << 32);

// A file written under a temporary name beside `path` and renamed over
// `path` only when Commit succeeds. Until then `path` keeps what it held,
// and if the guard goes away uncommitted (an error returned early, an
// exception, an interrupt) it closes and removes the temporary file: no
// failure leaves one behind, whichever call site it happens at.
class AtomicFile {
 public:
  // Creates the temporary file (`path`.tmp.PID.N, unique within the
  // process, so concurrent writers of one path do not collide). An
  // existing `path` that is not a regular file (a device, a FIFO) is
  // opened itself instead: it cannot be replaced, only written.
  static StatusOr<AtomicFile> Create(Env* env, const std::string& path);
  AtomicFile() = default;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // The open temporary file; null once committed or abandoned.
  WritableFile* file() const { return file_.get(); }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return tmp_; }

  // Renames the temporary file over `path` while it stays open: later
  // appends go on into `path` (for files such as traces that must be
  // readable while they grow). A second call does nothing.
  Status Publish();
  // Closes the file without publishing it: Publish may follow, else the
  // destructor removes it.
  Status Close();
  // Syncs and closes the file, then publishes it. On failure the
  // temporary file is removed and `path` is left as it was.
  Status Commit();
  // Closes and removes the temporary file now (a no-op once published).
  void Abandon();

 private:
  AtomicFile(Env* env, std::string path, std::string tmp, std::unique_ptr<WritableFile> file)
      : env_(env), path_(std::move(path)), tmp_(std::move(tmp)), file_(std::move(file)) {}
  Env* env_ = nullptr;
  std::string path_;
  std::string tmp_;  // empty once published or removed
  std::unique_ptr<WritableFile> file_;
  // `path` is a device, FIFO or terminal, written where it is: there is no
  // temporary file, and publishing does nothing.
  bool in_place_ = false;
};

// A failed write to `path` as its user should read it: the temporary beside
// it ("PATH.tmp.PID.N") is named `path`, and a write that fails (a full disk
// as much as a read-only file system) is an error about the target the user
// chose, so it exits 2 like every other failed write. OK stays OK.
Status AsWriteError(const Status& s, const std::string& path);

// Writes `contents` to a temporary file beside `path`, syncs it, and renames
// it over `path`: readers see the old file or the whole new one, never half.
// On failure the temporary file is removed and `path` is left as it was.
Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents);

}  // namespace plumber
