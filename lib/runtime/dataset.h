// The iterator model, after tf.data and the paper: a Dataset is an
// immutable description whose parameters were checked when it was built;
// opening it (MakeIterator) yields an Iterator that holds the state of one
// pass and produces elements with GetNext until the end of the sequence.
// Each dataset describes itself (cardinality, randomness, parallelism,
// buffer) so that traces can record it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/stats.h"
#include "runtime/storage.h"
#include "runtime/tensor.h"

namespace plumber::runtime {

// One pass over a dataset. Not copyable. GetNext is called by one thread
// at a time; Cancel may be called from any thread at any time.
class Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  // Folds a traced iterator's counts into its node (see IterShard).
  virtual ~Iterator();

  // Produces the next element into *out and sets *end_of_sequence false; or
  // sets *end_of_sequence true when the sequence is over (and keeps doing so
  // on later calls); or returns an error, after which the iterator may only
  // be closed. After Cancel, returns Cancelled. *out may hold an earlier
  // element on entry, whose buffers the iterator may reuse or drop.
  //
  // Not virtual: tracing lives here, so that a traced tiny op pays one
  // virtual call per element, not two through a wrapper. Untraced, it is
  // a test and the iterator's own GetNextInternal. Traced, every call
  // counts its element and bytes in the iterator's shard (no shared atomic,
  // no allocation, no clock), and one call in a few hundred or thousand is
  // timed for the node's wall and CPU time (SampledNext, dataset.cc).
  Status GetNext(Element* out, bool* end_of_sequence) {
    if (shard_.self == nullptr) return GetNextInternal(out, end_of_sequence);
    // The element count doubles as the countdown to the next timed call:
    // one counter less to update per element.
    if (shard_.produced.load(std::memory_order_relaxed) != next_timed_) [[likely]] {
      return CountedNext(out, end_of_sequence);
    }
    return SampledNext(out, end_of_sequence);
  }

  // Asks this iterator and every iterator below it to stop: wakes waiting
  // threads and makes blocked or later GetNext calls return Cancelled.
  // Does not wait; safe to call concurrently with GetNext.
  virtual void Cancel() = 0;

  // Cancels, then waits for this iterator's worker threads and closes its
  // inputs. Idempotent; destructors of iterators with threads call it.
  // No GetNext may be running or follow.
  virtual void Close() = 0;

  // Counts this iterator's elements for `self` (produced) and `parent`
  // (consumed; null for the output node) from now on. Dataset::MakeIterator
  // calls it once, before the first GetNext, when the run is traced.
  void StartTracing(NodeCounters* self, NodeCounters* parent);
  bool traced() const { return shard_.self != nullptr; }

 protected:
  // What GetNext does, without the tracing.
  virtual Status GetNextInternal(Element* out, bool* end_of_sequence) = 0;

 private:
  // A separate function with one return of one named Status, so that the
  // Status is built in the caller's slot (no move, no second destructor):
  // at a few ns per call of a tiny op, that shows.
  Status CountedNext(Element* out, bool* end_of_sequence) {
    Status s = GetNextInternal(out, end_of_sequence);
    if (s.ok() && !*end_of_sequence) [[likely]] shard_.Count(static_cast<int64_t>(ElementBytes(*out)));
    return s;
  }
  [[gnu::noinline]] Status SampledNext(Element* out, bool* end_of_sequence);
  int64_t NextInterval();

  IterShard shard_;
  // The element count at which the next call is timed, and how many calls
  // that timed call stands for (itself and the untimed ones before it): 1
  // while the node is slow (every call timed), as at first, until it shows
  // it is fast. Calls that produce nothing (the end, errors) do not count.
  int64_t next_timed_ = 0;
  int64_t interval_ = 1;
  int64_t typical_ = 0;  // running mean of fast timed calls, ns
  int64_t cost_ = 0;     // running mean of timed calls (long ones damped), ns
  uint64_t rng_ = 1;
};

// Shared by every iterator of one run.
struct RunContext {
  Storage* storage = nullptr;
  // Count elements, bytes, CPU and wall time per node (Iterator::GetNext).
  // Off for overhead measurements: then nothing but storage is counted.
  bool tracing = true;
};

// What an iterator is opened with.
struct IterCtx {
  RunContext* run = nullptr;
  // Counters of the consumer, charged with the elements consumed; null for
  // the output node.
  NodeCounters* parent = nullptr;
  // Inside an interleave function: the input element the instance was
  // opened for (e.g. a file name). Null elsewhere.
  const Element* arg = nullptr;
};

inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;

class Dataset {
 public:
  Dataset(std::string name, NodeCounters* counters) : name_(std::move(name)), counters_(counters) {}
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  virtual ~Dataset() = default;

  const std::string& name() const { return name_; }
  NodeCounters* counters() const { return counters_; }

  // Opens a pass over the dataset (the iterator model's Open): creates the
  // iterator and opens its inputs. Errors name the node.
  StatusOr<std::unique_ptr<Iterator>> MakeIterator(const IterCtx& ctx) const;

  // Elements in one pass: a count, kInfiniteCardinality or
  // kUnknownCardinality. Not the dataset's own rule: Program::Build asks
  // the op table's rule (the one the analysis uses) over the inputs' and
  // the function's, and records the answer in the node's counters.
  int64_t Cardinality() const {
    return counters_ != nullptr && counters_->cardinality ? *counters_->cardinality : kUnknownCardinality;
  }
  // list_files: how many files its list and glob resolved to, for the op
  // table's rule; nullopt for every other dataset.
  virtual std::optional<int64_t> MatchedFiles() const { return std::nullopt; }
  // Worker threads the dataset runs (1 for sequential datasets).
  virtual int Parallelism() const { return 1; }
  // Elements its buffer holds at most; 0 without a buffer.
  virtual int64_t BufferCapacity() const { return 0; }

 protected:
  virtual StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const = 0;
  // The context for opening an input of this dataset.
  IterCtx ChildCtx(const IterCtx& ctx) const { return IterCtx{ctx.run, counters_, ctx.arg}; }
  // Worker threads charge their CPU time here; null when tracing is off.
  NodeCounters* WorkerCounters(const IterCtx& ctx) const { return ctx.run->tracing ? counters_ : nullptr; }

 private:
  std::string name_;
  NodeCounters* counters_;
};

using DatasetPtr = std::shared_ptr<const Dataset>;

}  // namespace plumber::runtime
