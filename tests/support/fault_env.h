// Envs that break the file system on purpose, shared by every test suite
// that injects faults: reads that come back short, files that vanish or
// shrink while a run uses them, and a disk that fills up. Each is an
// EnvWrapper over a real Env (Env::Default() unless told otherwise) that
// changes only what its test is about, so that the code under test meets
// real files and real errno texts everywhere else. Each counts what it
// injected, so that a test can prove the fault really happened (a fault that
// never fired would let a broken reader pass).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/env.h"

namespace plumber::testing {

// Every Read of a file whose path contains `match` returns at most a few
// bytes (1, 2, ..., max_bytes, 1, 2, ...) although the file goes on, as
// read(2) may on a pipe, a network file system or after a signal. Only at
// the real end does a Read come back empty.
class ShortReadEnv final : public EnvWrapper {
 public:
  ShortReadEnv(std::string match, size_t max_bytes, Env* target = Env::Default())
      : EnvWrapper(target), match_(std::move(match)), max_(max_bytes) {}

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    auto f = target()->NewSequentialFile(path);
    if (!f.ok() || path.find(match_) == std::string::npos) return f;
    return std::unique_ptr<SequentialFile>(new Short(std::move(f).value(), max_, &short_reads_));
  }
  // Reads that returned fewer bytes than asked for and were not empty.
  int64_t short_reads() const { return short_reads_.load(); }

 private:
  class Short final : public SequentialFile {
   public:
    Short(std::unique_ptr<SequentialFile> f, size_t max, std::atomic<int64_t>* count)
        : f_(std::move(f)), max_(max), count_(count) {}
    Status Read(size_t n, std::string_view* result, char* scratch) override {
      next_ = next_ % max_ + 1;
      const size_t ask = std::min(n, next_);
      PLUMBER_RETURN_IF_ERROR(f_->Read(ask, result, scratch));
      if (!result->empty() && result->size() < n) count_->fetch_add(1);
      return Status::OK();
    }
    Status Skip(uint64_t n) override { return f_->Skip(n); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<SequentialFile> f_;
    size_t max_;
    size_t next_ = 0;
    std::atomic<int64_t>* count_;
  };

  std::string match_;
  size_t max_;
  std::atomic<int64_t> short_reads_{0};
};

// Runs callbacks when a file is globbed or opened for reading, so that a
// test can delete or truncate files at the moment a run has committed to
// them. Set the callbacks before the Env is used.
class HookEnv final : public EnvWrapper {
 public:
  explicit HookEnv(Env* target = Env::Default()) : EnvWrapper(target) {}

  // After a successful glob, with its matches.
  std::function<void(const std::vector<std::string>&)> on_glob;
  // Before a file is opened for reading; `n` counts opens from 0. Calls are
  // serialized, so a callback needs no lock of its own.
  std::function<void(const std::string& path, int n)> on_open;

  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override {
    auto matched = target()->Glob(pattern);
    if (matched.ok() && on_glob) {
      on_glob(*matched);
      glob_hooks_.fetch_add(1);
    }
    return matched;
  }
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    if (on_open) {
      std::lock_guard<std::mutex> lock(mu_);
      on_open(path, opens_++);
      open_hooks_.fetch_add(1);
    }
    return target()->NewSequentialFile(path);
  }

  // How often on_glob and on_open ran.
  int64_t glob_hooks() const { return glob_hooks_.load(); }
  int64_t open_hooks() const { return open_hooks_.load(); }

 private:
  std::mutex mu_;
  int opens_ = 0;
  std::atomic<int64_t> glob_hooks_{0};
  std::atomic<int64_t> open_hooks_{0};
};

// Files opened with NewWritableFile whose path contains `match` ("" for
// all) each live on a disk with `capacity` bytes left: the write that
// crosses it stores the part that fits and fails with ENOSPC's text, and
// every write, flush, sync and close after it fails the same way, as a full
// file system does. Appendable files are not limited.
class DiskFullEnv final : public EnvWrapper {
 public:
  DiskFullEnv(std::string match, uint64_t capacity, Env* target = Env::Default())
      : EnvWrapper(target), match_(std::move(match)), capacity_(capacity) {}

  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    auto f = target()->NewWritableFile(path);
    if (!f.ok() || path.find(match_) == std::string::npos) return f;
    return std::unique_ptr<WritableFile>(new Full(std::move(f).value(), capacity_, &failures_));
  }
  // Calls refused so far.
  int64_t failures() const { return failures_.load(); }

 private:
  class Full final : public WritableFile {
   public:
    Full(std::unique_ptr<WritableFile> f, uint64_t capacity, std::atomic<int64_t>* failures)
        : f_(std::move(f)), left_(capacity), failures_(failures) {}
    Status Append(std::string_view data) override {
      if (full_) return Refuse();
      if (data.size() <= left_) {
        left_ -= data.size();
        return f_->Append(data);
      }
      // What fits reaches the disk, like a short write(2) before ENOSPC.
      PLUMBER_RETURN_IF_ERROR(f_->Append(data.substr(0, left_)));
      PLUMBER_RETURN_IF_ERROR(f_->Flush());
      left_ = 0;
      full_ = true;
      return Refuse();
    }
    Status Flush() override { return full_ ? Refuse() : f_->Flush(); }
    Status Sync() override { return full_ ? Refuse() : f_->Sync(); }
    Status Close() override {
      Status s = f_->Close();
      return full_ ? Refuse() : s;
    }
    const std::string& path() const override { return f_->path(); }

   private:
    Status Refuse() {
      failures_->fetch_add(1);
      return Status::IOError(f_->path() + ": write: No space left on device");
    }
    std::unique_ptr<WritableFile> f_;
    uint64_t left_;
    bool full_ = false;
    std::atomic<int64_t>* failures_;
  };

  std::string match_;
  uint64_t capacity_;
  std::atomic<int64_t> failures_{0};
};

}  // namespace plumber::testing
