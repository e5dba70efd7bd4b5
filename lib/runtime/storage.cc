// Counting and throttling file reads (see storage.h).
#include "runtime/storage.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace plumber::runtime {

StatusOr<std::unique_ptr<StorageFile>> Storage::Open(const std::string& path, NodeCounters* node) {
  PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env_->GetFileSize(path));
  PLUMBER_ASSIGN_OR_RETURN(auto file, env_->NewSequentialFile(path));
  if (node) NodeCounters::Add(node->files_opened, 1);
  return std::unique_ptr<StorageFile>(new StorageFile(this, std::move(file), size, node));
}

void Storage::Throttle(size_t bytes) {
  int64_t wake = 0;
  if (options_.read_bandwidth > 0) {
    std::lock_guard<std::mutex> lock(bucket_mu_);
    const int64_t now = MonoNanos();
    // An idle bucket does not save up credit: a burst after a pause is
    // paced like any other read.
    next_free_ns_ = std::max(next_free_ns_, now);
    next_free_ns_ += static_cast<int64_t>(static_cast<double>(bytes) * 1e9 / options_.read_bandwidth);
    wake = next_free_ns_;
  }
  const int64_t latency = options_.read_latency_ns;
  if (wake == 0 && latency == 0) return;
  BlockedScope blocked;
  if (latency > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(latency));
  const int64_t left = wake - MonoNanos();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

Status StorageFile::Read(size_t n, std::string_view* result, char* scratch) {
  size_t got = 0;
  while (got < n) {
    const size_t want = std::min(n - got, storage_->options_.request_bytes);
    storage_->Throttle(want);
    std::string_view part;
    Status s = file_->Read(want, &part, scratch + got);
    if (!s.ok()) {
      *result = std::string_view(scratch, got);
      return s;
    }
    if (part.data() != scratch + got && !part.empty()) std::copy(part.begin(), part.end(), scratch + got);
    got += part.size();
    if (node_) NodeCounters::Add(node_->storage_bytes_read, static_cast<int64_t>(part.size()));
    if (part.size() < want) break;
  }
  *result = std::string_view(scratch, got);
  return Status::OK();
}

Status StorageFile::Skip(uint64_t n) { return file_->Skip(n); }

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
    out.append(got);
    if (got.size() < scratch.size()) break;
  }
  return out;
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  if (base_dir.empty() || path.empty() || path[0] == '/') return path;
  if (base_dir.back() == '/') return base_dir + path;
  return base_dir + "/" + path;
}

}  // namespace plumber::runtime
