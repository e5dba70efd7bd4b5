// interleave and prefetch: the datasets that keep several inputs or a
// buffer going at once.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "runtime/datasets.h"
#include "runtime/spin.h"
#include "runtime/thread_cache.h"

namespace plumber::runtime {
namespace {

// ---- interleave ---------------------------------------------------------------------

class InterleaveDataset final : public Dataset {
 public:
  InterleaveDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input, DatasetPtr function)
      : Dataset(node.name(), c),
        input_(std::move(input)),
        function_(std::move(function)),
        cycle_(node.interleave().has_cycle_length() ? node.interleave().cycle_length() : 1),
        block_(node.interleave().has_block_length() ? node.interleave().block_length() : 1),
        parallelism_(node.interleave().has_parallelism() ? node.interleave().parallelism() : 1),
        deterministic_(!node.interleave().has_deterministic() || node.interleave().deterministic()) {}

  int Parallelism() const override { return parallelism_; }
  // Each open dataset may have a block and one more element buffered.
  // The cycle's datasets and as many opened ahead, each with its buffer.
  int64_t BufferCapacity() const override { return parallelism_ > 1 ? 2 * int64_t{cycle_} * PerSlot() : 0; }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override;

 private:
  int64_t PerSlot() const { return int64_t{block_} + 1; }
  // Opens the function for one input element: its nodes are charged as
  // children of this interleave.
  StatusOr<std::unique_ptr<Iterator>> OpenFunction(const IterCtx& ctx, const Element& arg) const {
    IterCtx fctx{ctx.run, counters(), &arg};
    return function_->MakeIterator(fctx);
  }

  class SeqIt;
  class ParIt;

  DatasetPtr input_;
  DatasetPtr function_;
  int cycle_, block_, parallelism_;
  bool deterministic_;
};

// tf.data's InterleaveDatasetOp loop, element for element.
class InterleaveDataset::SeqIt final : public Iterator {
 public:
  SeqIt(const InterleaveDataset* d, const IterCtx& ctx, std::unique_ptr<Iterator> input)
      : d_(d), ctx_(ctx), input_(std::move(input)), cycle_(static_cast<size_t>(d->cycle_)) {}
  ~SeqIt() override { Close(); }

  Status GetNextInternal(Element* out, bool* end) override {
    while (!input_end_ || open_ > 0) {
      Iterator* current;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (cancelled_) return Status::Cancelled("cancelled");
        current = cycle_[index_].get();
      }
      if (current) {
        bool sub_end = false;
        PLUMBER_RETURN_IF_ERROR(current->GetNext(out, &sub_end));
        if (!sub_end) {
          if (++block_index_ == d_->block_) Advance();
          *end = false;
          return Status::OK();
        }
        std::unique_ptr<Iterator> done;
        {
          std::lock_guard<std::mutex> lock(mu_);
          done = std::move(cycle_[index_]);
        }
        done->Close();
        --open_;
        Advance();
      } else if (!input_end_) {
        Element arg;
        PLUMBER_RETURN_IF_ERROR(input_->GetNext(&arg, &input_end_));
        if (input_end_) continue;
        PLUMBER_ASSIGN_OR_RETURN(auto sub, d_->OpenFunction(ctx_, arg));
        std::lock_guard<std::mutex> lock(mu_);
        cycle_[index_] = std::move(sub);
        if (cancelled_) cycle_[index_]->Cancel();
        ++open_;
      } else {
        Advance();
      }
    }
    *end = true;
    return Status::OK();
  }

  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    input_->Cancel();
    for (auto& it : cycle_) {
      if (it) it->Cancel();
    }
  }

  void Close() override {
    Cancel();
    std::vector<std::unique_ptr<Iterator>> subs;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& it : cycle_) {
        if (it) subs.push_back(std::move(it));
      }
    }
    for (auto& it : subs) it->Close();
    input_->Close();
  }

 private:
  void Advance() {
    block_index_ = 0;
    index_ = (index_ + 1) % cycle_.size();
  }

  const InterleaveDataset* d_;
  IterCtx ctx_;
  std::unique_ptr<Iterator> input_;
  std::mutex mu_;  // guards the cycle's pointers against Cancel
  bool cancelled_ = false;
  std::vector<std::unique_ptr<Iterator>> cycle_;
  size_t index_ = 0;
  int block_index_ = 0;
  int open_ = 0;
  bool input_end_ = false;
};

// The same order as SeqIt, but `parallelism` workers keep a small buffer
// of each open dataset filled. The consumer alone pulls the input and opens
// the datasets, so the order of files never depends on timing. It opens up
// to cycle_length of them ahead ("future" datasets, as tf.data's parallel
// interleave does), which the workers start filling before they join the
// cycle: a dataset that waits on storage for its first element then waits
// while the cycle is busy with others, not at its turn. A future dataset
// joins the cycle at the slot that would have opened it, in input order, so
// the elements and their order are those of SeqIt.
//
// Each dataset's buffer holds block_length + 1 elements, or more while they
// take under kSlotBytes: a reader receives a whole storage request at once
// and then waits for the next, so a buffer of two small records would make
// the consumer wait at that dataset's turn while the others sit full.
class InterleaveDataset::ParIt final : public Iterator {
 public:
  ParIt(const InterleaveDataset* d, const IterCtx& ctx, std::unique_ptr<Iterator> input)
      : d_(d),
        ctx_(ctx),
        input_(std::move(input)),
        slots_(static_cast<size_t>(d->cycle_)),
        slot_bytes_(std::min(kSlotBytes, kAllSlotsBytes / (2 * int64_t{d->cycle_}))) {}
  ~ParIt() override { Close(); }

  Status GetNextInternal(Element* out, bool* end) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!started_) {
      started_ = true;
      NodeCounters* wc = d_->WorkerCounters(ctx_);
      for (int i = 0; i < d_->parallelism_; ++i) workers_.emplace_back([this, wc] { WorkerLoop(wc); });
    }
    while (!input_end_ || open_ > 0 || !future_.empty()) {
      if (cancelled_) return Status::Cancelled("cancelled");
      std::unique_ptr<Slot>& s = slots_[index_];
      if (s) {
        while (s->buf.empty() && !s->ended && s->error.ok() && !cancelled_) {
          if (!d_->deterministic_ && TakeAny(out)) {
            *end = false;
            return Status::OK();
          }
          // Before waiting, open a dataset ahead if there is room: its
          // first element is then on its way while this one is.
          if (!input_end_ && static_cast<int>(future_.size()) < d_->cycle_) {
            PLUMBER_RETURN_IF_ERROR(OpenAhead(lock));
            continue;
          }
          consumer_waiting_ = true;
          {
            BlockedScope blocked(Wait::kInput, d_->WorkerCounters(ctx_));
            cv_consumer_.wait(lock);
          }
          consumer_waiting_ = false;
        }
        if (cancelled_) return Status::Cancelled("cancelled");
        if (!s->buf.empty()) {
          Take(*s, out);
          if (++block_index_ == d_->block_) Advance();
          *end = false;
          return Status::OK();
        }
        if (!s->error.ok()) return s->error;
        // Ended and drained; no worker holds it (ended is set by the
        // worker after its last call).
        std::unique_ptr<Slot> done = std::move(s);
        --open_;
        Advance();
        lock.unlock();
        done->it->Close();
        lock.lock();
      } else if (!future_.empty() || !input_end_) {
        if (future_.empty()) {
          PLUMBER_RETURN_IF_ERROR(OpenAhead(lock));
          continue;
        }
        // The next dataset in input order takes this cycle position.
        slots_[index_] = std::move(future_.front());
        future_.pop_front();
        ++open_;
        if (idle_workers_ > 0) cv_workers_.notify_one();
      } else {
        Advance();
      }
    }
    *end = true;
    return Status::OK();
  }

  void Cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      for (auto& s : slots_) {
        if (s) s->it->Cancel();
      }
      for (auto& s : future_) s->it->Cancel();
    }
    cv_consumer_.notify_all();
    cv_workers_.notify_all();
    input_->Cancel();
  }

  void Close() override {
    Cancel();
    for (auto& t : workers_) t.join();
    workers_.clear();
    // Cancel may still come from another thread (a run's monitor at its
    // deadline) and walks the slots under mu_: take the datasets out under
    // it too, and close them outside it, as SeqIt does.
    std::vector<std::unique_ptr<Slot>> open;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& s : slots_) {
        if (s) open.push_back(std::move(s));
      }
      for (auto& s : future_) open.push_back(std::move(s));
      future_.clear();
    }
    for (auto& s : open) s->it->Close();
    input_->Close();
  }

 private:
  // One opened dataset, in the cycle or waiting to join it. Held by
  // unique_ptr so that it keeps its address when it joins the cycle while
  // a worker is inside it.
  static constexpr int64_t kSlotBytes = int64_t{1} << 20;
  static constexpr int64_t kAllSlotsBytes = int64_t{64} << 20;

  struct Slot {
    std::unique_ptr<Iterator> it;
    std::deque<Element> buf;
    int64_t bytes = 0;   // of the elements in buf
    bool busy = false;   // a worker is inside it->GetNext
    bool ended = false;  // it reported the end of its sequence
    Status error;
  };

  // Requires mu_ held by `lock`; releases it while pulling the input and
  // opening the dataset. Appends the dataset to future_, or marks the input
  // ended.
  Status OpenAhead(std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    Element arg;
    bool in_end = false;
    Status st = input_->GetNext(&arg, &in_end);
    StatusOr<std::unique_ptr<Iterator>> sub = Status::Cancelled("unused");
    if (st.ok() && !in_end) sub = d_->OpenFunction(ctx_, arg);
    lock.lock();
    PLUMBER_RETURN_IF_ERROR(st);
    if (in_end) {
      input_end_ = true;
      return Status::OK();
    }
    if (!sub.ok()) return sub.status();
    auto fresh = std::make_unique<Slot>();
    fresh->it = std::move(sub).value();
    if (cancelled_) fresh->it->Cancel();
    future_.push_back(std::move(fresh));
    // A new dataset to fill: one idle worker is enough.
    if (idle_workers_ > 0) cv_workers_.notify_one();
    return Status::OK();
  }

  void Advance() {
    block_index_ = 0;
    index_ = (index_ + 1) % slots_.size();
  }

  // Requires mu_. Room in the slot is work for an idle worker.
  void Take(Slot& s, Element* out) {
    *out = std::move(s.buf.front());
    s.buf.pop_front();
    --fill_;
    const auto size = static_cast<int64_t>(ElementBytes(*out));
    bytes_ -= size;
    s.bytes -= size;
    if (idle_workers_ > 0 && s.it && !s.busy && !s.ended && s.error.ok()) cv_workers_.notify_one();
  }

  // Non-deterministic mode: any buffered element of another slot.
  bool TakeAny(Element* out) {
    for (auto& s : slots_) {
      if (s && !s->buf.empty()) {
        Take(*s, out);
        return true;
      }
    }
    return false;
  }

  bool Fillable(const Slot& s) const {
    return !s.busy && !s.ended && s.error.ok() &&
           (static_cast<int64_t>(s.buf.size()) < d_->PerSlot() || s.bytes < slot_bytes_);
  }

  // A dataset to fill: open, idle, not ended, room in its buffer; the ones
  // the consumer needs soonest first, then those opened ahead, oldest first.
  Slot* PickWork() {
    for (size_t k = 0; k < slots_.size(); ++k) {
      Slot* s = slots_[(index_ + k) % slots_.size()].get();
      if (s && Fillable(*s)) return s;
    }
    for (auto& s : future_) {
      if (Fillable(*s)) return s.get();
    }
    return nullptr;
  }

  void WorkerLoop(NodeCounters* wc) {
    WorkerScope scope(wc);
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      Slot* s = nullptr;
      while (!cancelled_ && (s = PickWork()) == nullptr) {
        ++idle_workers_;
        {
          BlockedScope blocked(Wait::kOutput, wc);
          cv_workers_.wait(lock);
        }
        --idle_workers_;
      }
      if (cancelled_) return;
      s->busy = true;
      Iterator* it = s->it.get();
      lock.unlock();
      Element e;
      bool end = false;
      Status st = it->GetNext(&e, &end);
      lock.lock();
      s->busy = false;
      if (!st.ok()) {
        s->error = st;
      } else if (end) {
        s->ended = true;
      } else {
        ++fill_;
        const auto size = static_cast<int64_t>(ElementBytes(e));
        bytes_ += size;
        s->bytes += size;
        d_->counters()->ObserveBuffer(fill_, bytes_);
        s->buf.push_back(std::move(e));
      }
      // The consumer waits on one slot (or, not deterministic, on any): a
      // wake-up it does not need costs microseconds, so it is only woken
      // when it is waiting and this could be what it waits for.
      if (consumer_waiting_ && (!d_->deterministic_ || s == slots_[index_].get())) {
        cv_consumer_.notify_one();
      }
    }
  }

  const InterleaveDataset* d_;
  IterCtx ctx_;
  std::unique_ptr<Iterator> input_;
  std::vector<PooledThread> workers_;
  std::mutex mu_;
  // The consumer and the workers wait apart, so that each is woken only
  // by news it can use.
  std::condition_variable cv_consumer_;
  std::condition_variable cv_workers_;
  bool consumer_waiting_ = false;
  int idle_workers_ = 0;
  bool started_ = false;
  bool cancelled_ = false;
  // The cycle: null where no dataset is open.
  std::vector<std::unique_ptr<Slot>> slots_;
  // Datasets opened ahead, in input order.
  std::deque<std::unique_ptr<Slot>> future_;
  const int64_t slot_bytes_;
  size_t index_ = 0;
  int block_index_ = 0;
  int open_ = 0;
  bool input_end_ = false;
  int64_t fill_ = 0;
  int64_t bytes_ = 0;
};

StatusOr<std::unique_ptr<Iterator>> InterleaveDataset::MakeIteratorInternal(const IterCtx& ctx) const {
  PLUMBER_ASSIGN_OR_RETURN(auto input, input_->MakeIterator(ChildCtx(ctx)));
  if (parallelism_ == 1) return std::unique_ptr<Iterator>(new SeqIt(this, ctx, std::move(input)));
  return std::unique_ptr<Iterator>(new ParIt(this, ctx, std::move(input)));
}

// ---- prefetch ----------------------------------------------------------------------------

class PrefetchDataset final : public Dataset {
 public:
  PrefetchDataset(const schema::Node& node, NodeCounters* c, DatasetPtr input)
      : Dataset(node.name(), c), input_(std::move(input)), size_(node.prefetch().buffer_size()) {}

  int64_t BufferCapacity() const override { return size_; }

 protected:
  StatusOr<std::unique_ptr<Iterator>> MakeIteratorInternal(const IterCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(auto input, input_->MakeIterator(ChildCtx(ctx)));
    if (size_ == 0) return input;  // buffer_size 0 passes elements through
    return std::unique_ptr<Iterator>(new It(this, WorkerCounters(ctx), std::move(input)));
  }

 private:
  // One background thread keeps up to size_ elements ready. Each side is
  // woken only when the other has something for it: the consumer when it
  // waits on an empty buffer and an element arrives, the producer when it
  // waits on a full one and the consumer has emptied half of it (so that
  // it is woken once per run of elements, not per element). The consumer
  // spins briefly before parking, as a fast producer is about to deliver.
  class It final : public Iterator {
   public:
    It(const PrefetchDataset* d, NodeCounters* wc, std::unique_ptr<Iterator> input)
        : d_(d), wc_(wc), input_(std::move(input)) {}
    ~It() override { Close(); }

    Status GetNextInternal(Element* out, bool* end) override {
      std::unique_lock<std::mutex> lock(mu_);
      if (!started_) {
        started_ = true;
        thread_ = PooledThread([this] { Produce(); });
      }
      while (buf_.empty() && !finished_ && !cancelled_) {
        news_.store(false, std::memory_order_relaxed);
        lock.unlock();
        const bool soon = SpinUntil([&] { return news_.load(std::memory_order_acquire); });
        lock.lock();
        if (soon) continue;
        if (!buf_.empty() || finished_ || cancelled_) break;
        consumer_waiting_ = true;
        {
          BlockedScope blocked(Wait::kInput, wc_);
          cv_consumer_.wait(lock);
        }
        consumer_waiting_ = false;
      }
      if (cancelled_) return Status::Cancelled("cancelled");
      if (buf_.empty()) {
        *end = final_.ok();
        return final_;
      }
      *out = std::move(buf_.front());
      buf_.pop_front();
      bytes_ -= static_cast<int64_t>(ElementBytes(*out));
      if (producer_waiting_ && static_cast<int64_t>(buf_.size()) <= d_->size_ / 2) cv_producer_.notify_one();
      *end = false;
      return Status::OK();
    }

    void Cancel() override {
      {
        std::lock_guard<std::mutex> lock(mu_);
        cancelled_ = true;
      }
      cv_consumer_.notify_all();
      cv_producer_.notify_all();
      input_->Cancel();
    }

    void Close() override {
      Cancel();
      if (thread_.joinable()) thread_.join();
      input_->Close();
    }

   private:
    void Produce() {
      WorkerScope scope(wc_);
      while (true) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cancelled_ && static_cast<int64_t>(buf_.size()) >= d_->size_) {
            producer_waiting_ = true;
            // Woken at half full (see GetNext), or cancelled.
            while (!cancelled_ && static_cast<int64_t>(buf_.size()) > d_->size_ / 2) {
              BlockedScope blocked(Wait::kOutput, wc_);
              cv_producer_.wait(lock);
            }
            producer_waiting_ = false;
          }
          if (cancelled_) return;
        }
        Element e;
        bool end = false;
        Status s = input_->GetNext(&e, &end);
        std::lock_guard<std::mutex> lock(mu_);
        if (!s.ok() || end) {
          finished_ = true;
          final_ = s;
          news_.store(true, std::memory_order_release);
          if (consumer_waiting_) cv_consumer_.notify_one();
          return;
        }
        bytes_ += static_cast<int64_t>(ElementBytes(e));
        buf_.push_back(std::move(e));
        d_->counters()->ObserveBuffer(static_cast<int64_t>(buf_.size()), bytes_);
        news_.store(true, std::memory_order_release);
        if (consumer_waiting_) cv_consumer_.notify_one();
      }
    }

    const PrefetchDataset* d_;
    NodeCounters* wc_;
    std::unique_ptr<Iterator> input_;
    PooledThread thread_;
    std::mutex mu_;
    std::condition_variable cv_consumer_;
    std::condition_variable cv_producer_;
    bool consumer_waiting_ = false;
    bool producer_waiting_ = false;
    // Set by the producer at each element or the end, for the consumer's
    // spin; written under mu_.
    std::atomic<bool> news_{false};
    bool started_ = false;
    bool cancelled_ = false;
    bool finished_ = false;
    Status final_;
    std::deque<Element> buf_;
    int64_t bytes_ = 0;
  };

  DatasetPtr input_;
  int64_t size_;
};

}  // namespace

StatusOr<DatasetPtr> MakeInterleaveDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                           const BuildContext&) {
  return DatasetPtr(std::make_shared<InterleaveDataset>(node, c, deps.inputs.at(0), deps.function));
}

StatusOr<DatasetPtr> MakePrefetchDataset(const schema::Node& node, NodeCounters* c, NodeDeps deps,
                                         const BuildContext&) {
  return DatasetPtr(std::make_shared<PrefetchDataset>(node, c, deps.inputs.at(0)));
}

}  // namespace plumber::runtime
