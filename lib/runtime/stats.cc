// Node counters, the registry, and the per-thread CPU split (see stats.h).
#include "runtime/stats.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

namespace plumber::runtime {

void NodeCounters::ObserveBuffer(int64_t fill, int64_t bytes) {
  auto raise = [](std::atomic<int64_t>& a, int64_t v) {
    int64_t cur = a.load(std::memory_order_relaxed);
    while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  };
  raise(peak_fill_, fill);
  raise(peak_bytes_, bytes);
}

void NodeCounters::FileCompleted(int64_t bytes, int64_t records) {
  std::lock_guard<std::mutex> lock(files_mu_);
  ++files_completed_;
  completed_bytes_ += bytes;
  completed_bytes_sq_ += static_cast<double>(bytes) * static_cast<double>(bytes);
  completed_records_ += records;
  completed_records_sq_ += static_cast<double>(records) * static_cast<double>(records);
}

void NodeCounters::Attach(const IterShard* shard) {
  {
    std::lock_guard<std::mutex> lock(shard->self->shards_mu_);
    shard->self->own_shards_.push_back(shard);
  }
  if (shard->parent) {
    std::lock_guard<std::mutex> lock(shard->parent->shards_mu_);
    shard->parent->input_shards_.push_back(shard);
  }
}

void NodeCounters::Detach(const IterShard* shard) {
  auto get = [](const std::atomic<int64_t>& a) { return a.load(std::memory_order_relaxed); };
  auto remove = [shard](std::vector<const IterShard*>& v) {
    auto it = std::find(v.begin(), v.end(), shard);
    if (it != v.end()) {
      *it = v.back();
      v.pop_back();
    }
  };
  {
    NodeCounters* self = shard->self;
    std::lock_guard<std::mutex> lock(self->shards_mu_);
    Add(self->elements_produced, get(shard->produced));
    Add(self->bytes_produced, get(shard->bytes));
    Add(self->wall_ns, get(shard->wall_ns));
    remove(self->own_shards_);
  }
  if (NodeCounters* parent = shard->parent) {
    std::lock_guard<std::mutex> lock(parent->shards_mu_);
    Add(parent->elements_consumed, get(shard->produced));
    Add(parent->bytes_consumed, get(shard->bytes));
    remove(parent->input_shards_);
  }
}

void NodeCounters::Fill(schema::NodeStats* out) const {
  auto get = [](const std::atomic<int64_t>& a) { return a.load(std::memory_order_relaxed); };
  out->set_name(name_);
  {
    // The totals of instances gone and the shards of those alive, under
    // the lock Detach folds under: each element is counted once.
    std::lock_guard<std::mutex> lock(shards_mu_);
    int64_t produced = get(elements_produced), bytes = get(bytes_produced), wall = get(wall_ns);
    for (const IterShard* s : own_shards_) {
      produced += get(s->produced);
      bytes += get(s->bytes);
      wall += get(s->wall_ns);
    }
    int64_t consumed = get(elements_consumed), consumed_bytes = get(bytes_consumed);
    for (const IterShard* s : input_shards_) {
      consumed += get(s->produced);
      consumed_bytes += get(s->bytes);
    }
    out->set_elements_produced(produced);
    out->set_elements_consumed(consumed);
    out->set_bytes_produced(bytes);
    out->set_bytes_consumed(consumed_bytes);
    out->set_wall_ns(wall);
  }
  out->set_active_cpu_ns(get(active_cpu_ns));
  out->set_parallelism(parallelism);
  out->set_buffer_capacity(buffer_capacity);
  out->set_buffer_peak_fill(get(peak_fill_));
  out->set_peak_buffered_bytes(get(peak_bytes_));
  out->set_storage_bytes_read(get(storage_bytes_read));
  out->set_files_opened(get(files_opened));
  out->set_self_wall_ns(get(self_wall_ns));
  out->set_wait_ns(get(wait_ns));
  out->set_input_blocked_ns(get(input_blocked_ns));
  out->set_output_blocked_ns(get(output_blocked_ns));
  out->set_storage_requests(get(storage_requests));
  out->set_storage_request_ns(get(storage_request_ns));
  out->set_worker_busy_ns(get(worker_busy_ns));
  out->set_worker_idle_ns(get(worker_idle_ns));
  out->set_handoffs(get(handoffs));
  out->set_wakeups(get(wakeups));
  out->set_input_lock_wait_ns(get(input_lock_wait_ns));
  {
    std::lock_guard<std::mutex> lock(files_mu_);
    out->set_files_completed(files_completed_);
    out->set_completed_file_bytes(completed_bytes_);
    out->set_completed_file_bytes_sq(completed_bytes_sq_);
    out->set_completed_file_records(completed_records_);
    out->set_completed_file_records_sq(completed_records_sq_);
  }
  if (cardinality) out->set_cardinality(*cardinality);
}

StatsRegistry::~StatsRegistry() { cpu::Flush(); }

NodeCounters* StatsRegistry::Get(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = nodes_[name];
  if (!slot) slot = std::make_unique<NodeCounters>(name);
  return slot.get();
}

const NodeCounters* StatsRegistry::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void StatsRegistry::Fill(schema::Snapshot* snapshot) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, counters] : nodes_) {
    if (counters->instances.load(std::memory_order_relaxed) == 0) continue;
    counters->Fill(snapshot->add_nodes());
  }
}

int64_t MonoNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t MonoNanosCost() {
  static const int64_t cost = [] {
    int64_t best = 1'000'000;
    for (int trial = 0; trial < 5; ++trial) {
      constexpr int kReads = 64;
      const int64_t t0 = MonoNanos();
      int64_t last = t0;
      for (int i = 0; i < kReads; ++i) last = MonoNanos();
      best = std::min(best, (last - t0) / kReads);
    }
    return std::max<int64_t>(1, best);
  }();
  return cost;
}

namespace cpu {
namespace {

std::atomic<CpuClock> g_cpu_clock{&ThreadCpuNanos};
int64_t ReadCpuClock() { return g_cpu_clock.load(std::memory_order_relaxed)(); }

// Settle the CPU clock at least this often, so that preemption in the
// middle of one node's work cannot shift much CPU time onto its neighbours.
constexpr int64_t kSettleEveryNs = 2'000'000;
constexpr size_t kMaxPending = 16;

struct Pending {
  NodeCounters* node;
  int64_t weight;
};

// Per-thread state. Nodes are charged at Settle; in between, only wall
// time per node is collected (scaled for sampled calls, see stats.h).
struct ThreadState {
  bool started = false;
  Frame current;
  int64_t last_mono = 0;
  int64_t cpu_base = 0;
  int64_t interval_wall = 0;
  size_t n_pending = 0;
  std::array<Pending, kMaxPending> pending;
  // A worker thread's node (WorkerScope), and when its busy time was last
  // published.
  NodeCounters* worker = nullptr;
  int64_t worker_mark = 0;

  void PublishBusy(int64_t now) {
    if (worker == nullptr) return;
    NodeCounters::Add(worker->worker_busy_ns, std::max<int64_t>(0, now - worker_mark));
    worker_mark = now;
  }

  void Start() {
    started = true;
    cpu_base = ReadCpuClock();
    last_mono = MonoNanos();
  }

  void AddWeight(NodeCounters* node, int64_t w) {
    for (size_t i = 0; i < n_pending; ++i) {
      if (pending[i].node == node) {
        pending[i].weight += w;
        return;
      }
    }
    if (n_pending == kMaxPending) Settle();
    if (n_pending == kMaxPending) Settle(/*keep_debts=*/false);  // all debts: forgive them rather than overflow
    pending[n_pending++] = {node, w};
  }

  // Charges the wall time since the last switch to the current frame. A
  // `now` read before the mark (a caller's, taken before the thread's first
  // clock read) leaves the mark alone: moved back, it charged that read to
  // the next frame (1 ms of a 1 ms fake read to the batch a run started in).
  void Accrue(int64_t now) {
    const int64_t dt = now - last_mono;
    if (dt <= 0) return;
    last_mono = now;
    interval_wall += dt;
    AddWeight(current.node, dt * current.scale);
    if (current.scale > 1) AddWeight(current.debit, -dt * (current.scale - 1));
  }

  // Settles when kSettleEveryNs of wall time has accrued since the last
  // settlement; returns whether it did. The settlement's system call is
  // nobody's work: counted from `now`, it was the first stretch of the
  // frame current next, weighed times its scale (one preempted clock read
  // inside a call timed one in 8192 weighed 600 ms, and as a debt of its
  // consumer outlived the run); after a call it ran in the caller's frame
  // (a repeat over a 1 ms map was charged 1.5 us an element for it).
  bool SettleIfDue(int64_t now) {
    if (interval_wall < kSettleEveryNs) return false;
    Settle();
    PublishBusy(now);
    last_mono = MonoNanos();
    return true;
  }

  // Splits the CPU time since the last settlement among the nodes by
  // weight. Time spent with no current node (the consumer's own loop)
  // takes its share too, which is then dropped. A weight debited below
  // zero by sampling counts as zero here, and the debt stays pending for
  // the next settlement unless `keep_debts` is false (the thread or run
  // ends, and its nodes may go away). A sampled node and the node it
  // debits are each timed a few times per settlement at most, so inside
  // one settlement the debit often comes before the credit it balances;
  // dropping it handed that time to the node that ran untimed (the
  // batch above two sampled maps got 11% of the thread).
  void Settle(bool keep_debts = true) {
    const int64_t now_cpu = ReadCpuClock();
    const int64_t cpu = now_cpu - cpu_base;
    cpu_base = now_cpu;
    double total = 0;
    for (size_t i = 0; i < n_pending; ++i) total += static_cast<double>(std::max<int64_t>(0, pending[i].weight));
    if (total > 0 && cpu > 0) {
      const double per_weight = static_cast<double>(cpu) / total;
      for (size_t i = 0; i < n_pending; ++i) {
        if (pending[i].node && pending[i].weight > 0) {
          NodeCounters::Add(pending[i].node->active_cpu_ns,
                            std::llround(per_weight * static_cast<double>(pending[i].weight)));
        }
      }
    }
    size_t debts = 0;
    for (size_t i = 0; i < n_pending; ++i) {
      if (pending[i].node && pending[i].weight > 0) NodeCounters::Add(pending[i].node->self_wall_ns, pending[i].weight);
      if (keep_debts && pending[i].node && pending[i].weight < 0) pending[debts++] = pending[i];
    }
    n_pending = debts;
    interval_wall = 0;
  }
};

thread_local ThreadState t_state;

}  // namespace

Frame Enter(NodeCounters* node, int64_t scale, int64_t now, bool* settled, NodeCounters* debit) {
  ThreadState& s = t_state;
  const bool starting = !s.started;
  if (starting) s.Start();
  s.Accrue(now);
  Frame previous = s.current;
  s.current = Frame{node, scale, debit != nullptr ? debit : previous.node};
  const bool settling = s.SettleIfDue(now);
  if (settled) *settled = starting || settling;
  return previous;
}

void Restore(const Frame& frame, int64_t now) {
  ThreadState& s = t_state;
  s.Accrue(now);
  s.current = frame;
  s.SettleIfDue(now);
}

void RestoreAfterSlowCall(const Frame& frame, int64_t now, int64_t extrapolated) {
  ThreadState& s = t_state;
  s.current.scale = 1;
  s.Accrue(now);
  s.AddWeight(s.current.node, extrapolated);
  s.AddWeight(s.current.debit, -extrapolated);
  s.current = frame;
  s.SettleIfDue(now);
}

NodeCounters* SwitchTo(NodeCounters* node, int64_t now) {
  ThreadState& s = t_state;
  if (!s.started) s.Start();
  NodeCounters* previous = s.current.node;
  Restore(Frame{node, 1, nullptr}, now);
  return previous;
}

void Flush() {
  ThreadState& s = t_state;
  if (!s.started) return;
  const int64_t now = MonoNanos();
  s.Accrue(now);
  s.Settle(/*keep_debts=*/false);
  s.PublishBusy(now);
}

// Flush, for a thread about to block: it goes on with the same nodes, so
// their sampling debts stay pending.
void SettleBeforeBlocking() {
  ThreadState& s = t_state;
  if (!s.started) return;
  const int64_t now = MonoNanos();
  s.Accrue(now);
  s.Settle(/*keep_debts=*/true);
  s.PublishBusy(now);
}

CpuClock SetCpuClockForTesting(CpuClock clock) { return g_cpu_clock.exchange(clock); }

}  // namespace cpu

BlockedScope::BlockedScope(Wait kind, NodeCounters* node) : kind_(kind), node_(node) {
  cpu::SettleBeforeBlocking();
  if (node_ != nullptr || cpu::t_state.worker != nullptr) start_ = MonoNanos();
}

BlockedScope::~BlockedScope() {
  auto& s = cpu::t_state;
  const bool timed = node_ != nullptr || s.worker != nullptr;
  const int64_t now = timed || s.started ? MonoNanos() : 0;
  if (timed) {
    const int64_t waited = std::max<int64_t>(0, now - start_);
    if (node_ != nullptr) {
      switch (kind_) {
        case Wait::kWork:
          NodeCounters::Add(node_->wait_ns, waited);
          NodeCounters::Add(node_->self_wall_ns, waited);
          break;
        case Wait::kInput: NodeCounters::Add(node_->input_blocked_ns, waited); break;
        case Wait::kOutput: NodeCounters::Add(node_->output_blocked_ns, waited); break;
      }
    }
    if (s.worker != nullptr) {
      // Waiting inside the work keeps the worker busy: its thread is taken.
      NodeCounters::Add(kind_ == Wait::kWork ? s.worker->worker_busy_ns : s.worker->worker_idle_ns, waited);
      s.worker_mark = now;
    }
  }
  if (!s.started) return;
  // The wait is nobody's CPU, and the clock read ending it nobody's work:
  // restart both clocks after it without charging either.
  s.cpu_base = cpu::ReadCpuClock();
  s.last_mono = MonoNanos();
}

NodeCounters* CurrentNode() { return cpu::t_state.current.node; }

WorkerScope::WorkerScope(NodeCounters* node) : active_(node != nullptr) {
  if (!active_) return;
  previous_ = cpu::SwitchTo(node);
  auto& s = cpu::t_state;
  previous_worker_ = s.worker;
  s.worker = node;
  s.worker_mark = MonoNanos();
}

WorkerScope::~WorkerScope() {
  if (!active_) return;
  cpu::SwitchTo(previous_);
  cpu::Flush();
  cpu::t_state.worker = previous_worker_;
}

}  // namespace plumber::runtime
