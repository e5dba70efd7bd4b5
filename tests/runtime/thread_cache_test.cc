// The pools' thread cache (runtime/thread_cache.h): every task gets a
// thread even when all of them wait on each other, join waits for the
// task, and a pool reopened after another closed reuses its threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "runtime/thread_cache.h"

namespace plumber::runtime {
namespace {

TEST_CASE("thread cache: tasks that wait on each other all run at once", "[thread_cache]") {
  // 24 tasks that each wait until all 24 have started and the test lets
  // them go: a cache that queued a task behind a busy thread would hang.
  constexpr int kTasks = 24;
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  bool release = false;
  std::vector<PooledThread> threads;
  for (int i = 0; i < kTasks; ++i) {
    threads.emplace_back([&] {
      std::unique_lock<std::mutex> lock(mu);
      ++started;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started == kTasks; });
    CHECK(RunningPooledTasks() == kTasks);
    release = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  CHECK(RunningPooledTasks() == 0);
  for (auto& t : threads) CHECK_FALSE(t.joinable());
}

TEST_CASE("thread cache: join returns after the task, and what it wrote is seen", "[thread_cache]") {
  int value = 0;
  PooledThread t([&] { value = 42; });
  CHECK(t.joinable());
  t.join();
  CHECK(value == 42);  // a data race here is what ThreadSanitizer would flag
  CHECK_FALSE(t.joinable());
}

TEST_CASE("thread cache: a pool opened again reuses the threads of the last", "[thread_cache]") {
  // A pool of 8 tasks that all wait for each other: 8 threads exist after.
  auto run_pool = [](bool meet) {
    std::mutex mu;
    std::condition_variable cv;
    int started = 0;
    std::vector<PooledThread> pool;
    for (int i = 0; i < 8; ++i) {
      pool.emplace_back([&] {
        std::unique_lock<std::mutex> lock(mu);
        ++started;
        cv.notify_all();
        if (meet) cv.wait(lock, [&] { return started == 8; });
      });
    }
    for (auto& t : pool) t.join();
    return started;
  };
  REQUIRE(run_pool(true) == 8);
  CHECK(CachedThreads() >= 8);
  const int64_t created = ThreadsCreated();
  // Eight more epochs of the same pool, each closed before the next: every
  // task runs on a thread an earlier one left (a thread idle for seconds
  // would exit, which these milliseconds do not allow).
  for (int epoch = 0; epoch < 8; ++epoch) REQUIRE(run_pool(epoch % 2 == 0) == 8);
  CHECK(ThreadsCreated() == created);
  CHECK(RunningPooledTasks() == 0);
}

TEST_CASE("thread cache: destroying or replacing a running thread joins it", "[thread_cache]") {
  std::atomic<int> done{0};
  {
    PooledThread t([&] { done.fetch_add(1); });
  }
  CHECK(done.load() == 1);
  PooledThread a([&] { done.fetch_add(1); });
  a = PooledThread([&] { done.fetch_add(1); });
  CHECK(done.load() >= 2);  // the first task was joined by the assignment
  a.join();
  CHECK(done.load() == 3);
}

}  // namespace
}  // namespace plumber::runtime
