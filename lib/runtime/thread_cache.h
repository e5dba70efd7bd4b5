// Worker threads for the runtime's pools, kept between uses. A pool below a
// repeat is closed and opened again every epoch; creating and joining 64
// threads cost about 3 ms an epoch on the 2-core VMs this runs on (timed
// 2026-12-02 in the latency example, whose epoch at 64 readers is ~19 ms).
// A PooledThread runs its task on a thread that finished an earlier task,
// or on a new one; a thread with no task for kIdleExit exits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace plumber::runtime {

// Like std::thread, for one task: movable, not copyable; join() waits for
// the task to return (the thread itself goes back to the cache). Unlike
// std::thread, destroying a joinable PooledThread joins it.
class PooledThread {
 public:
  PooledThread() = default;
  // Runs `task` on a cached thread, or a new one when none is idle. A new
  // thread that cannot be created throws std::system_error, as std::thread.
  explicit PooledThread(std::function<void()> task);
  PooledThread(PooledThread&&) noexcept = default;
  PooledThread& operator=(PooledThread&& other) noexcept;
  PooledThread(const PooledThread&) = delete;
  PooledThread& operator=(const PooledThread&) = delete;
  ~PooledThread();

  bool joinable() const { return task_ != nullptr; }
  // Waits until the task has returned. Requires joinable(); after it,
  // joinable() is false. What the task wrote happens-before the return.
  void join();

  // The task and its completion, shared with the thread that runs it.
  struct Task;

 private:
  std::shared_ptr<Task> task_;
};

// Tasks started and not yet returned, process-wide: what a test counts
// where it would count the process's threads.
int RunningPooledTasks();
// Threads the cache holds, idle or running a task.
int CachedThreads();
// Threads the cache has created since the process started.
int64_t ThreadsCreated();

}  // namespace plumber::runtime
