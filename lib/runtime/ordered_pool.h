// The worker pool behind parallel map and parallel batch: workers take
// turns pulling `pull` elements from the input (one at a time, in input
// order), then transform them outside any lock; results wait in a bounded
// buffer and leave it in input order (or, when not deterministic, as soon
// as any is ready). Each task gets the index of its first input element,
// so random ops draw the same numbers whatever the parallelism.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/dataset.h"

namespace plumber::runtime {

struct OrderedPoolSpec {
  int parallelism = 1;
  // Tasks in flight or finished and not yet taken.
  int64_t capacity = 1;
  // Input elements per task.
  int64_t pull = 1;
  // Whether a last, short task (fewer than `pull` elements) still runs.
  bool keep_partial = true;
  bool deterministic = true;
  // Buffer peaks are recorded here.
  NodeCounters* counters = nullptr;
  // Worker threads charge their CPU here; null when tracing is off.
  NodeCounters* worker_counters = nullptr;
  // The transformation: inputs (1..pull elements) and the task's index.
  std::function<Status(std::vector<Element>& inputs, uint64_t index, Element* out)> work;
};

std::unique_ptr<Iterator> MakeOrderedPoolIterator(std::unique_ptr<Iterator> input, OrderedPoolSpec spec);

}  // namespace plumber::runtime
