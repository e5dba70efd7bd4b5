// The storage seam: every file the runtime reads goes through here. It
// counts, per source node, bytes read, files opened, read requests and their
// latency, and files read to their end (with their sizes and record
// counts), and it can throttle reads the
// way slow or remote storage would: a global token bucket on bandwidth and a
// fixed latency per read request. The paper instruments every read() of
// tf.data the same way to learn a source's size and bandwidth.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "runtime/stats.h"

namespace plumber::runtime {

struct StorageOptions {
  // Bytes per second for all reads together; 0 for no limit.
  double read_bandwidth = 0;
  // Added to every read request; 0 for none.
  int64_t read_latency_ns = 0;
  // Reads larger than this are split into several requests, each paying
  // the latency: the unit a remote store would serve.
  size_t request_bytes = 256 * 1024;
};

class StorageFile;

class Storage {
 public:
  Storage(Env* env, StorageOptions options) : env_(env), options_(options) {}
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Opens `path` for reading on behalf of `node` (may be null: not
  // counted). Errors name the path.
  StatusOr<std::unique_ptr<StorageFile>> Open(const std::string& path, NodeCounters* node);
  // Like Open, for a file plumber itself wrote on local disk (a file
  // cache): counted, but outside the throttle, which stands for the remote
  // storage the pipeline's sources live on.
  StatusOr<std::unique_ptr<StorageFile>> OpenLocal(const std::string& path, NodeCounters* node);
  Env* env() const { return env_; }
  const StorageOptions& options() const { return options_; }

 private:
  friend class StorageFile;
  StatusOr<std::unique_ptr<StorageFile>> OpenFile(const std::string& path, NodeCounters* node, bool throttled);
  // Waits out the latency of one read request, charged to `node`'s own
  // waiting (may be null).
  void Latency(NodeCounters* node);
  // Blocks until `bytes` just read fit under the bandwidth limit.
  void Bandwidth(size_t bytes, NodeCounters* node);

  Env* env_;
  StorageOptions options_;
  std::mutex bucket_mu_;
  int64_t next_free_ns_ = 0;  // when the bucket next has room
};

// A file opened through Storage. Reads are served from a buffer filled by
// requests of options().request_bytes, as a remote store or tf.data's
// buffered reader would issue them. Not thread-safe, like SequentialFile.
class StorageFile final : public SequentialFile {
 public:
  // Stronger than SequentialFile::Read: gathers the Env's short reads, so
  // a result shorter than n does mean the end of the file.
  Status Read(size_t n, std::string_view* result, char* scratch) override;
  Status Skip(uint64_t n) override;
  const std::string& path() const override { return file_->path(); }

  // Size when opened.
  uint64_t size() const { return size_; }
  // The reader reached the end of the file after `records` records: counts
  // the file as completed (once).
  void MarkCompleted(int64_t records);
  // Reads everything left.
  StatusOr<std::string> ReadAll();

 private:
  friend class Storage;
  StorageFile(Storage* storage, std::unique_ptr<SequentialFile> file, uint64_t size, NodeCounters* node,
              bool throttled)
      : storage_(storage), file_(std::move(file)), size_(size), node_(node), throttled_(throttled) {}

  // Issues one request into buf_.
  Status Fetch();

  Storage* storage_;
  std::unique_ptr<SequentialFile> file_;
  uint64_t size_;
  NodeCounters* node_;
  bool throttled_;
  bool completed_ = false;
  std::string buf_;
  size_t buf_pos_ = 0;
  bool eof_ = false;
};

// Joins a relative path onto base_dir (which may be empty).
std::string ResolvePath(const std::string& base_dir, const std::string& path);

}  // namespace plumber::runtime
