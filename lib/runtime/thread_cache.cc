// The process's cache of worker threads (thread_cache.h). Tasks wait in one
// queue; an idle thread takes the oldest. A thread is created only when no
// idle thread is left to take a new task, so a pool that is reopened finds
// the threads its previous instance left.
#include "runtime/thread_cache.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace plumber::runtime {

struct PooledThread::Task {
  std::function<void()> fn;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

namespace {

// Long enough to outlast the gap between two epochs of any pipeline here,
// short enough that a finished run does not keep hundreds of idle threads.
constexpr auto kIdleExit = std::chrono::seconds(2);

class ThreadCache {
 public:
  void Start(const std::shared_ptr<PooledThread::Task>& task) {
    bool spawn = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back(task);
      ++running_;
      // Idle threads not yet claimed by an earlier Start take this task;
      // otherwise it needs a thread of its own.
      if (idle_ >= static_cast<int>(pending_.size())) {
        cv_.notify_one();
      } else {
        spawn = true;
        ++threads_;
        ++created_;
      }
    }
    if (spawn) {
      try {
        std::thread([this] { Loop(); }).detach();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        --threads_;
        --created_;
        --running_;
        // No thread took it: idle ones were all claimed by earlier tasks.
        pending_.erase(std::find(pending_.begin(), pending_.end(), task));
        throw;
      }
    }
  }

  int running() {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
  }
  int threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }
  int64_t created() {
    std::lock_guard<std::mutex> lock(mu_);
    return created_;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    ++idle_;
    while (true) {
      if (!cv_.wait_for(lock, kIdleExit, [this] { return !pending_.empty(); })) {
        --idle_;
        --threads_;
        return;
      }
      --idle_;
      std::shared_ptr<PooledThread::Task> task = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      task->fn();
      task->fn = nullptr;  // the task's captures go before its joiner returns
      // Idle again before the joiner hears of it: a pool reopened right
      // after its last one was joined then finds every thread it left.
      lock.lock();
      --running_;
      ++idle_;
      lock.unlock();
      {
        std::lock_guard<std::mutex> done_lock(task->mu);
        task->done = true;
      }
      task->cv.notify_all();
      task.reset();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<PooledThread::Task>> pending_;
  int idle_ = 0;
  int threads_ = 0;
  int running_ = 0;
  int64_t created_ = 0;
};

// Never destroyed: its threads may still be parked in it while the process
// exits, after static destructors have run.
ThreadCache& Cache() {
  static ThreadCache* cache = new ThreadCache;
  return *cache;
}

}  // namespace

PooledThread::PooledThread(std::function<void()> task) : task_(std::make_shared<Task>()) {
  task_->fn = std::move(task);
  Cache().Start(task_);
}

PooledThread& PooledThread::operator=(PooledThread&& other) noexcept {
  if (this != &other) {
    if (joinable()) join();
    task_ = std::move(other.task_);
  }
  return *this;
}

PooledThread::~PooledThread() {
  if (joinable()) join();
}

void PooledThread::join() {
  {
    std::unique_lock<std::mutex> lock(task_->mu);
    task_->cv.wait(lock, [this] { return task_->done; });
  }
  task_.reset();
}

int RunningPooledTasks() { return Cache().running(); }
int CachedThreads() { return Cache().threads(); }
int64_t ThreadsCreated() { return Cache().created(); }

}  // namespace plumber::runtime
