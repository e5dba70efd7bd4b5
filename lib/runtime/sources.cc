// Source datasets: range, list_files, and the file readers tfrecord and
// text_line. Readers take their files from their parameters, from an input
// of file names, or (inside an interleave function) from the element the
// interleave opened them for; every byte goes through the storage seam.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>

#include "runtime/compression.h"
#include "runtime/datasets.h"
#include "traceio/record_io.h"

namespace plumber::runtime {
namespace {

// ---- range ------------------------------------------------------------------

class RangeDataset final : public Dataset {
 public:
  RangeDataset(std::string name, NodeCounters* c, int64_t start, int64_t stop, int64_t step)
      : Dataset(std::move(name), c), start_(start), stop_(stop), step_(step) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx&) const override {
    return std::unique_ptr<Iterator>(new It(this));
  }

 private:
  class It final : public Iterator {
   public:
    explicit It(const RangeDataset* d) : d_(d), next_(d->start_) {}
    Status GetNextInternal(Element* out, bool* end) override {
      if (d_->step_ > 0 ? next_ >= d_->stop_ : next_ <= d_->stop_) {
        *end = true;
        return Status::OK();
      }
      out->clear();
      out->push_back(Tensor::Scalar(next_));
      next_ += d_->step_;
      *end = false;
      return Status::OK();
    }
    void Cancel() override {}
    void Close() override {}

   private:
    const RangeDataset* d_;
    int64_t next_;
  };

  int64_t start_, stop_, step_;
};

// ---- list_files -------------------------------------------------------------

class ListFilesDataset final : public Dataset {
 public:
  ListFilesDataset(std::string name, NodeCounters* c, std::vector<std::string> files, bool shuffle, uint64_t seed)
      : Dataset(std::move(name), c), files_(std::move(files)), shuffle_(shuffle), seed_(seed) {}

  std::optional<int64_t> MatchedFiles() const override { return static_cast<int64_t>(files_.size()); }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx&) const override {
    std::vector<std::string> order = files_;
    if (shuffle_) {
      // A new order each epoch, reproducible from the seed.
      std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + epoch_.fetch_add(1));
      std::shuffle(order.begin(), order.end(), rng);
    }
    return std::unique_ptr<Iterator>(new It(std::move(order)));
  }

 private:
  class It final : public Iterator {
   public:
    explicit It(std::vector<std::string> files) : files_(std::move(files)) {}
    Status GetNextInternal(Element* out, bool* end) override {
      *end = pos_ >= files_.size();
      if (!*end) {
        out->clear();
        out->push_back(Tensor::ScalarString(files_[pos_++]));
      }
      return Status::OK();
    }
    void Cancel() override {}
    void Close() override {}

   private:
    std::vector<std::string> files_;
    size_t pos_ = 0;
  };

  std::vector<std::string> files_;
  bool shuffle_;
  uint64_t seed_;
  mutable std::atomic<uint64_t> epoch_{0};
};

// ---- file readers -----------------------------------------------------------

// Records of one open file.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Next record into *record, or *eof at the end (the file then counts as
  // completed). Errors name the file and offset.
  virtual Status Next(std::string* record, bool* eof) = 0;
};

class TFRecordSource final : public RecordSource {
 public:
  static StatusOr<std::unique_ptr<RecordSource>> Open(Storage* storage, const std::string& path, NodeCounters* node,
                                                      Codec codec) {
    PLUMBER_ASSIGN_OR_RETURN(auto file, storage->Open(path, node));
    std::unique_ptr<TFRecordSource> src(new TFRecordSource(std::move(file)));
    if (codec == Codec::kNone) {
      src->reader_ = std::make_unique<RecordReader>(src->file_.get(), src->file_->size(), 0);
    } else {
      // Compressed files are inflated whole: the framing needs the stream's
      // length to bound record lengths, and shards are modest in size.
      PLUMBER_ASSIGN_OR_RETURN(std::string packed, src->file_->ReadAll());
      auto data = Decompress(codec, packed);
      if (!data.ok()) return data.status().WithContext(path);
      src->data_ = std::move(data).value();
      src->mem_ = NewMemorySequentialFile(src->data_, path + " (decompressed)");
      src->reader_ = std::make_unique<RecordReader>(src->mem_.get(), src->data_.size(), 0);
    }
    return std::unique_ptr<RecordSource>(std::move(src));
  }

  Status Next(std::string* record, bool* eof) override {
    *eof = false;
    if (reader_->Read(record)) return Status::OK();
    PLUMBER_RETURN_IF_ERROR(reader_->status());
    if (reader_->torn()) {
      return Status::Corruption(file_->path() + ": truncated record " + std::to_string(reader_->records_read()) +
                                " at offset " + std::to_string(reader_->torn_offset()) + " (the file ends inside it)");
    }
    *eof = true;
    file_->MarkCompleted(static_cast<int64_t>(reader_->records_read()));
    return Status::OK();
  }

 private:
  explicit TFRecordSource(std::unique_ptr<StorageFile> file) : file_(std::move(file)) {}
  std::unique_ptr<StorageFile> file_;
  std::string data_;
  std::unique_ptr<SequentialFile> mem_;
  std::unique_ptr<RecordReader> reader_;
};

class TextLineSource final : public RecordSource {
 public:
  static StatusOr<std::unique_ptr<RecordSource>> Open(Storage* storage, const std::string& path, NodeCounters* node,
                                                      Codec codec) {
    PLUMBER_ASSIGN_OR_RETURN(auto file, storage->Open(path, node));
    std::unique_ptr<TextLineSource> src(new TextLineSource(std::move(file)));
    if (codec != Codec::kNone) {
      PLUMBER_ASSIGN_OR_RETURN(std::string packed, src->file_->ReadAll());
      auto data = Decompress(codec, packed);
      if (!data.ok()) return data.status().WithContext(path);
      src->buf_ = std::move(data).value();
      src->file_eof_ = true;
    }
    return std::unique_ptr<RecordSource>(std::move(src));
  }

  // A line is everything up to '\n' (a '\r' before it is dropped too); a
  // last line without a newline still counts.
  Status Next(std::string* line, bool* eof) override {
    *eof = false;
    while (true) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        size_t end = nl;
        if (end > pos_ && buf_[end - 1] == '\r') --end;
        line->assign(buf_, pos_, end - pos_);
        pos_ = nl + 1;
        ++lines_;
        return Status::OK();
      }
      if (file_eof_) {
        if (pos_ < buf_.size()) {
          line->assign(buf_, pos_, std::string::npos);
          pos_ = buf_.size();
          ++lines_;
          return Status::OK();
        }
        *eof = true;
        file_->MarkCompleted(lines_);
        return Status::OK();
      }
      buf_.erase(0, pos_);
      pos_ = 0;
      const size_t old = buf_.size();
      buf_.resize(old + kChunk);
      std::string_view got;
      PLUMBER_RETURN_IF_ERROR(file_->Read(kChunk, &got, buf_.data() + old));
      buf_.resize(old + got.size());
      // StorageFile reads are short only at the end (storage.h).
      if (got.size() < kChunk) file_eof_ = true;
    }
  }

 private:
  static constexpr size_t kChunk = 256 * 1024;
  explicit TextLineSource(std::unique_ptr<StorageFile> file) : file_(std::move(file)) {}
  std::unique_ptr<StorageFile> file_;
  std::string buf_;
  size_t pos_ = 0;
  bool file_eof_ = false;
  int64_t lines_ = 0;
};

using SourceOpener = StatusOr<std::unique_ptr<RecordSource>> (*)(Storage*, const std::string&, NodeCounters*, Codec);

// Where a reader's file names come from.
enum class FileMode { kParams, kInput, kArg };

class FileReaderDataset final : public Dataset {
 public:
  FileReaderDataset(std::string name, NodeCounters* c, SourceOpener opener, Codec codec, FileMode mode,
                    std::vector<std::string> files, DatasetPtr input)
      : Dataset(std::move(name), c),
        opener_(opener),
        codec_(codec),
        mode_(mode),
        files_(std::move(files)),
        input_(std::move(input)) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    std::unique_ptr<It> it(new It(this, ctx.run->storage));
    if (mode_ == FileMode::kParams) {
      it->names_ = files_;
    } else if (mode_ == FileMode::kArg) {
      if (ctx.arg == nullptr || ctx.arg->empty() || (*ctx.arg)[0].dtype() != DType::kString ||
          (*ctx.arg)[0].NumElements() != 1) {
        return Status::InvalidArgument("expected a file name (string scalar) from the interleave");
      }
      it->names_ = {(*ctx.arg)[0].strings()[0]};
    } else {
      PLUMBER_ASSIGN_OR_RETURN(it->input_, input_->MakeIterator(ChildCtx(ctx)));
    }
    return std::unique_ptr<Iterator>(std::move(it));
  }

 private:
  class It final : public Iterator {
   public:
    It(const FileReaderDataset* d, Storage* storage) : d_(d), storage_(storage) {}

    Status GetNextInternal(Element* out, bool* end) override {
      while (true) {
        if (!source_) {
          std::string name;
          bool no_more = false;
          PLUMBER_RETURN_IF_ERROR(NextName(&name, &no_more));
          if (no_more) {
            *end = true;
            return Status::OK();
          }
          auto src = d_->opener_(storage_, name, d_->counters(), d_->codec_);
          if (!src.ok()) return Context(src.status());
          source_ = std::move(src).value();
        }
        std::string record;
        bool eof = false;
        if (Status s = source_->Next(&record, &eof); !s.ok()) return Context(s);
        if (eof) {
          source_.reset();
          continue;
        }
        out->clear();
        out->push_back(Tensor::ScalarString(std::move(record)));
        *end = false;
        return Status::OK();
      }
    }
    void Cancel() override {
      if (input_) input_->Cancel();
    }
    void Close() override {
      if (input_) input_->Close();
    }

   private:
    friend class FileReaderDataset;
    Status Context(const Status& s) const { return s.WithContext("node '" + d_->name() + "'"); }

    Status NextName(std::string* name, bool* no_more) {
      if (!input_) {
        *no_more = pos_ >= names_.size();
        if (!*no_more) *name = names_[pos_++];
        return Status::OK();
      }
      Element e;
      PLUMBER_RETURN_IF_ERROR(input_->GetNext(&e, no_more));
      if (*no_more) return Status::OK();
      if (e.empty() || e[0].dtype() != DType::kString || e[0].NumElements() != 1) {
        return Context(Status::InvalidArgument("expected file names (string scalars) from the input"));
      }
      *name = e[0].strings()[0];
      return Status::OK();
    }

    const FileReaderDataset* d_;
    Storage* storage_;
    std::vector<std::string> names_;
    size_t pos_ = 0;
    std::unique_ptr<Iterator> input_;
    std::unique_ptr<RecordSource> source_;
  };

  SourceOpener opener_;
  Codec codec_;
  FileMode mode_;
  std::vector<std::string> files_;
  DatasetPtr input_;
};

StatusOr<DatasetPtr> MakeReader(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext& ctx,
                                SourceOpener opener, const google::protobuf::RepeatedPtrField<std::string>& files,
                                const std::string& compression) {
  PLUMBER_ASSIGN_OR_RETURN(Codec codec, ParseCodec(compression));
  if (codec == Codec::kZstd) return Status::InvalidArgument("readers take GZIP or ZLIB compression, not zstd");
  std::vector<std::string> resolved;
  for (const auto& f : files) resolved.push_back(ResolvePath(ctx.base_dir, f));
  FileMode mode = !resolved.empty() ? FileMode::kParams : !deps.inputs.empty() ? FileMode::kInput : FileMode::kArg;
  DatasetPtr input = deps.inputs.empty() ? nullptr : deps.inputs[0];
  return DatasetPtr(std::make_shared<FileReaderDataset>(node.name(), c, opener, codec, mode, std::move(resolved),
                                                        std::move(input)));
}

}  // namespace

StatusOr<DatasetPtr> MakeRangeDataset(const schema::Node& node, NodeCounters* c, NodeDeps, const BuildContext&) {
  const auto& p = node.range();
  const int64_t step = p.has_step() ? p.step() : 1;
  return DatasetPtr(std::make_shared<RangeDataset>(node.name(), c, p.start(), p.stop(), step));
}

StatusOr<DatasetPtr> MakeListFilesDataset(const schema::Node& node, NodeCounters* c, NodeDeps,
                                          const BuildContext& ctx) {
  const auto& p = node.list_files();
  std::vector<std::string> files;
  for (const auto& f : p.files()) files.push_back(ResolvePath(ctx.base_dir, f));
  if (!p.pattern().empty()) {
    const std::string pattern = ResolvePath(ctx.base_dir, p.pattern());
    PLUMBER_ASSIGN_OR_RETURN(auto matched, ctx.env->Glob(pattern));
    if (matched.empty()) {
      return Status::NotFound("list_files: no file matches the pattern '" + pattern + "'");
    }
    files.insert(files.end(), matched.begin(), matched.end());
  }
  return DatasetPtr(std::make_shared<ListFilesDataset>(node.name(), c, std::move(files), p.shuffle(),
                                                       static_cast<uint64_t>(p.seed())));
}

StatusOr<DatasetPtr> MakeTFRecordDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                         const BuildContext& ctx) {
  return MakeReader(node, c, std::move(deps), ctx, &TFRecordSource::Open, node.tfrecord().files(),
                    node.tfrecord().compression());
}

StatusOr<DatasetPtr> MakeTextLineDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                         const BuildContext& ctx) {
  return MakeReader(node, c, std::move(deps), ctx, &TextLineSource::Open, node.text_line().files(),
                    node.text_line().compression());
}

}  // namespace plumber::runtime
