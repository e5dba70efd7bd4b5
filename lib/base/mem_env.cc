// NewMemEnv(): files held in a map from name to bytes, behind mutexes, with
// the same error texts as env_posix.cc so that code under test prints the
// same messages over memory as over disk.
#include "mem_env.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace plumber {
namespace {

// The bytes of one file. Shared by the name in the map and by every open
// handle, so that a handle outlives RemoveFile and RenameFile as an open
// file descriptor does.
struct FileState {
  std::mutex mu;
  std::string data;
};

Status Missing(const std::string& path, const char* what) {
  return Status::NotFound(path + ": " + what + ": No such file or directory");
}

class MemSequentialFile final : public SequentialFile {
 public:
  MemSequentialFile(std::string path, std::shared_ptr<FileState> file)
      : path_(std::move(path)), file_(std::move(file)) {}

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    // Copied under the lock: a writer may append (and reallocate) meanwhile.
    std::lock_guard<std::mutex> lock(file_->mu);
    const size_t size = file_->data.size();
    const size_t take = pos_ >= size ? 0 : std::min(n, size - pos_);
    if (take > 0) std::memcpy(scratch, file_->data.data() + pos_, take);
    pos_ += take;
    *result = std::string_view(scratch, take);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    std::lock_guard<std::mutex> lock(file_->mu);
    const size_t size = file_->data.size();
    pos_ = pos_ >= size ? pos_ : pos_ + static_cast<size_t>(std::min<uint64_t>(n, size - pos_));
    return Status::OK();
  }

  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::shared_ptr<FileState> file_;
  size_t pos_ = 0;
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string path, std::shared_ptr<FileState> file)
      : path_(std::move(path)), file_(std::move(file)) {}

  Status Append(std::string_view data) override {
    if (closed_) return Status::FailedPrecondition(path_ + ": write after close");
    std::lock_guard<std::mutex> lock(file_->mu);
    file_->data.append(data);
    return Status::OK();
  }
  Status Flush() override {
    if (closed_) return Status::FailedPrecondition(path_ + ": write after close");
    return Status::OK();
  }
  Status Sync() override { return Flush(); }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::shared_ptr<FileState> file_;
  bool closed_ = false;
};

class MemEnv final : public Env {
 public:
  MemEnv(Env* base, uint64_t capacity_bytes) : base_(base), capacity_bytes_(capacity_bytes) {}

  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return Missing(path, "open");
    return std::unique_ptr<SequentialFile>(new MemSequentialFile(path, it->second));
  }

  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    // A fresh file under the name; readers of the old one keep its bytes.
    auto file = std::make_shared<FileState>();
    files_[path] = file;
    return std::unique_ptr<WritableFile>(new MemWritableFile(path, std::move(file)));
  }

  StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& file = files_[path];
    if (!file) file = std::make_shared<FileState>();
    return std::unique_ptr<WritableFile>(new MemWritableFile(path, file));
  }

  bool FileExists(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    return files_.count(path) != 0;
  }

  StatusOr<uint64_t> GetFileSize(const std::string& path) override {
    std::shared_ptr<FileState> file;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = files_.find(path);
      if (it == files_.end()) return Missing(path, "stat");
      file = it->second;
    }
    std::lock_guard<std::mutex> lock(file->mu);
    return static_cast<uint64_t>(file->data.size());
  }

  StatusOr<double> GetModificationTime(const std::string& path) override {
    return Status::Unimplemented(path + ": this environment keeps no modification times");
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(from);
    // Names the source, the path that is missing (env_posix.cc names `to`).
    if (it == files_.end()) return Missing(from, "rename");
    if (from == to) return Status::OK();
    // One step under the lock: no reader sees `to` missing or half-written.
    files_[to] = std::move(it->second);
    files_.erase(from);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (files_.erase(path) == 0) return Missing(path, "unlink");
    return Status::OK();
  }

  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    // The map is ordered by name, so the result comes out sorted.
    for (const auto& [name, file] : files_) {
      if (::fnmatch(pattern.c_str(), name.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) out.push_back(name);
    }
    return out;
  }

  Status CreateDirectories(const std::string& dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (files_.count(dir) != 0) return Status::InvalidArgument(dir + ": not a directory");
    dirs_.insert(dir);
    return Status::OK();
  }

  Status RemoveDirectoryRecursively(const std::string& dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string inside = dir + "/";
    for (auto it = files_.lower_bound(inside); it != files_.end() && it->first.starts_with(inside);) {
      it = files_.erase(it);
    }
    for (auto it = dirs_.lower_bound(inside); it != dirs_.end() && it->starts_with(inside);) it = dirs_.erase(it);
    dirs_.erase(dir);
    return Status::OK();
  }

  StatusOr<std::string> MakeTempDir(const std::string& prefix) override {
    std::lock_guard<std::mutex> lock(mu_);
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%06d", ++temp_dirs_made_);
    std::string dir = "/tmp/" + prefix + suffix;
    dirs_.insert(dir);
    return dir;
  }

  StatusOr<uint64_t> FreeBytes(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    // As statvfs(2) wants an existing path: a file, a directory, or one
    // whose files are named below it.
    const auto below = files_.lower_bound(path + "/");
    const bool has_files_below = below != files_.end() && below->first.starts_with(path + "/");
    if (files_.count(path) == 0 && dirs_.count(path) == 0 && path != "." && path != "/" && !has_files_below) {
      return Missing(path, "statvfs");
    }
    uint64_t used = 0;
    for (const auto& [name, file] : files_) {
      std::lock_guard<std::mutex> file_lock(file->mu);
      used += file->data.size();
    }
    return used >= capacity_bytes_ ? 0 : capacity_bytes_ - used;
  }

  int64_t NowNanos() override { return base_->NowNanos(); }
  int64_t NowUnixNanos() override { return base_->NowUnixNanos(); }

 private:
  Env* const base_;
  const uint64_t capacity_bytes_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<FileState>> files_;
  std::set<std::string> dirs_;
  int temp_dirs_made_ = 0;
};

}  // namespace

std::unique_ptr<Env> NewMemEnv(Env* base, uint64_t capacity_bytes) {
  return std::make_unique<MemEnv>(base, capacity_bytes);
}

}  // namespace plumber
