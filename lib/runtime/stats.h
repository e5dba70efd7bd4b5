// Per-node counters and the thread CPU accounting behind them.
//
// Every node of the program owns one NodeCounters, shared by all of its
// instances (an interleave function is opened once per input element and its
// counters sum over the instances, as the paper aggregates them). Counters
// are relaxed atomics: writers never take a lock, and the snapshot thread
// reads them while the pipeline runs. The per-element counts (elements and
// bytes produced and consumed, wall time) are not written here at all: each
// traced iterator keeps them in its own IterShard, summed at snapshot time.
//
// CPU time, as the paper measures it: thread CPU time is charged to the node
// whose code the thread is running, pausing while a child's Next runs and
// resuming when it returns. Reading CLOCK_THREAD_CPUTIME_ID costs a system
// call, too much for every Next of a tiny op, so each thread records cheap
// monotonic timestamps at every switch between nodes and reads its CPU clock
// only every couple of milliseconds or before it blocks; the CPU time of
// that interval is split among the nodes it ran in proportion to their wall
// time. A thread about to wait (condition variable, sleep, throttle) says so
// with a BlockedScope so that waiting is never mistaken for work, and says
// what it waits for: waiting inside a node's own work (a storage request, a
// remote call) holds a thread without using a core, which the model must
// tell apart from waiting on another thread's elements or for buffer room.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "trace.pb.h"

namespace plumber::runtime {

class NodeCounters;

// The element counts of one traced iterator (one instance of a node), kept
// in the iterator itself: the hot path of a tiny op must not touch memory
// that other threads write, so an element costs an increment of two
// counters in a cache line no other thread writes, and no lock. The node
// sums the shards of its live instances when a snapshot is taken, and
// folds a shard into its own totals when the iterator goes away.
//
// One thread at a time writes a shard (the thread in the iterator's
// GetNext; iterators are called by one thread at a time, and a pool's
// workers take turns on their input under a lock, which orders their
// writes). The snapshot thread reads while it is written, so the counters
// are atomics written with a relaxed load and store, not a read-modify-
// write: on x86 and ARM that is the same plain add a non-atomic counter
// costs, and it keeps ThreadSanitizer informed.
class IterShard {
 public:
  IterShard() = default;
  IterShard(const IterShard&) = delete;
  IterShard& operator=(const IterShard&) = delete;

  // The node this shard counts for (null: untraced) and its consumer's
  // node, charged with the same elements as consumed (null for the root).
  NodeCounters* self = nullptr;
  NodeCounters* parent = nullptr;

  std::atomic<int64_t> produced{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> wall_ns{0};

  void Count(int64_t element_bytes) {
    Bump(produced, 1);
    Bump(bytes, element_bytes);
  }
  static void Bump(std::atomic<int64_t>& c, int64_t v) {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
};

class NodeCounters {
 public:
  explicit NodeCounters(std::string name) : name_(std::move(name)) {}
  NodeCounters(const NodeCounters&) = delete;
  NodeCounters& operator=(const NodeCounters&) = delete;

  const std::string& name() const { return name_; }

  std::atomic<int64_t> elements_produced{0};
  std::atomic<int64_t> elements_consumed{0};
  std::atomic<int64_t> bytes_produced{0};
  std::atomic<int64_t> bytes_consumed{0};
  std::atomic<int64_t> active_cpu_ns{0};
  std::atomic<int64_t> wall_ns{0};
  std::atomic<int64_t> storage_bytes_read{0};
  std::atomic<int64_t> files_opened{0};
  // Wall time of the node's own work (children excluded), running or
  // waiting inside it; wait_ns of it waited (BlockedScope kWork).
  std::atomic<int64_t> self_wall_ns{0};
  std::atomic<int64_t> wait_ns{0};
  // Time threads in this node waited on elements made by another thread,
  // and for room in the node's full buffer.
  std::atomic<int64_t> input_blocked_ns{0};
  std::atomic<int64_t> output_blocked_ns{0};
  // Storage read requests issued for this node and their total latency
  // (from the request until its bytes are in, throttles included).
  std::atomic<int64_t> storage_requests{0};
  std::atomic<int64_t> storage_request_ns{0};
  // Summed over the node's worker threads: time with work in hand (its own
  // waits included) and time with none (input or buffer room unavailable).
  std::atomic<int64_t> worker_busy_ns{0};
  std::atomic<int64_t> worker_idle_ns{0};
  // Pooled stages (ordered_pool.h): chunks handed from workers to the
  // consumer, parked threads woken, and time workers waited for the input
  // lock. Counted per chunk, never per element.
  std::atomic<int64_t> handoffs{0};
  std::atomic<int64_t> wakeups{0};
  std::atomic<int64_t> input_lock_wait_ns{0};
  // Instances opened; a node never opened is left out of snapshots.
  std::atomic<int64_t> instances{0};

  // Static description, set once when the program is built.
  int parallelism = 1;
  int64_t buffer_capacity = 0;
  std::optional<int64_t> cardinality;

  static void Add(std::atomic<int64_t>& c, int64_t v) { c.fetch_add(v, std::memory_order_relaxed); }
  // Raises the buffer peaks to at least these values.
  void ObserveBuffer(int64_t fill, int64_t bytes);
  // A file of `bytes` bytes holding `records` records was read to its end.
  void FileCompleted(int64_t bytes, int64_t records);

  // Adds this node's counters to `out` (which may hold other instances),
  // with the counts of its live instances' shards and of the shards of
  // the inputs it consumes from.
  void Fill(schema::NodeStats* out) const;

  // Registers a traced iterator's shard with its node (shard->self) and
  // its consumer (shard->parent), and, when the iterator goes away, folds
  // its counts into both nodes' totals. Each fold happens under the same
  // lock as the node's Fill, so a snapshot counts every element exactly
  // once. No GetNext of the iterator may run during or after Detach.
  static void Attach(const IterShard* shard);
  static void Detach(const IterShard* shard);

 private:
  std::string name_;
  mutable std::mutex shards_mu_;  // taken once per instance opened or closed, and per snapshot
  std::vector<const IterShard*> own_shards_;    // live instances of this node
  std::vector<const IterShard*> input_shards_;  // live instances of the inputs it consumes
  std::atomic<int64_t> peak_fill_{0};
  std::atomic<int64_t> peak_bytes_{0};
  mutable std::mutex files_mu_;  // file completions are rare; a lock is fine
  int64_t files_completed_ = 0;
  int64_t completed_bytes_ = 0;
  double completed_bytes_sq_ = 0;
  int64_t completed_records_ = 0;
  double completed_records_sq_ = 0;
};

// The counters of every node of one run, by node name. Built before the
// pipeline runs; pointers stay valid for the registry's lifetime.
class StatsRegistry {
 public:
  StatsRegistry() = default;
  StatsRegistry(const StatsRegistry&) = delete;
  StatsRegistry& operator=(const StatsRegistry&) = delete;
  // Settles the destroying thread's pending CPU first: it may still point
  // at these counters (the thread that iterated the program, usually).
  ~StatsRegistry();

  NodeCounters* Get(const std::string& name);  // creates on first use
  const NodeCounters* Find(const std::string& name) const;
  // One NodeStats per node opened at least once, in name order.
  void Fill(schema::Snapshot* snapshot) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<NodeCounters>> nodes_;
};

// Monotonic nanoseconds (vDSO: cheap) and this thread's CPU nanoseconds
// (a system call).
int64_t MonoNanos();
int64_t ThreadCpuNanos();
// What one MonoNanos costs on this machine, measured once (the least of a
// few short trials, so that a busy neighbour does not inflate it): from
// about 20 ns to 100 ns on virtual machines, which sampled timing weighs.
int64_t MonoNanosCost();

namespace cpu {

// Makes `node` (may be null: nobody is charged) the one this thread works
// for and returns the previous one. Used around a child's Next and by
// worker threads when they start.
NodeCounters* SwitchTo(NodeCounters* node, int64_t now = MonoNanos());

// The thread's position: the node charged, how many calls its current
// call stands for, and who is debited for the extrapolation.
struct Frame {
  NodeCounters* node = nullptr;
  int64_t scale = 1;
  NodeCounters* debit = nullptr;
};
// Enters `node` for a call standing for `scale` calls. The `scale - 1`
// calls it stands for but did not time ran inside the calls of the node
// that consumes it, and were charged there: `debit` (its consumer) gives
// that time back. Null debits the node this thread was timing, which is
// the same node unless that consumer's own call went untimed: then it is
// a node further up, and two sampled nodes on one thread charged each
// other's work (an outer map got 3.6 us of a 6 us element whose inner map
// burned 4). Returns the frame to restore with Restore. Sets *settled
// (when given) if it read the thread's CPU clock, a system call whose time
// a caller timing the call from `now` should leave out.
Frame Enter(NodeCounters* node, int64_t scale, int64_t now, bool* settled = nullptr, NodeCounters* debit = nullptr);
void Restore(const Frame& frame, int64_t now);
// Restore, for a sampled call that took long (preempted, or a rare slow
// path): its last stretch counts once, and the calls it stands for are
// charged `extrapolated` nanoseconds of weight (their typical cost) instead
// of the stretch times the scale. Without it, one 5 ms preemption of a
// 100 ns call timed one in 128 weighed as 640 ms of work in the split of
// its thread's CPU.
void RestoreAfterSlowCall(const Frame& frame, int64_t now, int64_t extrapolated);
// Charges everything pending on this thread; called when a thread ends
// and before a snapshot of the calling thread matters.
void Flush();

// The clock the threads' CPU split reads: ThreadCpuNanos unless a test
// swaps it (a slow fake shows whose frame a settlement's time lands in).
// Returns the clock it replaces; safe to call while threads run.
using CpuClock = int64_t (*)();
CpuClock SetCpuClockForTesting(CpuClock clock);

}  // namespace cpu

// What a blocked thread waits for.
enum class Wait {
  // Inside the node's own work, on something outside the process: a storage
  // request, a throttle, a sleep or remote call in a UDF. It holds a thread
  // but no core: the node's wait_ns and self_wall_ns.
  kWork,
  // For an element another thread makes (a prefetch's consumer on an empty
  // buffer, a pool's consumer on its next result, a worker on the input
  // lock): the node's input_blocked_ns.
  kInput,
  // For room in the node's own full buffer, or for any work at all (a
  // producer or worker thread ahead of its consumer): output_blocked_ns.
  kOutput,
};

// While alive, the calling thread is waiting, not working: its CPU clock is
// settled before and restarted after, so no node is charged CPU for the
// wait, and the wall time of the wait goes to `node`'s counter for `kind`
// (and, on a worker thread, to its idle time unless kind is kWork). A null
// node (tracing off, or an uncounted reader) counts nothing.
class BlockedScope {
 public:
  BlockedScope(Wait kind, NodeCounters* node);
  ~BlockedScope();
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  Wait kind_;
  NodeCounters* node_;
  int64_t start_ = 0;
};

// Makes a worker thread charge its work to `node` until the scope ends,
// then settles the thread's CPU clock; meanwhile its busy and idle time go
// to the node's worker counters. A null node (tracing off) does nothing, so
// untraced runs never touch the CPU clock.
class WorkerScope {
 public:
  explicit WorkerScope(NodeCounters* node);
  ~WorkerScope();
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;

 private:
  bool active_;
  NodeCounters* previous_ = nullptr;
  NodeCounters* previous_worker_ = nullptr;
};

// The node this thread works for now (null: none, or tracing off). A UDF
// that waits charges the wait here: it runs inside its map's work.
NodeCounters* CurrentNode();

}  // namespace plumber::runtime
