// Envs that break the file system on purpose, for the fault-injection tests:
// reads that come back short, files that vanish or shrink while a run uses
// them, and a disk that fills up while the trace is written. Each forwards
// to the real Env and changes only what its test is about, so that the code
// under test meets real files and real errno texts everywhere else.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/env.h"

namespace plumber::runtime::testing {

class ForwardingEnv : public Env {
 public:
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& p) override {
    return base_->NewSequentialFile(p);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p) override {
    return base_->NewWritableFile(p);
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

 protected:
  Env* base_ = Env::Default();
};

// Every Read of a file whose path contains `match` returns at most a few
// bytes (1, 2, ..., max_bytes, 1, 2, ...) although the file goes on, as
// read(2) may on a pipe, a network file system or after a signal. Only at
// the real end does a Read come back empty.
class ShortReadEnv final : public ForwardingEnv {
 public:
  ShortReadEnv(std::string match, size_t max_bytes) : match_(std::move(match)), max_(max_bytes) {}

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    auto f = base_->NewSequentialFile(path);
    if (!f.ok() || path.find(match_) == std::string::npos) return f;
    return std::unique_ptr<SequentialFile>(new Short(std::move(f).value(), max_, &short_reads_));
  }
  // Reads that returned fewer bytes than asked for and were not empty: the
  // test's proof that the fault was really injected.
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
// them.
class HookEnv final : public ForwardingEnv {
 public:
  // After a glob, with its matches.
  std::function<void(const std::vector<std::string>&)> on_glob;
  // Before a file is opened for reading; `n` counts opens from 0.
  std::function<void(const std::string& path, int n)> on_open;

  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override {
    auto matched = base_->Glob(pattern);
    if (matched.ok() && on_glob) on_glob(*matched);
    return matched;
  }
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    if (on_open) {
      std::lock_guard<std::mutex> lock(mu_);
      on_open(path, opens_++);
    }
    return base_->NewSequentialFile(path);
  }

 private:
  std::mutex mu_;
  int opens_ = 0;
};

// Files whose path contains `match` live on a disk with `capacity` bytes
// left: the write that crosses it stores the part that fits and fails with
// ENOSPC's text, and every write after it fails the same way, as a full
// file system does.
class DiskFullEnv final : public ForwardingEnv {
 public:
  DiskFullEnv(std::string match, uint64_t capacity) : match_(std::move(match)), capacity_(capacity) {}

  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    auto f = base_->NewWritableFile(path);
    if (!f.ok() || path.find(match_) == std::string::npos) return f;
    return std::unique_ptr<WritableFile>(new Full(std::move(f).value(), capacity_, &failures_));
  }
  // Writes refused so far.
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

}  // namespace plumber::runtime::testing
