// Dataset::MakeIterator and the tracing every iterator does when the run is
// traced.
#include "runtime/dataset.h"

#include <algorithm>

namespace plumber::runtime {
namespace {

// A call slower than this is timed every time; a node whose timed calls
// are faster is timed rarely (Iterator::NextInterval).
constexpr int64_t kSlowCallNs = 20'000;

// For a dataset that hands back its input's iterator as its own (prefetch
// with no buffer): that iterator already counts for the input's node, and
// this node needs its own counts.
class ForwardIterator final : public Iterator {
 public:
  explicit ForwardIterator(std::unique_ptr<Iterator> inner) : inner_(std::move(inner)) {}
  void Cancel() override { inner_->Cancel(); }
  void Close() override { inner_->Close(); }

 protected:
  Status GetNextInternal(Element* out, bool* end_of_sequence) override { return inner_->GetNext(out, end_of_sequence); }

 private:
  std::unique_ptr<Iterator> inner_;
};

}  // namespace

// Tracing (see Iterator::GetNext): counts are exact and gathered in the
// iterator's shard; the node's CPU and wall time come from timed calls.
//
// Nodes whose calls take less than kSlowCallNs on average are timed only
// one call in a few hundred or thousand (NextInterval), and each timed call
// stands for itself and the untimed calls before it. Times of fast nodes
// are thus unbiased estimates (see stats.h; bench/runtime_bench.cc
// measures their error).

Iterator::~Iterator() {
  if (shard_.self != nullptr) NodeCounters::Detach(&shard_);
}

void Iterator::StartTracing(NodeCounters* self, NodeCounters* parent) {
  shard_.self = self;
  shard_.parent = parent;
  rng_ = reinterpret_cast<uintptr_t>(this) | 1;
  NodeCounters::Attach(&shard_);
}

Status Iterator::SampledNext(Element* out, bool* end_of_sequence) {
  // This call stands for itself and the untimed calls before it.
  const int64_t scale = interval_;
  // One clock read serves as Enter's switch time and the start of the
  // call, unless Enter had to read the CPU clock (a system call, every
  // couple of milliseconds): that bookkeeping is not the node's work, and
  // scaled by ~128 it would dwarf a 100 ns op.
  const int64_t now = MonoNanos();
  bool settled = false;
  const cpu::Frame previous = cpu::Enter(shard_.self, scale, now, &settled, shard_.parent);
  const int64_t start = settled ? MonoNanos() : now;
  Status s = GetNextInternal(out, end_of_sequence);
  const int64_t end = MonoNanos();
  const int64_t took = end - start;
  if (scale > 1 && took > kSlowCallNs) {
    // A fast node's timed call that took long was preempted or hit a rare
    // slow path: it does not stand for the calls skipped before it, which
    // are charged at the node's typical fast call instead (scaling one 5 ms
    // preemption by 128 would credit the node 640 ms it never spent, more
    // than its consumer's whole wall time). The same goes for its share of
    // the thread's CPU.
    const int64_t skipped = (scale - 1) * (typical_ > 0 ? typical_ : kSlowCallNs);
    cpu::RestoreAfterSlowCall(previous, end, skipped);
    IterShard::Bump(shard_.wall_ns, took + skipped);
  } else {
    cpu::Restore(previous, end);
    IterShard::Bump(shard_.wall_ns, took * scale);
    if (took <= kSlowCallNs) typical_ = typical_ == 0 ? took : (7 * typical_ + took) / 8;
  }
  if (s.ok() && !*end_of_sequence) shard_.Count(static_cast<int64_t>(ElementBytes(*out)));
  // The node's cost decides how often it is timed, not this one call: a
  // call preempted on a busy machine used to switch a fast node (a batch
  // of tiny elements, ~10 us a call) to timing every call until a timed
  // call came back fast, and under load that cost ~1.5 ns per element.
  // One long call moves the running mean by at most half again the mean;
  // a node that really became slow gets there in a few timed calls.
  cost_ = cost_ == 0 ? took : (7 * cost_ + std::min(took, 4 * cost_ + 1000)) / 8;
  // A slow node is timed at every call; a fast one rarely (NextInterval).
  interval_ = cost_ > kSlowCallNs ? 1 : NextInterval();
  next_timed_ = shard_.produced.load(std::memory_order_relaxed) + interval_ - 1;
  return s;
}

// How many calls the next timed one stands for: at random (uniform in
// [mean/2, 3 mean/2]) so that no periodic pattern of the pipeline aliases
// with it, and often enough for unbiased, steady estimates: a node doing a
// million calls a second is timed at least ~120 times a second, one doing
// forty million (a range feeding an add) ~5000. The mean keeps what timing
// costs (two clock reads and the CPU split's bookkeeping) near 1/500 of
// the node's time: clock_gettime takes 20 ns on some machines and 90 on the
// VMs this runs on; timed one call in 128, two tiny nodes paid 4% of their
// time in it, and at 1/100 of each node's time the nested nodes of the
// tiny-op pipeline (each node's time includes its inputs') still paid 3%.
constexpr int64_t kTimingShare = 500;
int64_t Iterator::NextInterval() {
  static const int64_t sample_cost = 2 * MonoNanosCost() + 40;
  int64_t mean = 128;
  if (cost_ > 0) mean = std::clamp<int64_t>(kTimingShare * sample_cost / cost_, 128, 8192);
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return mean / 2 + static_cast<int64_t>(rng_ % static_cast<uint64_t>(mean + 1));
}

StatusOr<std::unique_ptr<Iterator>> Dataset::MakeIterator(const IterCtx& ctx) const {
  auto it = MakeIteratorInternal(ctx);
  if (!it.ok()) {
    const std::string prefix = "node '" + name_ + "'";
    // Errors from deeper nodes already name their node.
    if (it.status().message().rfind("node '", 0) == 0) return it.status();
    return it.status().WithContext(prefix);
  }
  NodeCounters::Add(counters_->instances, 1);
  std::unique_ptr<Iterator> iter = std::move(it).value();
  if (ctx.run->tracing) {
    if (iter->traced()) iter = std::make_unique<ForwardIterator>(std::move(iter));
    iter->StartTracing(counters_, ctx.parent);
  }
  return iter;
}

}  // namespace plumber::runtime
