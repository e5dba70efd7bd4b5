// The base of the datasets with one input (map, filter, batch, cache, ...):
// the iterator holds the input's iterator for its lifetime, and the dataset
// opens its input as its child. Internal to lib/runtime.
#pragma once

#include <memory>

#include "runtime/dataset.h"
#include "pipeline.pb.h"

namespace plumber::runtime {

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

}  // namespace plumber::runtime
