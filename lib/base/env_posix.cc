// Env::Default(): the real POSIX file system, its free space and clocks.
#include <cctype>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "env.h"

namespace plumber {
namespace {

Status ErrnoStatus(const std::string& path, const char* what, int err) {
  std::string msg = path + ": " + what + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(msg);
  if (err == EACCES || err == EISDIR || err == ENOTDIR) return Status::InvalidArgument(msg);
  return Status::IOError(msg);
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, scratch + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = std::string_view(scratch, got);
        return ErrnoStatus(path_, "read", errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) return ErrnoStatus(path_, "seek", errno);
    return Status::OK();
  }

  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override { (void)Close(); }

  Status Append(std::string_view data) override {
    buffer_.append(data);
    if (buffer_.size() >= kBufferLimit) return Flush();
    return Status::OK();
  }

  Status Flush() override {
    if (fd_ < 0) return Status::FailedPrecondition(path_ + ": write after close");
    size_t done = 0;
    while (done < buffer_.size()) {
      ssize_t w = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        buffer_.erase(0, done);
        return ErrnoStatus(path_, "write", errno);
      }
      done += static_cast<size_t>(w);
    }
    buffer_.clear();
    return Status::OK();
  }

  Status Sync() override {
    PLUMBER_RETURN_IF_ERROR(Flush());
    if (::fsync(fd_) != 0) return ErrnoStatus(path_, "fsync", errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = Flush();
    if (::close(fd_) != 0 && s.ok()) s = ErrnoStatus(path_, "close", errno);
    fd_ = -1;
    return s;
  }

  const std::string& path() const override { return path_; }

 private:
  static constexpr size_t kBufferLimit = 64 * 1024;
  std::string path_;
  int fd_;
  std::string buffer_;
};

class PosixEnv final : public Env {
 public:
  StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(path, "open", errno);
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return Status::InvalidArgument(path + ": is a directory");
    }
    return std::unique_ptr<SequentialFile>(new PosixSequentialFile(path, fd));
  }

  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  }

  StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC);
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  StatusOr<uint64_t> GetFileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(path, "stat", errno);
    return static_cast<uint64_t>(st.st_size);
  }

  StatusOr<double> GetModificationTime(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(path, "stat", errno);
    return static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus(to, "rename", errno);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus(path, "unlink", errno);
    return Status::OK();
  }

  StatusOr<std::vector<std::string>> Glob(const std::string& pattern) override {
    glob_t g;
    std::memset(&g, 0, sizeof(g));
    int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    std::vector<std::string> out;
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) return Status::IOError(pattern + ": glob failed");
    std::sort(out.begin(), out.end());
    return out;
  }

  Status CreateDirectories(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError(dir + ": cannot create the directory: " + ec.message());
    if (!std::filesystem::is_directory(dir, ec)) return Status::InvalidArgument(dir + ": not a directory");
    return Status::OK();
  }

  Status RemoveDirectoryRecursively(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) return Status::IOError(dir + ": cannot remove the directory: " + ec.message());
    return Status::OK();
  }

  StatusOr<std::string> MakeTempDir(const std::string& prefix) override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        (std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IOError(pattern + ": cannot create a temporary directory: " + std::strerror(errno));
    }
    return pattern;
  }

  StatusOr<uint64_t> FreeBytes(const std::string& path) override {
    struct statvfs st;
    if (::statvfs(path.c_str(), &st) != 0) return ErrnoStatus(path, "statvfs", errno);
    return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
  }

  int64_t NowNanos() override { return ClockNanos(CLOCK_MONOTONIC); }
  int64_t NowUnixNanos() override { return ClockNanos(CLOCK_REALTIME); }

 private:
  static int64_t ClockNanos(clockid_t id) {
    struct timespec ts;
    ::clock_gettime(id, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  }

  StatusOr<std::unique_ptr<WritableFile>> Open(const std::string& path, int flags) {
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return ErrnoStatus(path, "open for writing", errno);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
  }
};

class MemorySequentialFile final : public SequentialFile {
 public:
  MemorySequentialFile(std::string_view data, std::string name) : data_(data), name_(std::move(name)) {}

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    const size_t take = std::min(n, data_.size() - pos_);
    std::memcpy(scratch, data_.data() + pos_, take);
    pos_ += take;
    *result = std::string_view(scratch, take);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    pos_ += static_cast<size_t>(std::min<uint64_t>(n, data_.size() - pos_));
    return Status::OK();
  }

  const std::string& path() const override { return name_; }

 private:
  std::string_view data_;
  std::string name_;
  size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<SequentialFile> NewMemorySequentialFile(std::string_view data, std::string name) {
  return std::make_unique<MemorySequentialFile>(data, std::move(name));
}

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

Status ReadFully(SequentialFile* file, size_t n, std::string_view* result, char* scratch) {
  size_t got = 0;
  Status s;
  while (got < n) {
    std::string_view part;
    s = file->Read(n - got, &part, scratch + got);
    // Data may come back in the file's own buffer rather than in scratch.
    if (!part.empty() && part.data() != scratch + got) std::memmove(scratch + got, part.data(), part.size());
    got += part.size();
    if (!s.ok() || part.empty()) break;
  }
  *result = std::string_view(scratch, got);
  return s;
}

StatusOr<std::string> ReadFileToString(Env* env, const std::string& path, uint64_t max_bytes) {
  PLUMBER_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
  std::string out;
  std::string scratch(1 << 16, '\0');
  while (true) {
    std::string_view got;
    PLUMBER_RETURN_IF_ERROR(file->Read(scratch.size(), &got, scratch.data()));
    // Only an empty read is the end: a short one may be followed by more.
    if (got.empty()) break;
    if (out.size() + got.size() > max_bytes) {
      return Status::ResourceExhausted(path + ": larger than the limit of " + std::to_string(max_bytes) + " bytes");
    }
    out.append(got);
  }
  return out;
}

StatusOr<ScopedTempDir> ScopedTempDir::Make(Env* env, const std::string& prefix) {
  PLUMBER_ASSIGN_OR_RETURN(std::string path, env->MakeTempDir(prefix));
  return ScopedTempDir(env, std::move(path));
}

ScopedTempDir& ScopedTempDir::operator=(ScopedTempDir&& other) noexcept {
  if (this != &other) {
    ScopedTempDir old(std::move(*this));
    env_ = other.env_;
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

ScopedTempDir::~ScopedTempDir() {
  if (path_.empty()) return;
  if (Status s = env_->RemoveDirectoryRecursively(path_); !s.ok()) {
    spdlog::warn("{} (a temporary directory)", s.message());
  }
}

Status AsWriteError(const Status& s, const std::string& path) {
  if (s.ok()) return s;
  std::string msg = s.message();
  const std::string tmp = path + ".tmp.";
  for (size_t at = msg.find(tmp); at != std::string::npos; at = msg.find(tmp, at + path.size())) {
    size_t end = at + tmp.size();
    while (end < msg.size() && (std::isdigit(static_cast<unsigned char>(msg[end])) || msg[end] == '.')) ++end;
    if (end > at + tmp.size() && msg[end - 1] == '.') --end;  // a sentence's full stop stays
    msg.replace(at, end - at, path);
  }
  if (s.IsBadInput()) return s.code() == Status::Code::kNotFound ? Status::NotFound(msg) : Status::InvalidArgument(msg);
  return Status::FailedPrecondition(msg);
}

StatusOr<AtomicFile> AtomicFile::Create(Env* env, const std::string& path) {
  // A device, a FIFO or a terminal (/dev/full, /dev/stdout, a named pipe)
  // is written where it is: renamed over, it would be replaced by a
  // regular file (as root, /dev/full once was). Such files exist only on
  // the real file system, so the Env is not asked.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    PLUMBER_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(path));
    AtomicFile in_place(env, path, std::string(), std::move(file));
    in_place.in_place_ = true;
    return in_place;
  }
  static std::atomic<uint64_t> serial{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial.fetch_add(1));
  PLUMBER_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(tmp));
  return AtomicFile(env, path, std::move(tmp), std::move(file));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : env_(other.env_),
      path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      file_(std::move(other.file_)),
      in_place_(other.in_place_) {
  other.tmp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    env_ = other.env_;
    path_ = std::move(other.path_);
    tmp_ = std::move(other.tmp_);
    file_ = std::move(other.file_);
    in_place_ = other.in_place_;
    other.tmp_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() { Abandon(); }

void AtomicFile::Abandon() {
  if (file_) (void)file_->Close();
  file_.reset();
  if (!tmp_.empty()) (void)env_->RemoveFile(tmp_);
  tmp_.clear();
}

Status AtomicFile::Publish() {
  if (tmp_.empty()) return Status::OK();
  Status s = env_->RenameFile(tmp_, path_);
  if (!s.ok()) {
    Abandon();
    return s;
  }
  tmp_.clear();
  return s;
}

Status AtomicFile::Close() {
  if (!file_) return Status::OK();
  Status s = file_->Close();
  file_.reset();
  return s;
}

Status AtomicFile::Commit() {
  if (!file_) return Status::FailedPrecondition(path_ + ": commit of a file already closed");
  // A device or a pipe has nothing to sync (fsync refuses them).
  Status s = in_place_ ? Status::OK() : file_->Sync();
  if (s.ok()) s = file_->Close();
  file_.reset();
  if (s.ok()) return Publish();
  Abandon();
  return s;
}

Status WriteFileAtomically(Env* env, const std::string& path, std::string_view contents) {
  auto out = AtomicFile::Create(env, path);
  if (!out.ok()) return AsWriteError(out.status(), path);
  Status s = out->file()->Append(contents);
  if (s.ok()) s = out->Commit();
  return AsWriteError(s, path);
}

}  // namespace plumber
