// Transformations with one input: map, filter, shuffle, repeat, take and
// skip (batch and padded_batch are in batch.cc, cache in cache.cc).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>

#include "runtime/datasets.h"
#include "runtime/ordered_pool.h"
#include "runtime/udf.h"
#include "runtime/unary.h"

namespace plumber::runtime {
namespace {

// ---- map -----------------------------------------------------------------------

class MapDataset final : public UnaryDataset {
 public:
  MapDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, Udf udf, std::optional<Udf> keep_if,
             int parallelism, bool deterministic)
      : UnaryDataset(node, c, std::move(input)), udf_(std::move(udf)), keep_if_(std::move(keep_if)),
        parallelism_(parallelism), deterministic_(deterministic) {}

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
      // Swapped: *out's old buffers (a spare, see ordered_pool.cc) become
      // the slot the next input element is pulled into.
      out->swap(in[0]);
      return Apply(out, index, epoch);
    };
    if (keep_if_) spec.keep = [this](const Element& e, uint64_t index) { return Keep(e, index); };
    return MakeOrderedPoolIterator(std::move(input), std::move(spec));
  }

 private:
  Status Apply(Element* e, uint64_t index, uint64_t epoch) const {
    Status s = udf_.Apply(e, UdfCtx{index, epoch});
    return s.ok() ? s : s.WithContext("node '" + name() + "'");
  }

  // The fused filter's verdict on a mapped element. Tested as the filter
  // would have: the index is the element's position in the filter's input,
  // which a one-to-one map keeps, and the epoch is the filter's (0).
  // Requires keep_if_.
  StatusOr<bool> Keep(const Element& e, uint64_t index) const {
    auto keep = keep_if_->Test(e, UdfCtx{index, 0});
    if (!keep.ok()) return keep.status().WithContext("node '" + name() + "' (keep_if)");
    return keep;
  }

  class SeqIt final : public UnaryIterator {
   public:
    SeqIt(const MapDataset* d, std::unique_ptr<Iterator> in, uint64_t epoch)
        : UnaryIterator(std::move(in)), d_(d), epoch_(epoch) {}
    Status GetNextInternal(Element* out, bool* end) override {
      while (true) {
        PLUMBER_RETURN_IF_ERROR(input_->GetNext(out, end));
        if (*end) return Status::OK();
        const uint64_t index = index_++;
        PLUMBER_RETURN_IF_ERROR(d_->Apply(out, index, epoch_));
        // A plain map (no fused filter) keeps every element without asking.
        if (!d_->keep_if_) return Status::OK();
        PLUMBER_ASSIGN_OR_RETURN(const bool keep, d_->Keep(*out, index));
        if (keep) return Status::OK();
      }
    }

   private:
    const MapDataset* d_;
    uint64_t epoch_;
    uint64_t index_ = 0;
  };

  Udf udf_;
  std::optional<Udf> keep_if_;
  int parallelism_;
  bool deterministic_;
  mutable std::atomic<uint64_t> epoch_{0};
};

// ---- filter ----------------------------------------------------------------------

class FilterDataset final : public UnaryDataset {
 public:
  FilterDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, Udf predicate)
      : UnaryDataset(node, c, std::move(input)), predicate_(std::move(predicate)) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(this, std::move(input)));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(const FilterDataset* d, std::unique_ptr<Iterator> in) : UnaryIterator(std::move(in)), d_(d) {}
    Status GetNextInternal(Element* out, bool* end) override {
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
    Status GetNextInternal(Element* out, bool* end) override {
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

    Status GetNextInternal(Element* out, bool* end) override {
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

// ---- take / skip ------------------------------------------------------------------------

class TakeDataset final : public UnaryDataset {
 public:
  TakeDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)), count_(node.take().count()) {}

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(std::move(input), count_));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(std::unique_ptr<Iterator> in, int64_t left) : UnaryIterator(std::move(in)), left_(left) {}
    Status GetNextInternal(Element* out, bool* end) override {
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

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, OpenInput(ctx));
    return std::unique_ptr<Iterator>(new It(std::move(input), count_));
  }

 private:
  class It final : public UnaryIterator {
   public:
    It(std::unique_ptr<Iterator> in, int64_t skip) : UnaryIterator(std::move(in)), skip_(skip) {}
    Status GetNextInternal(Element* out, bool* end) override {
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

}  // namespace

StatusOr<DatasetPtr> MakeMapDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  PLUMBER_ASSIGN_OR_RETURN(Udf udf, Udf::Make(node.map().udf()));
  std::optional<Udf> keep_if;
  if (!node.map().keep_if().empty()) {
    auto made = Udf::Make(node.map().keep_if());
    if (!made.ok()) return made.status().WithContext("keep_if");
    keep_if = std::move(made).value();
  }
  const int p = NodeParallelism(node);
  const bool det = !node.map().has_deterministic() || node.map().deterministic();
  return DatasetPtr(
      std::make_shared<MapDataset>(node, c, deps.inputs.at(0), std::move(udf), std::move(keep_if), p, det));
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

StatusOr<DatasetPtr> MakeTakeDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<TakeDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakeSkipDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<SkipDataset>(node, c, deps.inputs.at(0)));
}

}  // namespace plumber::runtime
