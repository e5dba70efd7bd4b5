// Dataset::MakeIterator and the tracing wrapper every iterator gets when
// tracing is on.
#include "runtime/dataset.h"

#include <algorithm>

namespace plumber::runtime {
namespace {

// Charges the wrapped iterator's GetNext to its node: CPU and wall time
// (its inputs' own wrappers take theirs back while they run), and the
// element produced, which its consumer is charged with as consumed.
//
// Calls that take less than kSlowCallNs are timed only one in about 128
// (at random, so that no periodic pattern of the pipeline aliases with
// it), and counts are gathered in the iterator itself (one thread calls
// GetNext at a time) and published to the node's shared atomics only at
// those moments and at Close. The hot path of a tiny op is a countdown,
// the inner call and a byte count: no clock read, no shared atomic, no
// allocation. Counts are exact; times of fast nodes are unbiased estimates
// (see stats.h; bench/runtime_bench.cc measures their error).
class TracedIterator final : public Iterator {
 public:
  TracedIterator(std::unique_ptr<Iterator> inner, NodeCounters* self, NodeCounters* parent)
      : inner_(std::move(inner)), self_(self), parent_(parent),
        rng_(reinterpret_cast<uintptr_t>(this) | 1) {}
  ~TracedIterator() override { Publish(); }

  // The unsampled path is kept small so that it stays cheap; everything
  // else lives in Sampled. Elements produced are not counted here: they are
  // the calls since the last sample less the few that produced nothing.
  Status GetNext(Element* out, bool* end_of_sequence) override {
    if (--countdown_ <= 0) return Sampled(out, end_of_sequence);
    return Unsampled(out, end_of_sequence);
  }
  void Cancel() override { inner_->Cancel(); }
  void Close() override {
    inner_->Close();
    Publish();
  }

 private:
  // Its own function, with one return of one named Status, so that the
  // Status is built in the caller's slot (no move, no destructor of a
  // second one): at a few ns per call, that shows.
  Status Unsampled(Element* out, bool* end_of_sequence) {
    Status s = inner_->GetNext(out, end_of_sequence);
    if (s.ok() && !*end_of_sequence) [[likely]] {
      bytes_ += static_cast<int64_t>(ElementBytes(*out));
    } else {
      ++unproduced_;
    }
    return s;
  }

  [[gnu::noinline]] Status Sampled(Element* out, bool* end_of_sequence) {
    // This call stands for itself and the unsampled calls before it.
    const int64_t scale = interval_;
    TakeUnsampled();
    // One clock read serves as Enter's switch time and the start of the
    // call, unless Enter had to read the CPU clock (a system call, every
    // couple of milliseconds): that bookkeeping is not the node's work, and
    // scaled by ~128 it would dwarf a 100 ns op.
    const int64_t now = MonoNanos();
    bool settled = false;
    const cpu::Frame previous = cpu::Enter(self_, scale, now, &settled);
    const int64_t start = settled ? MonoNanos() : now;
    Status s = inner_->GetNext(out, end_of_sequence);
    const int64_t end = MonoNanos();
    cpu::Restore(previous, end);
    const int64_t took = end - start;
    if (scale > 1 && took > kSlowCallNs) {
      // A fast node's sampled call that took long was preempted or hit a
      // rare slow path: it does not stand for the calls skipped before it,
      // which are charged at the node's typical fast call instead (scaling
      // one 5 ms preemption by 128 would credit the node 640 ms it never
      // spent, more than its consumer's whole wall time).
      wall_ += took + (scale - 1) * (typical_ > 0 ? typical_ : kSlowCallNs);
    } else {
      wall_ += took * scale;
      if (took <= kSlowCallNs) typical_ = typical_ == 0 ? took : (7 * typical_ + took) / 8;
    }
    // A slow node is timed at every call; a fast one one call in ~128.
    interval_ = countdown_ = took > kSlowCallNs ? 1 : NextInterval();
    if (s.ok() && !*end_of_sequence) {
      ++produced_;
      bytes_ += static_cast<int64_t>(ElementBytes(*out));
    }
    Publish();
    return s;
  }

  static constexpr int64_t kSlowCallNs = 20'000;

  // Moves the unsampled calls made since the last sample (or publication)
  // into produced_.
  void TakeUnsampled() {
    const int64_t calls = interval_ - std::max<int64_t>(countdown_, 1);
    produced_ += calls - unproduced_;
    unproduced_ = 0;
    interval_ = std::max<int64_t>(countdown_, 1);
  }

  // Moves the locally gathered counts to the node's shared counters.
  void Publish() {
    TakeUnsampled();
    if (produced_ == 0 && wall_ == 0 && bytes_ == 0) return;
    NodeCounters::Add(self_->elements_produced, produced_);
    NodeCounters::Add(self_->bytes_produced, bytes_);
    NodeCounters::Add(self_->wall_ns, wall_);
    if (parent_) {
      NodeCounters::Add(parent_->elements_consumed, produced_);
      NodeCounters::Add(parent_->bytes_consumed, bytes_);
    }
    produced_ = bytes_ = wall_ = 0;
  }

  // Uniform in [64, 192]: one call in 128 on average. A sample costs two
  // clock reads and the CPU split's bookkeeping, about 5% of a tiny op's
  // traced time at one in 64; the estimate stays unbiased, and a node
  // doing a million calls a second still gets ~8000 samples a second.
  int64_t NextInterval() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return 64 + static_cast<int64_t>(rng_ % 129);
  }

  std::unique_ptr<Iterator> inner_;
  NodeCounters* self_;
  NodeCounters* parent_;
  uint64_t rng_;
  // Calls left until the next sample, and the interval it counts down
  // from; both 1 while the node is slow (every call timed), as at first,
  // until the node shows it is fast.
  int64_t countdown_ = 1;
  int64_t interval_ = 1;
  int64_t unproduced_ = 0;  // unsampled calls that produced no element
  int64_t produced_ = 0;
  int64_t bytes_ = 0;
  int64_t wall_ = 0;
  int64_t typical_ = 0;  // running mean of fast sampled calls, ns
};

}  // namespace

StatusOr<std::unique_ptr<Iterator>> Dataset::MakeIterator(const IterCtx& ctx) const {
  auto it = MakeIteratorInternal(ctx);
  if (!it.ok()) {
    const std::string prefix = "node '" + name_ + "'";
    // Errors from deeper nodes already name their node.
    if (it.status().message().rfind("node '", 0) == 0) return it.status();
    return it.status().WithContext(prefix);
  }
  NodeCounters::Add(counters_->instances, 1);
  if (!ctx.run->tracing) return std::move(it).value();
  return std::unique_ptr<Iterator>(new TracedIterator(std::move(it).value(), counters_, ctx.parent));
}

}  // namespace plumber::runtime
