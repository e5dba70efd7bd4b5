// Transformations with one input: map, filter, shuffle, repeat, batch,
// padded_batch, take, skip and cache.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>

#include "runtime/datasets.h"
#include "runtime/ordered_pool.h"
#include "runtime/udf.h"
#include "traceio/record_io.h"

namespace plumber::runtime {
namespace {

// An iterator over one input iterator, fixed for its lifetime.
class UnaryIterator : public Iterator {
 public:
  explicit UnaryIterator(std::unique_ptr<Iterator> input) : input_(std::move(input)) {}
  void Cancel() override { input_->Cancel(); }
  void Close() override { input_->Close(); }

 protected:
  std::unique_ptr<Iterator> input_;
};

// A dataset with one input whose cardinality follows the input's.
class UnaryDataset : public Dataset {
 public:
  UnaryDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : Dataset(node.name(), c), input_(std::move(input)) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> OpenInput(const IterCtx& ctx) const { return input_->MakeIterator(ChildCtx(ctx)); }
  DatasetPtr input_;
};

// ---- map -----------------------------------------------------------------------

class MapDataset final : public UnaryDataset {
 public:
  MapDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, Udf udf, int parallelism, bool deterministic)
      : UnaryDataset(node, c, std::move(input)), udf_(std::move(udf)), parallelism_(parallelism),
        deterministic_(deterministic) {}

  int64_t Cardinality() const override { return input_->Cardinality(); }
  int Parallelism() const override { return parallelism_; }
  int64_t BufferCapacity() const override { return parallelism_ > 1 ? parallelism_ : 0; }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    const uint64_t epoch = epoch_.fetch_add(1);
    if (parallelism_ == 1) return std::unique_ptr<Iterator>(new SeqIt(this, std::move(input), epoch));
    OrderedPoolSpec spec;
    spec.parallelism = parallelism_;
    spec.capacity = BufferCapacity();
    spec.pull = 1;
    spec.deterministic = deterministic_;
    spec.counters = counters();
    spec.worker_counters = WorkerCounters(ctx);
    spec.work = [this, epoch](std::vector<Element>& in, uint64_t index, Element* out) {
      *out = std::move(in[0]);
      return Apply(out, index, epoch);
    };
    return MakeOrderedPoolIterator(std::move(input), std::move(spec));
  }

 private:
  Status Apply(Element* e, uint64_t index, uint64_t epoch) const {
    Status s = udf_.Apply(e, UdfCtx{index, epoch});
    return s.ok() ? s : s.WithContext("node '" + name() + "'");
  }

  class SeqIt final : public UnaryIterator {
   public:
    SeqIt(const MapDataset* d, std::unique_ptr<Iterator> in, uint64_t epoch)
        : UnaryIterator(std::move(in)), d_(d), epoch_(epoch) {}
    Status GetNext(Element* out, bool* end) override {
      PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
      if (*end) return Status::OK();
      return d_->Apply(out, index_++, epoch_);
    }

   private:
    const MapDataset* d_;
    uint64_t epoch_;
    uint64_t index_ = 0;
  };

  Udf udf_;
  int parallelism_;
  bool deterministic_;
  mutable std::atomic<uint64_t> epoch_{0};
};

// ---- filter ----------------------------------------------------------------------

class FilterDataset final : public UnaryDataset {
 public:
  FilterDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, Udf predicate)
      : UnaryDataset(node, c, std::move(input)), predicate_(std::move(predicate)) {}

  int64_t Cardinality() const override {
    return input_->Cardinality() == kInfiniteCardinality ? kInfiniteCardinality : kUnknownCardinality;
  }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(this, std::move(input)));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(const FilterDataset* d, std::unique_ptr<Iterator> in) : UnaryIterator(std::move(in)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      while (true) {
        PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
        if (*end) return Status::OK();
        auto keep = d_->predicate_.Test(*out, UdfCtx{index_++, 0});
        if (!keep.ok()) return keep.status().WithContext("node '" + d_->name() + "'");
        if (*keep) return Status::OK();
      }
    }

   private:
    const FilterDataset* d_;
    uint64_t index_ = 0;
  };

  Udf predicate_;
};

// ---- shuffle -----------------------------------------------------------------------

class ShuffleDataset final : public UnaryDataset {
 public:
  ShuffleDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)),
        buffer_size_(node.shuffle().buffer_size()),
        seed_(static_cast<uint64_t>(node.shuffle().seed())),
        reshuffle_(!node.shuffle().has_reshuffle_each_iteration() || node.shuffle().reshuffle_each_iteration()) {}

  int64_t Cardinality() const override { return input_->Cardinality(); }
  int64_t BufferCapacity() const override { return buffer_size_; }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    const uint64_t epoch = epoch_.fetch_add(1);
    return std::unique_ptr<Iterator>(new It(this, std::move(input), MixSeed(seed_, 0, reshuffle_ ? epoch : 0)));
  }

 private:
  // Fills the buffer, then hands out a random buffered element and puts
  // the next input element in its place.
  class It final : public UnaryIterator {
   public:
    It(const ShuffleDataset* d, std::unique_ptr<Iterator> in, uint64_t seed)
        : UnaryIterator(std::move(in)), d_(d), rng_(seed) {}
    Status GetNext(Element* out, bool* end) override {
      while (!input_end_ && static_cast<int64_t>(buf_.size()) < d_->buffer_size_) {
        Element e;
        bool in_end = false;
        PLUMBER_RETURN_IF_ERROR(input_->GetNext(&e, &in_end));
        if (in_end) {
          input_end_ = true;
          break;
        }
        bytes_ += static_cast<int64_t>(ElementBytes(e));
        buf_.push_back(std::move(e));
        d_->counters()->ObserveBuffer(static_cast<int64_t>(buf_.size()), bytes_);
      }
      if (buf_.empty()) {
        *end = true;
        return Status::OK();
      }
      const size_t j = static_cast<size_t>(rng_() % buf_.size());
      std::swap(buf_[j], buf_.back());
      *out = std::move(buf_.back());
      buf_.pop_back();
      bytes_ -= static_cast<int64_t>(ElementBytes(*out));
      *end = false;
      return Status::OK();
    }

   private:
    const ShuffleDataset* d_;
    std::mt19937_64 rng_;
    std::vector<Element> buf_;
    int64_t bytes_ = 0;
    bool input_end_ = false;
  };

  int64_t buffer_size_;
  uint64_t seed_;
  bool reshuffle_;
  mutable std::atomic<uint64_t> epoch_{0};
};

// ---- repeat ------------------------------------------------------------------------

class RepeatDataset final : public UnaryDataset {
 public:
  RepeatDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)), count_(node.repeat().has_count() ? node.repeat().count() : -1) {}

  int64_t Cardinality() const override {
    const int64_t in = input_->Cardinality();
    if (count_ == 0 || in == 0) return 0;
    if (in == kUnknownCardinality) return kUnknownCardinality;
    if (count_ < 0 || in == kInfiniteCardinality) return kInfiniteCardinality;
    return in * count_;
  }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    std::unique_ptr<Iterator> input;
    if (count_ != 0) {
      PLUMBER_ASSIGN_OR_RETURN(input, OpenInput(ctx));
    }
    return std::unique_ptr<Iterator>(new It(this, ctx, std::move(input)));
  }

 private:
  // Opens the input afresh for each epoch. The input pointer changes while
  // Cancel may run on another thread, hence the lock.
  class It final : public Iterator {
   public:
    It(const RepeatDataset* d, const IterCtx& ctx, std::unique_ptr<Iterator> in)
        : d_(d), ctx_(ctx), input_(std::move(in)) {}
    ~It() override { Close(); }

    Status GetNext(Element* out, bool* end) override {
      while (true) {
        Iterator* in;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (cancelled_) return Status::Cancelled("cancelled");
          in = input_.get();
        }
        if (in == nullptr) {
          *end = true;
          return Status::OK();
        }
        PLUMBER_RETURN_IF_ERROR(in->GetNext(out, end));
        if (!*end) {
          produced_in_epoch_ = true;
          return Status::OK();
        }
        ++epochs_;
        std::unique_ptr<Iterator> next;
        // An empty epoch would make "forever" a busy loop: stop instead.
        if ((d_->count_ < 0 || epochs_ < d_->count_) && produced_in_epoch_) {
          PLUMBER_ASSIGN_OR_RETURN(next, d_->OpenInput(ctx_));
        }
        produced_in_epoch_ = false;
        std::unique_ptr<Iterator> old;
        {
          std::lock_guard<std::mutex> lock(mu_);
          old = std::move(input_);
          input_ = std::move(next);
          if (cancelled_ && input_) input_->Cancel();
        }
        old->Close();
      }
    }
    void Cancel() override {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      if (input_) input_->Cancel();
    }
    void Close() override {
      Cancel();
      std::unique_ptr<Iterator> in;
      {
        std::lock_guard<std::mutex> lock(mu_);
        in = std::move(input_);
      }
      if (in) in->Close();
    }

   private:
    const RepeatDataset* d_;
    IterCtx ctx_;
    std::mutex mu_;
    bool cancelled_ = false;
    std::unique_ptr<Iterator> input_;
    int64_t epochs_ = 0;
    bool produced_in_epoch_ = false;
  };

  int64_t count_;
};

// ---- batch / padded_batch -------------------------------------------------------------

Status CheckSameStructure(const std::vector<Element>& in, const std::string& node) {
  const Element& first = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].size() != first.size()) {
      return Status::InvalidArgument("node '" + node + "': element " + std::to_string(i) + " of the batch has " +
                                     std::to_string(in[i].size()) + " components but the first has " +
                                     std::to_string(first.size()));
    }
    for (size_t c = 0; c < first.size(); ++c) {
      if (in[i][c].dtype() != first[c].dtype() || in[i][c].shape().size() != first[c].shape().size()) {
        return Status::InvalidArgument("node '" + node + "': element " + std::to_string(i) + " component " +
                                       std::to_string(c) + " is " + in[i][c].DebugType() + " but the first is " +
                                       first[c].DebugType());
      }
    }
  }
  return Status::OK();
}

// Stacks equal shapes: n elements of shape S become one of shape [n, S...].
Status StackBatch(std::vector<Element>& in, const std::string& node, Element* out) {
  PLUMBER_RETURN_IF_ERROR(CheckSameStructure(in, node));
  const Element& first = in[0];
  out->clear();
  for (size_t c = 0; c < first.size(); ++c) {
    for (size_t i = 1; i < in.size(); ++i) {
      if (in[i][c].shape() != first[c].shape()) {
        return Status::InvalidArgument("node '" + node + "': element " + std::to_string(i) + " component " +
                                       std::to_string(c) + " has shape " + ShapeString(in[i][c].shape()) +
                                       " but the first has " + ShapeString(first[c].shape()) +
                                       " (padded_batch pads differing shapes)");
      }
    }
    std::vector<int64_t> shape{static_cast<int64_t>(in.size())};
    shape.insert(shape.end(), first[c].shape().begin(), first[c].shape().end());
    if (first[c].dtype() == DType::kString) {
      Tensor t(DType::kString, shape);
      size_t k = 0;
      for (auto& e : in) {
        for (auto& s : e[c].strings()) t.strings()[k++] = std::move(s);
      }
      out->push_back(std::move(t));
    } else {
      Tensor t(first[c].dtype(), shape);
      const size_t each = first[c].raw().size();
      if (each > 0) {  // empty tensors have null data(), which memcpy must not see
        for (size_t i = 0; i < in.size(); ++i) std::memcpy(t.raw().data() + i * each, in[i][c].raw().data(), each);
      }
      out->push_back(std::move(t));
    }
  }
  return Status::OK();
}

int64_t BatchCardinality(int64_t in, int64_t size, bool drop) {
  if (in < 0) return in;
  return drop ? in / size : (in + size - 1) / size;
}

// Pulls up to n elements; fewer only at the end of the input.
Status PullBatch(Iterator* input, int64_t n, std::vector<Element>* out) {
  out->clear();
  for (int64_t i = 0; i < n; ++i) {
    Element e;
    bool end = false;
    PLUMBER_RETURN_IF_ERROR(input->GetNext(&e, &end));
    if (end) break;
    out->push_back(std::move(e));
  }
  return Status::OK();
}

class BatchDataset final : public UnaryDataset {
 public:
  BatchDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)),
        size_(node.batch().batch_size()),
        drop_(node.batch().drop_remainder()),
        parallelism_(node.batch().has_parallelism() ? node.batch().parallelism() : 1) {}

  int64_t Cardinality() const override { return BatchCardinality(input_->Cardinality(), size_, drop_); }
  int Parallelism() const override { return parallelism_; }
  int64_t BufferCapacity() const override { return parallelism_ > 1 ? parallelism_ : 0; }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    if (parallelism_ == 1) return std::unique_ptr<Iterator>(new SeqIt(this, std::move(input)));
    OrderedPoolSpec spec;
    spec.parallelism = parallelism_;
    spec.capacity = BufferCapacity();
    spec.pull = size_;
    spec.keep_partial = !drop_;
    spec.counters = counters();
    spec.worker_counters = WorkerCounters(ctx);
    spec.work = [this](std::vector<Element>& in, uint64_t, Element* out) { return StackBatch(in, name(), out); };
    return MakeOrderedPoolIterator(std::move(input), std::move(spec));
  }

 private:
  class SeqIt final : public UnaryIterator {
   public:
    SeqIt(const BatchDataset* d, std::unique_ptr<Iterator> in) : UnaryIterator(std::move(in)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      PLUMBER_RETURN_IF_ERROR(PullBatch(input_.get(), d_->size_, &batch_));
      const auto n = static_cast<int64_t>(batch_.size());
      *end = n == 0 || (n < d_->size_ && d_->drop_);
      if (*end) return Status::OK();
      return StackBatch(batch_, d_->name(), out);
    }

   private:
    const BatchDataset* d_;
    std::vector<Element> batch_;
  };

  int64_t size_;
  bool drop_;
  int parallelism_;
};

class PaddedBatchDataset final : public UnaryDataset {
 public:
  PaddedBatchDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)),
        size_(node.padded_batch().batch_size()),
        drop_(node.padded_batch().drop_remainder()),
        pad_(node.padded_batch().padding_value()),
        padded_shape_(node.padded_batch().padded_shape().begin(), node.padded_batch().padded_shape().end()) {}

  int64_t Cardinality() const override { return BatchCardinality(input_->Cardinality(), size_, drop_); }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(this, std::move(input)));
  }

 private:
  // Pads each component to the longest of the batch in every dimension,
  // or to padded_shape where it gives a size (-1: the longest).
  Status Pad(std::vector<Element>& in, Element* out) const {
    PLUMBER_RETURN_IF_ERROR(CheckSameStructure(in, name()));
    out->clear();
    for (size_t c = 0; c < in[0].size(); ++c) {
      const size_t rank = in[0][c].shape().size();
      std::vector<int64_t> target(rank, 0);
      for (const auto& e : in) {
        for (size_t d = 0; d < rank; ++d) target[d] = std::max(target[d], e[c].shape()[d]);
      }
      if (padded_shape_.size() == rank) {
        for (size_t d = 0; d < rank; ++d) {
          if (padded_shape_[d] < 0) continue;
          if (padded_shape_[d] < target[d]) {
            return Status::InvalidArgument("node '" + name() + "': component " + std::to_string(c) +
                                           " has size " + std::to_string(target[d]) + " in dimension " +
                                           std::to_string(d) + ", more than padded_shape's " +
                                           std::to_string(padded_shape_[d]));
          }
          target[d] = padded_shape_[d];
        }
      }
      std::vector<int64_t> shape{static_cast<int64_t>(in.size())};
      shape.insert(shape.end(), target.begin(), target.end());
      const DType dt = in[0][c].dtype();
      PLUMBER_RETURN_IF_ERROR(CheckTensorSize(dt, shape, "node '" + name() + "'"));
      Tensor t(dt, shape);
      int64_t per = 1;
      for (int64_t d : target) per *= d;
      if (dt != DType::kString) {
        for (int64_t i = 0; i < t.NumElements(); ++i) t.SetDouble(i, pad_);
      }
      for (size_t b = 0; b < in.size(); ++b) {
        const Tensor& src = in[b][c];
        const auto& ss = src.shape();
        // Copy element by element: map each source index to the padded one.
        for (int64_t k = 0; k < src.NumElements(); ++k) {
          int64_t rem = k, dst = 0, stride = 1;
          for (size_t d = rank; d-- > 0;) {
            const int64_t idx = rem % ss[d];
            rem /= ss[d];
            dst += idx * stride;
            stride *= target[d];
          }
          const int64_t at = static_cast<int64_t>(b) * per + dst;
          if (dt == DType::kString) {
            t.strings()[static_cast<size_t>(at)] = src.strings()[static_cast<size_t>(k)];
          } else {
            const size_t w = DTypeSize(dt);
            if (w > 0) std::memcpy(t.raw().data() + at * w, src.raw().data() + k * w, w);
          }
        }
      }
      out->push_back(std::move(t));
    }
    return Status::OK();
  }

  class It final : public UnaryIterator {
   public:
    It(const PaddedBatchDataset* d, std::unique_ptr<Iterator> in) : UnaryIterator(std::move(in)), d_(d) {}
    Status GetNext(Element* out, bool* end) override {
      PLUMBER_RETURN_IF_ERROR(PullBatch(input_.get(), d_->size_, &batch_));
      const auto n = static_cast<int64_t>(batch_.size());
      *end = n == 0 || (n < d_->size_ && d_->drop_);
      if (*end) return Status::OK();
      return d_->Pad(batch_, out);
    }

   private:
    const PaddedBatchDataset* d_;
    std::vector<Element> batch_;
  };

  int64_t size_;
  bool drop_;
  double pad_;
  std::vector<int64_t> padded_shape_;
};

// ---- take / skip ------------------------------------------------------------------------

class TakeDataset final : public UnaryDataset {
 public:
  TakeDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)), count_(node.take().count()) {}

  int64_t Cardinality() const override {
    const int64_t in = input_->Cardinality();
    if (count_ < 0) return in;
    if (in == kInfiniteCardinality) return count_;
    if (in == kUnknownCardinality) return kUnknownCardinality;
    return std::min(in, count_);
  }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(std::move(input), count_));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(std::unique_ptr<Iterator> in, int64_t left) : UnaryIterator(std::move(in)), left_(left) {}
    Status GetNext(Element* out, bool* end) override {
      if (left_ == 0) {
        *end = true;
        return Status::OK();
      }
      PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
      if (!*end && left_ > 0) --left_;
      return Status::OK();
    }

   private:
    int64_t left_;  // -1: no limit
  };

  int64_t count_;
};

class SkipDataset final : public UnaryDataset {
 public:
  SkipDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)), count_(node.skip().count()) {}

  int64_t Cardinality() const override {
    const int64_t in = input_->Cardinality();
    if (in < 0) return in;
    if (count_ < 0) return 0;
    return std::max<int64_t>(0, in - count_);
  }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(std::move(input), count_));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(std::unique_ptr<Iterator> in, int64_t skip) : UnaryIterator(std::move(in)), skip_(skip) {}
    Status GetNext(Element* out, bool* end) override {
      while (skip_ != 0) {
        PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
        if (*end) return Status::OK();
        if (skip_ > 0) --skip_;
      }
      return input_->GetNext(out, end);
    }

   private:
    int64_t skip_;  // -1: skip everything
  };

  int64_t count_;
};

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

  int64_t Cardinality() const override { return input_->Cardinality(); }

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
      return std::unique_ptr<Iterator>(new Fill(this, std::move(input), nullptr));
    }
    if (env_->FileExists(path_)) {
      PLUMBER_ASSIGN_OR_RETURN(auto file, ctx.run->storage->Open(path_, counters()));
      return std::unique_ptr<Iterator>(new FileReplay(std::move(file)));
    }
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    static std::atomic<uint64_t> serial{0};
    const std::string tmp = path_ + ".tmp-" + std::to_string(env_->NowUnixNanos()) + "-" +
                            std::to_string(serial.fetch_add(1));
    PLUMBER_ASSIGN_OR_RETURN(auto out, env_->NewWritableFile(tmp));
    auto fill = std::unique_ptr<Fill>(new Fill(this, std::move(input), std::move(out)));
    fill->tmp_ = tmp;
    return std::unique_ptr<Iterator>(std::move(fill));
  }

 private:
  class MemoryReplay final : public Iterator {
   public:
    explicit MemoryReplay(std::shared_ptr<const std::vector<Element>> data) : data_(std::move(data)) {}
    Status GetNext(Element* out, bool* end) override {
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
    Status GetNext(Element* out, bool* end) override {
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
    Fill(const CacheDataset* d, std::unique_ptr<Iterator> in, std::unique_ptr<WritableFile> out)
        : UnaryIterator(std::move(in)), d_(d), out_(std::move(out)) {
      if (out_) writer_ = std::make_unique<RecordWriter>(out_.get());
    }
    ~Fill() override {
      if (out_) {
        (void)out_->Close();
        (void)d_->env_->RemoveFile(tmp_);
      }
    }
    Status GetNext(Element* out, bool* end) override {
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
        Status s = out_->Close();
        out_.reset();
        writer_.reset();
        PLUMBER_RETURN_IF_ERROR(s);
        PLUMBER_RETURN_IF_ERROR(d_->env_->RenameFile(tmp_, d_->path_));
      } else {
        std::lock_guard<std::mutex> lock(d_->mu_);
        if (!d_->memory_) d_->memory_ = std::make_shared<const std::vector<Element>>(std::move(seen_));
      }
      return Status::OK();
    }

   private:
    friend class CacheDataset;
    const CacheDataset* d_;
    std::unique_ptr<WritableFile> out_;
    std::unique_ptr<RecordWriter> writer_;
    std::string tmp_;
    std::vector<Element> seen_;
  };

  std::string path_;
  Env* env_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const std::vector<Element>> memory_;
};

}  // namespace

StatusOr<DatasetPtr> MakeMapDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  PLUMBER_ASSIGN_OR_RETURN(Udf udf, Udf::Make(node.map().udf()));
  const int p = NodeParallelism(node);
  const bool det = !node.map().has_deterministic() || node.map().deterministic();
  return DatasetPtr(std::make_shared<MapDataset>(node, c, deps.inputs.at(0), std::move(udf), p, det));
}

StatusOr<DatasetPtr> MakeFilterDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  PLUMBER_ASSIGN_OR_RETURN(Udf udf, Udf::Make(node.filter().predicate()));
  return DatasetPtr(std::make_shared<FilterDataset>(node, c, deps.inputs.at(0), std::move(udf)));
}

StatusOr<DatasetPtr> MakeShuffleDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<ShuffleDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeRepeatDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<RepeatDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeBatchDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<BatchDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakePaddedBatchDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                            const BuildContext&) {
  return DatasetPtr(std::make_shared<PaddedBatchDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeTakeDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<TakeDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeSkipDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<SkipDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeCacheDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                      const BuildContext& ctx) {
  std::string path;
  if (!node.cache().filename().empty()) path = ResolvePath(ctx.base_dir, node.cache().filename()) + ".cache";
  return DatasetPtr(std::make_shared<CacheDataset>(node, c, deps.inputs.at(0), std::move(path), ctx.env));
}

}  // namespace plumber::runtime
