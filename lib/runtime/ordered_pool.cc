// The ordered worker pool (see ordered_pool.h).
#include "runtime/ordered_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace plumber::runtime {
namespace {

class OrderedPoolIterator final : public Iterator {
 public:
  OrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec)
      : input_(std::move(input)), spec_(std::move(spec)) {}
  ~OrderedPoolIterator() override { Close(); }

  Status GetNext(Element* out, bool* end) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!started_) {
      started_ = true;
      for (int i = 0; i < spec_.parallelism; ++i) workers_.emplace_back([this] { WorkerLoop(); });
    }
    if (finished_) {
      *end = final_.ok();
      return final_;
    }
    std::shared_ptr<Task> task;
    while (true) {
      if (cancelled_) return Status::Cancelled("cancelled");
      task = Pick();
      if (task) break;
      BlockedScope blocked(Wait::kInput, spec_.worker_counters);
      cv_.wait(lock);
    }
    --reserved_;
    if (!task->end && task->status.ok()) {
      --done_count_;
      done_bytes_ -= task->bytes;
    }
    cv_.notify_all();
    if (task->end || !task->status.ok()) {
      finished_ = true;
      final_ = task->status;
      *end = final_.ok();
      return final_;
    }
    *out = std::move(task->value);
    *end = false;
    return Status::OK();
  }

  void Cancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    cv_.notify_all();
    input_->Cancel();
  }

  void Close() override {
    Cancel();
    for (auto& t : workers_) t.join();
    workers_.clear();
    input_->Close();
  }

 private:
  struct Task {
    bool done = false;
    bool end = false;  // no more results after this one
    Status status;
    Element value;
    int64_t bytes = 0;
  };

  // The task to hand out next, or null. Requires mu_.
  std::shared_ptr<Task> Pick() {
    if (results_.empty()) return nullptr;
    if (spec_.deterministic || results_.front()->end || !results_.front()->status.ok()) {
      if (!results_.front()->done) {
        if (spec_.deterministic) return nullptr;
      } else {
        auto t = results_.front();
        results_.pop_front();
        return t;
      }
    }
    // Any finished result, keeping end and errors last.
    for (auto it = results_.begin(); it != results_.end(); ++it) {
      if ((*it)->done && !(*it)->end && (*it)->status.ok()) {
        auto t = *it;
        results_.erase(it);
        return t;
      }
    }
    return nullptr;
  }

  void WorkerLoop() {
    WorkerScope scope(spec_.worker_counters);
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        while (!cancelled_ && !stop_ && reserved_ >= spec_.capacity) {
          BlockedScope blocked(Wait::kOutput, spec_.worker_counters);
          cv_.wait(lock);
        }
        if (cancelled_ || stop_) return;
        ++reserved_;
      }
      auto task = std::make_shared<Task>();
      std::vector<Element> inputs;
      uint64_t index = 0;
      {
        std::unique_lock<std::mutex> in_lock(input_mu_, std::defer_lock);
        if (!in_lock.try_lock()) {
          BlockedScope blocked(Wait::kInput, spec_.worker_counters);
          in_lock.lock();
        }
        if (input_ended_) {
          // Someone else already queued the last task.
          std::lock_guard<std::mutex> lock(mu_);
          --reserved_;
          stop_ = true;
          cv_.notify_all();
          return;
        }
        index = next_index_++;
        for (int64_t i = 0; i < spec_.pull; ++i) {
          Element e;
          bool end = false;
          Status s = input_->GetNext(&e, &end);
          if (!s.ok()) {
            task->status = s;
            input_ended_ = true;
            break;
          }
          if (end) {
            input_ended_ = true;
            break;
          }
          inputs.push_back(std::move(e));
        }
        const bool runs = task->status.ok() && !inputs.empty() &&
                          (static_cast<int64_t>(inputs.size()) == spec_.pull || spec_.keep_partial);
        if (!runs) {
          task->done = true;
          task->end = task->status.ok();
        }
        std::lock_guard<std::mutex> lock(mu_);
        results_.push_back(task);
        if (task->done) {
          stop_ = true;
          cv_.notify_all();
          return;
        }
        if (input_ended_) {
          // The input is over but this task still runs: queue the end
          // marker behind it, in order.
          auto end_task = std::make_shared<Task>();
          end_task->done = end_task->end = true;
          results_.push_back(end_task);
          ++reserved_;
          stop_ = true;
        }
      }
      Element out;
      Status s = spec_.work(inputs, index, &out);
      std::lock_guard<std::mutex> lock(mu_);
      task->status = s;
      if (s.ok()) {
        task->bytes = static_cast<int64_t>(ElementBytes(out));
        task->value = std::move(out);
        ++done_count_;
        done_bytes_ += task->bytes;
        if (spec_.counters) spec_.counters->ObserveBuffer(done_count_, done_bytes_);
      }
      task->done = true;
      cv_.notify_all();
    }
  }

  std::unique_ptr<Iterator> input_;
  OrderedPoolSpec spec_;
  std::vector<std::thread> workers_;

  std::mutex input_mu_;  // taken before mu_, never while holding it
  bool input_ended_ = false;
  uint64_t next_index_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool cancelled_ = false;
  bool stop_ = false;  // the last task is queued: workers may leave
  bool finished_ = false;
  Status final_;
  int64_t reserved_ = 0;
  int64_t done_count_ = 0;
  int64_t done_bytes_ = 0;
  std::deque<std::shared_ptr<Task>> results_;
};

}  // namespace

std::unique_ptr<Iterator> MakeOrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec) {
  return std::make_unique<OrderedPoolIterator>(std::move(input), std::move(spec));
}

}  // namespace plumber::runtime
