// Dataset::MakeIterator and the tracing wrapper every iterator gets when
// tracing is on.
#include "runtime/dataset.h"

namespace plumber::runtime {
namespace {

// Charges the wrapped iterator's GetNext to its node: CPU and wall time
// (its inputs' own wrappers take theirs back while they run), and the
// element produced, which its consumer is charged with as consumed.
class TracedIterator final : public Iterator {
 public:
  TracedIterator(std::unique_ptr<Iterator> inner, NodeCounters* self, NodeCounters* parent)
      : inner_(std::move(inner)), self_(self), parent_(parent) {}

  Status GetNext(Element* out, bool* end_of_sequence) override {
    const int64_t start = MonoNanos();
    NodeCounters* previous = cpu::SwitchTo(self_, start);
    Status s = inner_->GetNext(out, end_of_sequence);
    const int64_t end = MonoNanos();
    cpu::SwitchTo(previous, end);
    NodeCounters::Add(self_->wall_ns, end - start);
    if (s.ok() && !*end_of_sequence) {
      const auto bytes = static_cast<int64_t>(ElementBytes(*out));
      NodeCounters::Add(self_->elements_produced, 1);
      NodeCounters::Add(self_->bytes_produced, bytes);
      if (parent_) {
        NodeCounters::Add(parent_->elements_consumed, 1);
        NodeCounters::Add(parent_->bytes_consumed, bytes);
      }
    }
    return s;
  }
  void Cancel() override { inner_->Cancel(); }
  void Close() override { inner_->Close(); }

 private:
  std::unique_ptr<Iterator> inner_;
  NodeCounters* self_;
  NodeCounters* parent_;
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
