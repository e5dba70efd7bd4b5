// Counting and throttling file reads (see storage.h).
#include "runtime/storage.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace plumber::runtime {

StatusOr<std::unique_ptr<StorageFile>> Storage::Open(const std::string& path, NodeCounters* node) {
  return OpenFile(path, node, /*throttled=*/true);
}

StatusOr<std::unique_ptr<StorageFile>> Storage::OpenLocal(const std::string& path, NodeCounters* node) {
  return OpenFile(path, node, /*throttled=*/false);
}

StatusOr<std::unique_ptr<StorageFile>> Storage::OpenFile(const std::string& path, NodeCounters* node,
                                                         bool throttled) {
  PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env_->GetFileSize(path));
  PLUMBER_ASSIGN_OR_RETURN(auto file, env_->NewSequentialFile(path));
  if (node) NodeCounters::Add(node->files_opened, 1);
  return std::unique_ptr<StorageFile>(new StorageFile(this, std::move(file), size, node, throttled));
}

void Storage::Latency(NodeCounters* node) {
  if (options_.read_latency_ns <= 0) return;
  BlockedScope blocked(Wait::kWork, node);
  std::this_thread::sleep_for(std::chrono::nanoseconds(options_.read_latency_ns));
}

void Storage::Bandwidth(size_t bytes, NodeCounters* node) {
  if (options_.read_bandwidth <= 0 || bytes == 0) return;
  int64_t wake;
  {
    std::lock_guard<std::mutex> lock(bucket_mu_);
    const int64_t now = MonoNanos();
    // An idle bucket does not save up credit: a burst after a pause is
    // paced like any other read.
    next_free_ns_ = std::max(next_free_ns_, now);
    next_free_ns_ += static_cast<int64_t>(static_cast<double>(bytes) * 1e9 / options_.read_bandwidth);
    wake = next_free_ns_;
  }
  const int64_t left = wake - MonoNanos();
  if (left <= 0) return;
  BlockedScope blocked(Wait::kWork, node);
  std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

Status StorageFile::Fetch() {
  const size_t want = storage_->options_.request_bytes;
  const int64_t issued = node_ ? MonoNanos() : 0;
  if (throttled_) storage_->Latency(node_);
  buf_.resize(want);
  std::string_view part;
  // A short read is not the end of the file (env.h): only ReadFully's
  // short result is. Taking it for the end would drop the rest of the file.
  Status s = ReadFully(file_.get(), want, &part, buf_.data());
  // Only bytes that arrived stay buffered, also after an error.
  buf_.resize(part.size());
  buf_pos_ = 0;
  if (node_) NodeCounters::Add(node_->storage_bytes_read, static_cast<int64_t>(part.size()));
  PLUMBER_RETURN_IF_ERROR(s);
  if (part.size() < want) eof_ = true;
  if (throttled_) storage_->Bandwidth(part.size(), node_);
  if (node_) {
    NodeCounters::Add(node_->storage_requests, 1);
    NodeCounters::Add(node_->storage_request_ns, MonoNanos() - issued);
  }
  return Status::OK();
}

Status StorageFile::Read(size_t n, std::string_view* result, char* scratch) {
  size_t got = 0;
  while (got < n) {
    if (buf_pos_ < buf_.size()) {
      const size_t take = std::min(n - got, buf_.size() - buf_pos_);
      std::memcpy(scratch + got, buf_.data() + buf_pos_, take);
      buf_pos_ += take;
      got += take;
      continue;
    }
    if (eof_) break;
    Status s = Fetch();
    if (!s.ok()) {
      *result = std::string_view(scratch, got);
      return s;
    }
  }
  *result = std::string_view(scratch, got);
  return Status::OK();
}

Status StorageFile::Skip(uint64_t n) {
  const size_t buffered = std::min<uint64_t>(n, buf_.size() - buf_pos_);
  buf_pos_ += buffered;
  if (n == buffered) return Status::OK();
  return file_->Skip(n - buffered);
}

void StorageFile::MarkCompleted(int64_t records) {
  if (completed_) return;
  completed_ = true;
  if (node_) node_->FileCompleted(static_cast<int64_t>(size_), records);
}

StatusOr<std::string> StorageFile::ReadAll() {
  std::string out;
  std::string scratch(storage_->options_.request_bytes, '\0');
  while (true) {
    std::string_view got;
    PLUMBER_RETURN_IF_ERROR(Read(scratch.size(), &got, scratch.data()));
    if (got.empty()) break;
    out.append(got);
  }
  return out;
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  if (base_dir.empty() || path.empty() || path[0] == '/') return path;
  if (base_dir.back() == '/') return base_dir + path;
  return base_dir + "/" + path;
}

}  // namespace plumber::runtime
