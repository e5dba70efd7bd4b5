// batch and padded_batch: stack consecutive elements into one, copying
// them on the consumer's thread or on a pool of workers.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include "runtime/datasets.h"
#include "runtime/ordered_pool.h"
#include "runtime/udf.h"
#include "runtime/unary.h"

namespace plumber::runtime {
namespace {

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

// Pulls up to n elements; fewer only at the end of the input. Each is
// pulled into the slot of the previous batch's element at its position, so
// that an input which refills its output (a source, a pool that swaps its
// results out) reuses the buffers of the last batch: no allocation per
// element, and no buffer freed on this thread that another one allocated.
Status PullBatch(Iterator* input, int64_t n, std::vector<Element>* out) {
  if (static_cast<int64_t>(out->size()) < n) out->resize(static_cast<size_t>(n));
  int64_t got = 0;
  for (; got < n; ++got) {
    bool end = false;
    PLUMBER_RETURN_IF_ERROR(input->GetNext(&(*out)[static_cast<size_t>(got)], &end));
    if (end) break;
  }
  out->resize(static_cast<size_t>(got));
  return Status::OK();
}

class BatchDataset final : public UnaryDataset {
 public:
  BatchDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : UnaryDataset(node, c, std::move(input)),
        size_(node.batch().batch_size()),
        drop_(node.batch().drop_remainder()),
        parallelism_(node.batch().has_parallelism() ? node.batch().parallelism() : 1) {}

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
    Status GetNextInternal(Element* out, bool* end) override {
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
    Status GetNextInternal(Element* out, bool* end) override {
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

}  // namespace

StatusOr<DatasetPtr> MakeBatchDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps, const BuildContext&) {
  return DatasetPtr(std::make_shared<BatchDataset>(node, c, deps.inputs.at(0)));
}

StatusOr<DatasetPtr> MakePaddedBatchDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                            const BuildContext&) {
  return DatasetPtr(std::make_shared<PaddedBatchDataset>(node, c, deps.inputs.at(0)));
}

}  // namespace plumber::runtime
