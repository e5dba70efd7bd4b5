// The ordered worker pool (see ordered_pool.h).
//
// What a hand-off costs, and how the pool avoids paying it per element:
// - Workers take the input in turns for a whole chunk of tasks and publish
//   the chunk's results at once; the consumer takes a finished chunk under
//   the lock and then drains it with no lock at all.
// - Chunks leave in input order: each takes its place in `pending_` while
//   its worker holds the input, so that queue is in input order; a finished
//   chunk also raises its own `ready` flag, which the consumer polls without
//   the lock while it spins.
// - A thread is woken only when there is something for it: the consumer
//   when the chunk it can take is published (not when any chunk is), one
//   worker when a chunk slot frees. Each spins briefly before parking.
// - Chunk size: every chunk is timed (two clock reads per chunk, none per
//   task) and the next chunks are sized so that their work is at least
//   kChunkWorkNs, fifty to a hundred times the CPU of a hand-off with a
//   wake-up (10-20 us on the 2-core VMs this was measured on; the `plumber
//   run` calibration measures it: see MeasureHandoff in calibrate.h). Chunks are also capped in tasks and
//   bytes, so that a cheap op on large elements does not hold megabytes.
#include "runtime/ordered_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "pipeline/pool_chunks.h"
#include "runtime/spin.h"
#include "runtime/thread_cache.h"

namespace plumber::runtime {
namespace {

// Input elements per chunk (an interleave pulls several per task); the
// other limits are the chunk rule's (pipeline/pool_chunks.h).
constexpr int64_t kMaxChunkElements = 65536;
// A drained chunk whose results took more than this drops them rather than
// keep them as spares: small elements are what allocation per element
// hurts, and spares of large ones would hold memory the buffer has freed.
constexpr int64_t kMaxSpareBytes = 64 << 10;

class OrderedPoolIterator final : public Iterator {
 public:
  OrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec)
      : input_(std::move(input)), spec_(std::move(spec)) {}
  ~OrderedPoolIterator() override { Close(); }

  // The fast path: the next result of the chunk in hand, without a lock.
  // Swapped out, not moved: the caller's previous element goes back into
  // the chunk, and with the chunk to a worker, which pulls its next input
  // into that buffer (see Chunk).
  Status GetNextInternal(Element* out, bool* end) override {
    if (local_ && pos_ < local_->count && !cancelled_.load(std::memory_order_relaxed)) {
      out->swap(local_->results[pos_++]);
      *end = false;
      return Status::OK();
    }
    return NextChunk(out, end);
  }

  void Cancel() override {
    {
      auto lock = LockState();
      cancelled_.store(true, std::memory_order_relaxed);
    }
    cv_consumer_.notify_all();
    cv_workers_.notify_all();
    input_->Cancel();
  }

  void Close() override {
    Cancel();
    for (auto& t : workers_) t.join();
    workers_.clear();
    input_->Close();
  }

 private:
  // Chunks are recycled: a drained chunk goes back to the workers with its
  // vectors and with the elements the consumer swapped into it, which the
  // next tasks pull into and write to. A pooled tiny op then allocates
  // nothing per element, and no buffer allocated on one thread is freed on
  // another (glibc's arenas made that cost a third of a pooled add).
  struct Chunk {
    // Results of the chunk's tasks that ran (those `keep` kept), in task
    // order, are the first `count`; `status` (when not OK) comes after
    // them. Those beyond are spare elements whose buffers the next use of
    // the chunk reuses.
    std::vector<Element> results;
    size_t count = 0;
    Status status;
    // Nothing follows this chunk: the input ended or failed inside it.
    bool end = false;
    int64_t bytes = 0;
    bool done = false;               // guarded by mu_
    std::atomic<bool> ready{false};  // done, readable without mu_
  };

  // Whether `c` can leave now: in order, or (not deterministic) any
  // finished chunk, keeping the end and errors behind everything before
  // them. Requires mu_.
  bool Takeable(const Chunk& c) const {
    if (!c.done) return false;
    if (&c == pending_.front().get()) return true;
    return !spec_.deterministic && c.status.ok() && !c.end;
  }

  // The chunk to hand over next, removed from pending_, or null. Requires mu_.
  std::shared_ptr<Chunk> Pick() {
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (Takeable(**it)) {
        auto c = std::move(*it);
        pending_.erase(it);
        return c;
      }
      if (spec_.deterministic) break;
    }
    return nullptr;
  }

  [[gnu::noinline]] Status NextChunk(Element* out, bool* end) {
    if (cancelled_.load(std::memory_order_relaxed)) return Status::Cancelled("cancelled");
    if (local_) {
      // Drained: what followed its results decides whether more come.
      if (!local_->status.ok() || local_->end) {
        finished_ = true;
        final_ = local_->status;
      }
      // Spares that hold much memory are dropped (here, outside the lock):
      // recycled, they would double what the buffer holds.
      if (local_->bytes > kMaxSpareBytes) local_->results.clear();
      if (finished_) local_.reset();  // recycled below, under the lock, otherwise
    }
    if (finished_) {
      *end = final_.ok();
      return final_;
    }
    std::shared_ptr<Chunk> chunk;
    {
      auto lock = LockState();
      if (!started_) {
        started_ = true;
        for (int i = 0; i < spec_.parallelism; ++i) workers_.emplace_back([this] { WorkerLoop(); });
      }
      while (true) {
        if (cancelled_.load(std::memory_order_relaxed)) return Status::Cancelled("cancelled");
        if (local_) {
          Recycle(std::move(local_));
          local_.reset();
        }
        chunk = Pick();
        if (chunk) break;
        // Spin on the chunk wanted next (deterministic) or on any finished
        // chunk, then park until a worker publishes one that can leave.
        Chunk* front = pending_.empty() ? nullptr : pending_.front().get();
        lock.unlock();
        const bool soon = (front != nullptr || !spec_.deterministic) && SpinUntil([&] {
          if (cancelled_.load(std::memory_order_relaxed)) return true;
          if (spec_.deterministic) return front != nullptr && front->ready.load(std::memory_order_acquire);
          return ready_chunks_.load(std::memory_order_acquire) > 0;
        });
        lock.lock();
        if (soon) continue;
        if (cancelled_.load(std::memory_order_relaxed)) return Status::Cancelled("cancelled");
        if ((chunk = Pick())) break;
        consumer_waiting_ = true;
        {
          BlockedScope blocked(Wait::kInput, spec_.worker_counters);
          cv_consumer_.wait(lock);
        }
        consumer_waiting_ = false;
      }
      // Handed over: the chunk leaves the buffer and frees its slot.
      --in_flight_;
      ready_chunks_.fetch_sub(1, std::memory_order_relaxed);
      done_count_ -= static_cast<int64_t>(chunk->count);
      done_bytes_ -= chunk->bytes;
      Count(&NodeCounters::handoffs, 1);
      if (workers_waiting_ > 0) {
        Count(&NodeCounters::wakeups, 1);
        cv_workers_.notify_one();
      }
    }
    local_ = std::move(chunk);
    pos_ = 0;
    return GetNextInternal(out, end);
  }

  // Tasks for the next chunk, from what tasks cost so far.
  int64_t ChunkTasks() const {
    const int64_t task_ns = task_ns_.load(std::memory_order_relaxed);
    const int64_t task_bytes = task_bytes_.load(std::memory_order_relaxed);
    if (spec_.max_chunk == 1 || task_ns < 0) return 1;  // measure one task first
    int64_t n = std::min(PoolChunkTasks(task_ns, task_bytes), std::max<int64_t>(1, kMaxChunkElements / spec_.pull));
    if (spec_.max_chunk > 0) n = std::min(n, spec_.max_chunk);
    return std::max<int64_t>(1, n);
  }

  // Chunks that may be reserved and not yet handed over: the buffer's
  // capacity, plus one more per worker, so that a worker done early may
  // start its next chunk while the buffer is full. In order, it would
  // otherwise idle until the chunk ahead of its own is taken: measured 44%
  // idle at parallelism 2 on chunked adds, and 20% on JPEG decodes that
  // travel alone, whose cost varies from image to image (the example's
  // rewrite ran 1.24x faster with the extra slots, 2026-12-02). tf.data
  // keeps `capacity` alone and idles so; the buffer stays bounded, by
  // tasks here and by bytes through the chunk caps.
  int64_t Slots() const { return spec_.capacity + spec_.parallelism; }

  // Waits for a free chunk slot and takes it, with a chunk to fill (a
  // recycled one when there is one); null when the worker should leave
  // (cancelled, or the last chunk is already queued).
  std::shared_ptr<Chunk> ReserveSlot() {
    auto lock = LockState();
    while (!cancelled_.load(std::memory_order_relaxed) && !stop_ && in_flight_ >= Slots()) {
      lock.unlock();
      SpinUntil([&] { return in_flight_.load(std::memory_order_relaxed) < Slots(); });
      lock.lock();
      if (cancelled_.load(std::memory_order_relaxed) || stop_ || in_flight_ < Slots()) break;
      ++workers_waiting_;
      {
        BlockedScope blocked(Wait::kOutput, spec_.worker_counters);
        cv_workers_.wait(lock);
      }
      --workers_waiting_;
    }
    if (cancelled_.load(std::memory_order_relaxed) || stop_) return nullptr;
    ++in_flight_;
    if (free_.empty()) return std::make_shared<Chunk>();
    std::shared_ptr<Chunk> chunk = std::move(free_.back());
    free_.pop_back();
    return chunk;
  }

  // Returns a drained chunk to the free list, its results left as spares.
  // Requires mu_.
  void Recycle(std::shared_ptr<Chunk> chunk) {
    chunk->status = Status::OK();
    chunk->end = false;
    chunk->bytes = 0;
    chunk->count = 0;
    chunk->done = false;
    chunk->ready.store(false, std::memory_order_relaxed);
    free_.push_back(std::move(chunk));
  }

  // Takes mu_, spinning briefly before sleeping on it: it is held for a
  // few hundred nanoseconds at a time, and with three threads on two cores
  // a plain lock put the loser to sleep (a futex wait and a wake-up) about
  // once per hand-off in the cached example's rewrite.
  std::unique_lock<std::mutex> LockState() {
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    if (!lock.try_lock() && !SpinUntil([&] { return lock.try_lock(); })) lock.lock();
    return lock;
  }

  // Takes the input lock, counting the time spent waiting for it when
  // another worker holds it.
  std::unique_lock<std::mutex> LockInput() {
    std::unique_lock<std::mutex> in_lock(input_mu_, std::defer_lock);
    if (in_lock.try_lock()) return in_lock;
    const int64_t t0 = MonoNanos();
    if (!SpinUntil([&] { return in_lock.try_lock(); })) {
      BlockedScope blocked(Wait::kInput, spec_.worker_counters);
      in_lock.lock();
    }
    Count(&NodeCounters::input_lock_wait_ns, MonoNanos() - t0);
    return in_lock;
  }

  void WorkerLoop() {
    WorkerScope scope(spec_.worker_counters);
    // Each task's inputs, reused from chunk to chunk: the input refills
    // them in place (see Chunk).
    std::vector<std::vector<Element>> inputs;
    while (true) {
      std::shared_ptr<Chunk> chunk = ReserveSlot();
      if (!chunk) return;
      Status input_status;
      size_t tasks = 0;
      uint64_t first_index = 0;
      int64_t t0 = 0;
      {
        auto in_lock = LockInput();
        if (input_ended_) {
          // Someone else already queued the last chunk.
          auto lock = LockState();
          --in_flight_;
          stop_ = true;
          cv_workers_.notify_all();
          return;
        }
        t0 = MonoNanos();
        const auto want = static_cast<size_t>(ChunkTasks());
        if (inputs.size() < want) inputs.resize(want);
        first_index = next_index_;
        const auto pull = static_cast<size_t>(spec_.pull);
        for (; tasks < want && !input_ended_; ++tasks) {
          std::vector<Element>& in = inputs[tasks];
          if (in.size() < pull) in.resize(pull);
          size_t got = 0;
          for (; got < pull; ++got) {
            bool end = false;
            Status s = input_->GetNext(&in[got], &end);
            if (!s.ok()) input_status = s;
            if (!s.ok() || end) {
              input_ended_ = true;
              break;
            }
          }
          if (!input_status.ok()) break;  // a partial task before an error is dropped
          if (input_ended_) {
            in.resize(got);
            const bool runs = got > 0 && (got == pull || spec_.keep_partial);
            if (runs) ++tasks;
            break;
          }
        }
        next_index_ += tasks;
        chunk->end = input_ended_;
        auto lock = LockState();
        pending_.push_back(chunk);
        if (input_ended_) {
          stop_ = true;
          cv_workers_.notify_all();
        }
      }
      Status status;
      if (chunk->results.size() < tasks) chunk->results.resize(tasks);
      size_t i = 0, kept = 0;
      for (; i < tasks; ++i) {
        if (cancelled_.load(std::memory_order_relaxed)) {
          status = Status::Cancelled("cancelled");
          break;
        }
        Element& out = chunk->results[kept];
        status = spec_.work(inputs[i], first_index + i, &out);
        if (!status.ok()) break;
        if (spec_.keep) {
          auto keep = spec_.keep(out, first_index + i);
          if (!keep.ok()) {
            status = keep.status();
            break;
          }
          if (!*keep) continue;  // `out` stays a spare for the next task
        }
        chunk->bytes += static_cast<int64_t>(ElementBytes(out));
        ++kept;
      }
      chunk->count = kept;
      chunk->status = status.ok() ? input_status : status;
      if (!status.ok()) chunk->end = true;
      if (tasks > 0 && status.ok()) Learn(t0, tasks, chunk->bytes);
      Publish(chunk);
    }
  }

  // Updates the cost estimates from a chunk that pulled and ran `tasks`
  // tasks since t0: a running mean, so that one preempted chunk does not
  // swing the size of the next ones. Not under the input lock: the other
  // worker holds that while it pulls a whole chunk (a copy of megabytes out
  // of a cache), and this worker slept on it once per chunk. Two workers
  // learning at once may lose one of the two updates, which an estimate
  // can afford.
  void Learn(int64_t t0, size_t tasks, int64_t bytes) {
    const int64_t per_task = (MonoNanos() - t0) / static_cast<int64_t>(tasks);
    const int64_t bytes_per_task = bytes / static_cast<int64_t>(tasks);
    const int64_t task_ns = task_ns_.load(std::memory_order_relaxed);
    const int64_t task_bytes = task_bytes_.load(std::memory_order_relaxed);
    task_ns_.store(task_ns < 0 ? per_task : (3 * task_ns + per_task) / 4, std::memory_order_relaxed);
    task_bytes_.store(task_bytes <= 0 ? bytes_per_task : (3 * task_bytes + bytes_per_task) / 4,
                      std::memory_order_relaxed);
  }

  // Adds to one of the node's hand-off counters; nothing when tracing is
  // off. Called per chunk, so a shared atomic costs nothing per element.
  void Count(std::atomic<int64_t> NodeCounters::*counter, int64_t v) {
    if (spec_.worker_counters) NodeCounters::Add(spec_.worker_counters->*counter, v);
  }

  void Publish(const std::shared_ptr<Chunk>& chunk) {
    auto lock = LockState();
    chunk->done = true;
    chunk->ready.store(true, std::memory_order_release);
    ready_chunks_.fetch_add(1, std::memory_order_release);
    done_count_ += static_cast<int64_t>(chunk->count);
    done_bytes_ += chunk->bytes;
    if (spec_.counters) spec_.counters->ObserveBuffer(done_count_, done_bytes_);
    if (consumer_waiting_ && Takeable(*chunk)) {
      Count(&NodeCounters::wakeups, 1);
      cv_consumer_.notify_one();
    }
  }

  std::unique_ptr<Iterator> input_;
  OrderedPoolSpec spec_;
  std::vector<PooledThread> workers_;

  // The consumer's own: the chunk it drains and its position in it.
  std::shared_ptr<Chunk> local_;
  size_t pos_ = 0;
  bool finished_ = false;
  Status final_;

  std::mutex input_mu_;  // taken before mu_, never while holding it
  bool input_ended_ = false;
  uint64_t next_index_ = 0;
  std::atomic<int64_t> task_ns_{-1};   // mean time to pull and run one task; -1 unknown
  std::atomic<int64_t> task_bytes_{0};  // mean result bytes of one task

  std::mutex mu_;
  std::condition_variable cv_consumer_;
  std::condition_variable cv_workers_;
  bool started_ = false;
  std::atomic<bool> cancelled_{false};  // written under mu_
  bool stop_ = false;                   // the last chunk is queued: workers may leave
  bool consumer_waiting_ = false;
  int workers_waiting_ = 0;
  std::atomic<int64_t> in_flight_{0};  // chunks reserved and not handed over; written under mu_
  std::atomic<int64_t> ready_chunks_{0};
  int64_t done_count_ = 0;
  int64_t done_bytes_ = 0;
  std::deque<std::shared_ptr<Chunk>> pending_;  // in sequence order
  std::vector<std::shared_ptr<Chunk>> free_;    // drained chunks, for reuse
};

}  // namespace

std::unique_ptr<Iterator> MakeOrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec) {
  return std::make_unique<OrderedPoolIterator>(std::move(input), std::move(spec));
}

}  // namespace plumber::runtime
