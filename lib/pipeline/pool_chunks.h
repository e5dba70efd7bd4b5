// How many tasks the ordered worker pool puts in one chunk, given what a
// task costs. The runtime's pool sizes its chunks by this rule, and the
// rewrite's model prices a pool's hand-offs per chunk by the same rule, so
// the two cannot drift apart: the image example's decode (602 kB elements,
// about 470 us each) travels one element a chunk because of the byte cap,
// where the work target alone would say two.
#pragma once

#include <algorithm>
#include <cstdint>

namespace plumber {

// Work a chunk is sized to: fifty to a hundred times the CPU of a hand-off
// with a wake-up.
inline constexpr int64_t kChunkWorkNs = 1'000'000;
// Caps, so that a chunk of a very cheap op does not grow without bound (at
// 50 ns a task the work target alone would allow 10000 tasks). Measured on
// range -> map(add) at parallelism 2: 1024 tasks still paid a context
// switch every ~50 us; beyond ~2048 the chunk's elements no longer stay in
// cache between the pull and the work, and it got no faster.
inline constexpr int64_t kMaxChunkTasks = 2048;
inline constexpr int64_t kMaxChunkBytes = 1 << 20;  // result bytes per chunk

// Tasks per chunk for tasks of `task_ns` wall nanoseconds (waiting
// included) making `task_bytes` bytes each (0: unknown). At least one.
inline int64_t PoolChunkTasks(int64_t task_ns, int64_t task_bytes) {
  int64_t n = std::min(kChunkWorkNs / std::max<int64_t>(1, task_ns), kMaxChunkTasks);
  if (task_bytes > 0) n = std::min(n, kMaxChunkBytes / task_bytes);
  return std::max<int64_t>(1, n);
}

}  // namespace plumber
