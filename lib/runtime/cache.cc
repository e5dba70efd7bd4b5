// The cache dataset: the first pass that reaches the end of its input
// keeps what it saw (in memory, or in a file) and later passes replay it.
#include <atomic>
#include <mutex>

#include "runtime/datasets.h"
#include "runtime/unary.h"
#include "traceio/record_io.h"

namespace plumber::runtime {
namespace {

// ---- cache ---------------------------------------------------------------------------------

// The first pass that reaches the end of its input publishes what it saw;
// later passes replay it without opening the input. In memory it lives in
// the dataset; on disk in `<filename>.cache`, TFRecord-framed elements
// written to a temporary file and renamed at the end, so a cut pass never
// leaves a partial cache (and a later run reuses a complete one).
class CacheDataset final : public UnaryDataset {
 public:
  CacheDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, std::string path, Env* env)
      : UnaryDataset(node, c, std::move(input)), path_(std::move(path)), env_(env) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    if (path_.empty()) {
      std::shared_ptr<const std::vector<Element>> done;
      {
        std::lock_guard<std::mutex> lock(mu_);
        done = memory_;
      }
      if (done) return std::unique_ptr<Iterator>(new MemoryReplay(std::move(done)));
      PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
      return std::unique_ptr<Iterator>(new Fill(this, std::move(input), AtomicFile()));
    }
    if (env_->FileExists(path_)) {
      PLUMBER_ASSIGN_OR_RETURN(auto file, ctx.run->storage->OpenLocal(path_, counters()));
      return std::unique_ptr<Iterator>(new FileReplay(std::move(file)));
    }
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    PLUMBER_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::Create(env_, path_));
    return std::unique_ptr<Iterator>(new Fill(this, std::move(input), std::move(out)));
  }

 private:
  class MemoryReplay final : public Iterator {
   public:
    explicit MemoryReplay(std::shared_ptr<const std::vector<Element>> data) : data_(std::move(data)) {}
    Status GetNextInternal(Element* out, bool* end) override {
      *end = pos_ >= data_->size();
      if (!*end) *out = (*data_)[pos_++];
      return Status::OK();
    }
    void Cancel() override {}
    void Close() override {}

   private:
    std::shared_ptr<const std::vector<Element>> data_;
    size_t pos_ = 0;
  };

  class FileReplay final : public Iterator {
   public:
    explicit FileReplay(std::unique_ptr<StorageFile> file)
        : file_(std::move(file)), reader_(file_.get(), file_->size(), 0) {}
    Status GetNextInternal(Element* out, bool* end) override {
      std::string payload;
      if (!reader_.Read(&payload)) {
        PLUMBER_RETURN_IF_ERROR(reader_.status());
        if (reader_.torn()) return Status::Corruption(file_->path() + ": the cache file is truncated");
        file_->MarkCompleted(static_cast<int64_t>(reader_.records_read()));
        *end = true;
        return Status::OK();
      }
      *end = false;
      Status s = ParseElement(payload, out);
      return s.ok() ? s : s.WithContext(file_->path());
    }
    void Cancel() override {}
    void Close() override {}

   private:
    std::unique_ptr<StorageFile> file_;
    RecordReader reader_;
  };

  class Fill final : public UnaryIterator {
   public:
    // Without a file (out.file() null) the pass fills memory.
    Fill(const CacheDataset* d, std::unique_ptr<Iterator> in, AtomicFile out)
        : UnaryIterator(std::move(in)), d_(d), out_(std::move(out)) {
      if (out_.file()) writer_ = std::make_unique<RecordWriter>(out_.file());
    }
    Status GetNextInternal(Element* out, bool* end) override {
      PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
      if (!*end) {
        if (writer_) {
          PLUMBER_RETURN_IF_ERROR(writer_->AddRecord(SerializeElement(*out)));
        } else {
          seen_.push_back(*out);
        }
        return Status::OK();
      }
      if (writer_) {
        writer_.reset();
        PLUMBER_RETURN_IF_ERROR(out_.Commit());
      } else {
        std::lock_guard<std::mutex> lock(d_->mu_);
        if (!d_->memory_) d_->memory_ = std::make_shared<const std::vector<Element>>(std::move(seen_));
      }
      return Status::OK();
    }

   private:
    friend class CacheDataset;
    const CacheDataset* d_;
    AtomicFile out_;  // removes the partial cache of a pass cut short
    std::unique_ptr<RecordWriter> writer_;
    std::vector<Element> seen_;
  };

  std::string path_;
  Env* env_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const std::vector<Element>> memory_;
};

}  // namespace

StatusOr<DatasetPtr> MakeCacheDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                      const BuildContext& ctx) {
  std::string path;
  if (!node.cache().filename().empty()) path = ResolvePath(ctx.base_dir, node.cache().filename()) + ".cache";
  return DatasetPtr(std::make_shared<CacheDataset>(node, c, deps.inputs.at(0), std::move(path), ctx.env));
}

}  // namespace plumber::runtime
