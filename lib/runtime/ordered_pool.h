// The worker pool behind parallel map and parallel batch: workers take
// turns pulling from the input (in input order), transform what they pulled
// outside any lock, and hand the results to the consumer, which gets them
// in input order (or, when not deterministic, as soon as any are ready).
// Each task (one map element, one batch) gets the index of its position in
// the input, so random ops draw the same numbers whatever the parallelism
// and however tasks are grouped.
//
// Tasks move between threads in chunks of consecutive tasks: a hand-off
// (a lock round and often a thread wake-up) costs microseconds, which a
// cheap task such as an add cannot pay on its own. The pool times its tasks
// and sizes each chunk so that its hand-off stays a small fraction of the
// chunk's work; tasks that cost that much alone go one at a time. Chunks
// and the elements in them are recycled, so that a cheap task allocates
// nothing per element.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/dataset.h"

namespace plumber::runtime {

struct OrderedPoolSpec {
  int parallelism = 1;
  // Chunks in flight or finished and not yet handed to the consumer, as
  // tf.data counts its buffer; each worker may hold one more (Slots in
  // ordered_pool.cc). A chunk is one task when tasks are costly; cheap
  // tasks are grouped, each chunk bounded in bytes.
  int64_t capacity = 1;
  // Input elements per task.
  int64_t pull = 1;
  // Whether a last, short task (fewer than `pull` elements) still runs.
  bool keep_partial = true;
  bool deterministic = true;
  // Most tasks in one chunk; 0 lets the pool choose. 1 hands every task
  // over on its own (the hand-off calibration measures that price).
  int64_t max_chunk = 0;
  // Buffer peaks are recorded here (may be null).
  NodeCounters* counters = nullptr;
  // Worker threads charge their CPU here, and the hand-off counters
  // (handoffs, wakeups, input_lock_wait_ns) go here; null when tracing is
  // off.
  NodeCounters* worker_counters = nullptr;
  // The transformation: inputs (1..pull elements) and the task's index.
  // *out holds a spare element on entry (chunks are recycled, see
  // ordered_pool.cc) which the work must replace entirely; it may reuse its
  // buffers, and may swap the inputs' elements out (the map does: the spare
  // then becomes the slot the next input is pulled into).
  std::function<Status(std::vector<Element>& inputs, uint64_t index, Element* out)> work;
  // When set, each result is tested after `work`, on the worker, and a
  // result it rejects is dropped there (a map's fused filter): it is never
  // handed over, and the next result reuses its slot. An error stops the
  // pool as one from `work` does.
  std::function<StatusOr<bool>(const Element& result, uint64_t index)> keep;
};

std::unique_ptr<Iterator> MakeOrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec);

}  // namespace plumber::runtime
