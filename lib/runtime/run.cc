// The training-loop runner and its trace (see run.h).
#include "runtime/run.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/number_format.h"
#include "runtime/calibrate.h"
#include "runtime/machine_cpu.h"
#include "runtime/program.h"
#include "traceio/trace_io.h"

namespace plumber::runtime {
namespace {

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t MeminfoBytes(const std::string& meminfo, const std::string& key) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      int64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

int64_t RssBytes(Env* env) {
  auto statm = ReadFileToString(env, "/proc/self/statm", 4096);
  if (!statm.ok()) return 0;
  std::istringstream in(*statm);
  int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// Shared between the consumer loop and the monitor thread.
struct RootCounters {
  std::atomic<int64_t> next_calls{0};
  std::atomic<int64_t> wait_ns{0};
  std::atomic<int64_t> max_wait_ns{0};
  std::atomic<int64_t> batches{0};
};

class Session {
 public:
  Session(Env* env, const RunConfig& config) : env_(env), config_(config) {}

  StatusOr<RunResult> Run(const ProgramGraph& graph) {
    start_mono_ = MonoNanos();
    start_cpu_ = ProcessCpuNanos();
    StartMachineCpu();
    if (!config_.trace_path.empty()) {
      schema::TraceHeader header;
      header.set_tool_version(config_.tool_version);
      header.set_wait_traced(config_.tracing);
      *header.mutable_program() = graph.program();
      header.mutable_program()->set_output(graph.name(graph.output()));
      *header.mutable_machine() = DescribeMachine(env_, config_.storage);
      *header.mutable_machine()->mutable_bandwidth_curve() = config_.bandwidth_curve;
      if (config_.handoff.parallelism() > 0) *header.mutable_machine()->mutable_handoff() = config_.handoff;
      auto* o = header.mutable_options();
      o->set_seconds(config_.seconds);
      o->set_batches(config_.batches);
      o->set_warmup_seconds(config_.warmup_seconds);
      o->set_snapshot_every_seconds(config_.snapshot_every_seconds);
      o->set_step_time_seconds(config_.step_time_seconds);
      for (const auto& a : config_.argv) o->add_argv(a);
      header.set_start_unix_ns(env_->NowUnixNanos());
      PLUMBER_ASSIGN_OR_RETURN(writer_, TraceWriter::Create(env_, config_.trace_path, header));
    }
    Storage storage(env_, config_.storage);
    RunContext run_ctx{&storage, config_.tracing};
    BuildContext build{env_, config_.base_dir};

    RunResult result;
    auto program = Program::Build(graph, build);
    if (!program.ok()) return Finish(std::move(result), program.status(), nullptr);
    program_ = std::move(program).value();
    auto root = program_->output()->MakeIterator(IterCtx{&run_ctx, nullptr, nullptr});
    if (!root.ok()) return Finish(std::move(result), root.status(), nullptr);
    root_ = std::move(root).value();

    std::thread monitor([this] { Monitor(); });
    Status loop_status = Loop(&result);
    // A trace that can no longer be written is why the pipeline was
    // cancelled; it is the error the run ends with.
    if (trace_failed_.load() && (loop_status.ok() || loop_status.code() == Status::Code::kCancelled)) {
      loop_status = TraceError();
    }
    // Stop the pipeline's threads before the last snapshot, so that their
    // CPU time is settled and counted.
    root_->Close();
    // This thread's own share is settled too: the loop ran the sequential
    // nodes, and their counters must not be referenced once the program is
    // gone (a later run in this thread would write to freed memory).
    cpu::Flush();
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    monitor.join();
    return Finish(std::move(result), loop_status, nullptr);
  }

 private:
  // Consumes batches until a limit, the end, an error or a stop.
  Status Loop(RunResult* result) {
    const int64_t warmup_ns = static_cast<int64_t>(config_.warmup_seconds * 1e9);
    bool warm = warmup_ns == 0;
    int64_t warm_start = start_mono_;
    int64_t warm_batches = 0;
    Status status;
    end_status_ = "ok";
    while (true) {
      if (config_.batches > 0 && root_counters_.batches.load() >= config_.batches) break;
      if (StopRequested()) break;
      if (trace_failed_.load()) {
        end_status_ = "error";
        break;
      }
      Element batch;
      bool end = false;
      const int64_t t0 = MonoNanos();
      Status s = root_->GetNext(&batch, &end);
      const int64_t wait = MonoNanos() - t0;
      root_counters_.next_calls.fetch_add(1, std::memory_order_relaxed);
      root_counters_.wait_ns.fetch_add(wait, std::memory_order_relaxed);
      if (wait > root_counters_.max_wait_ns.load(std::memory_order_relaxed)) {
        root_counters_.max_wait_ns.store(wait, std::memory_order_relaxed);
      }
      if (!s.ok()) {
        // A cancel we asked for is not a failure.
        if (s.code() == Status::Code::kCancelled && StopRequested()) break;
        if (s.code() == Status::Code::kCancelled && trace_failed_.load()) {
          end_status_ = "error";
          break;
        }
        status = s;
        end_status_ = "error";
        break;
      }
      if (end) {
        end_status_ = "end_of_data";
        break;
      }
      const int64_t n = root_counters_.batches.fetch_add(1, std::memory_order_relaxed) + 1;
      const int64_t now = MonoNanos();
      if (!warm && now - start_mono_ >= warmup_ns) {
        warm = true;
        warm_start = now;
        warm_batches = n;
      }
      if (config_.step_time_seconds > 0) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(config_.step_time_seconds * 1e9)));
      }
    }
    if (end_status_ == "ok" && interrupted_.load()) end_status_ = "interrupted";
    const int64_t end_mono = MonoNanos();
    result->batches = root_counters_.batches.load();
    result->seconds = static_cast<double>(end_mono - start_mono_) / 1e9;
    if (warm) {
      result->measured_batches = result->batches - warm_batches;
      result->measured_seconds = static_cast<double>(end_mono - warm_start) / 1e9;
    }
    const int64_t calls = root_counters_.next_calls.load();
    result->mean_wait_seconds = calls ? static_cast<double>(root_counters_.wait_ns.load()) / 1e9 / calls : 0;
    result->max_wait_seconds = static_cast<double>(root_counters_.max_wait_ns.load()) / 1e9;
    return status;
  }

  // The machine's CPU time at the start, the base of the snapshots'
  // machine_idle_ns and machine_busy_ns. The run's CPUs (its affinity) are
  // summed line by line, so that the idle time of CPUs the run may not use
  // is not counted as cores it had; where /proc/stat has only the
  // aggregate line, that line (the analysis caps what it finds at the
  // machine's cores). Without a readable /proc/stat nothing is recorded,
  // and the analysis plans with the machine's cores as before.
  void StartMachineCpu() {
    machine_cpus_ = RunnableCpus();
    auto ticks = ReadMachineCpuTicks(env_, machine_cpus_);
    if (!ticks.ok() && !machine_cpus_.empty()) {
      machine_cpus_.clear();
      ticks = ReadMachineCpuTicks(env_, machine_cpus_);
    }
    if (!ticks.ok()) {
      spdlog::debug("the machine's CPU time is not recorded: {}", ticks.status().ToString());
      return;
    }
    start_machine_ = *ticks;
  }

  // Fills the snapshot's machine CPU fields from a fresh /proc/stat; leaves
  // them out when it cannot be read now. Never lets them decrease (the
  // kernel's iowait may), so that they stay cumulative counters.
  // Called with snap_mu_ held.
  void FillMachineCpu(schema::Snapshot* snap) {
    if (!start_machine_) return;
    auto ticks = ReadMachineCpuTicks(env_, machine_cpus_);
    if (!ticks.ok()) return;
    const auto since = [](uint64_t t, uint64_t start) { return TicksToNanos(t > start ? t - start : 0); };
    last_machine_idle_ns_ = std::max(last_machine_idle_ns_, since(ticks->idle, start_machine_->idle));
    last_machine_busy_ns_ = std::max(last_machine_busy_ns_, since(ticks->busy, start_machine_->busy));
    snap->set_machine_idle_ns(last_machine_idle_ns_);
    snap->set_machine_busy_ns(last_machine_busy_ns_);
  }

  bool StopRequested() {
    if (config_.stop && config_.stop->load()) interrupted_.store(true);
    if (config_.seconds > 0 && static_cast<double>(MonoNanos() - start_mono_) >= config_.seconds * 1e9) {
      deadline_hit_.store(true);
    }
    return interrupted_.load() || deadline_hit_.load();
  }

  // Snapshots on schedule; enforces the time limit and stop requests by
  // cancelling the pipeline, which wakes a consumer blocked in GetNext.
  void Monitor() {
    const auto period = std::chrono::nanoseconds(static_cast<int64_t>(std::max(0.01, config_.snapshot_every_seconds) * 1e9));
    const auto tick = std::chrono::milliseconds(20);
    auto next_snapshot = std::chrono::steady_clock::now() + period;
    auto next_progress = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(config_.progress_every_seconds * 1000));
    int64_t last_batches = 0;
    auto last_progress = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      // Wakes for the time limit and stop requests, and when a snapshot is
      // due: waking on ticks alone would stretch a short period to a tick.
      auto wake = std::chrono::steady_clock::now() + tick;
      if (writer_ && !trace_failed_.load() && next_snapshot < wake) wake = next_snapshot;
      cv_.wait_until(lock, wake);
      if (done_) break;
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = static_cast<double>(MonoNanos() - start_mono_) / 1e9;
      if ((config_.seconds > 0 && elapsed >= config_.seconds) || (config_.stop && config_.stop->load())) {
        if (config_.seconds > 0 && elapsed >= config_.seconds) deadline_hit_.store(true);
        if (config_.stop && config_.stop->load()) interrupted_.store(true);
        root_->Cancel();
      }
      if (writer_ && !trace_failed_.load() && now >= next_snapshot) {
        next_snapshot += period;
        if (next_snapshot < now) next_snapshot = now + period;
        lock.unlock();
        // A trace that replaces an existing file does so once the run has
        // something to show (see TraceWriter::Create).
        Status s = root_counters_.batches.load() > 0 ? writer_->Publish() : Status::OK();
        if (s.ok()) s = writer_->Append(TakeSnapshot());
        lock.lock();
        if (s.ok()) {
          ++snapshots_;
        } else {
          // A run whose trace is lost (a full disk, say) measures nothing
          // anyone will see: stop it now rather than at its limit, which
          // may be never. The trace keeps every snapshot written so far.
          trace_error_ = s;
          trace_failed_.store(true);
          root_->Cancel();
        }
      }
      if (config_.progress && now >= next_progress) {
        const int64_t b = root_counters_.batches.load();
        const double dt = std::chrono::duration<double>(now - last_progress).count();
        config_.progress(RunProgress{elapsed, b, dt > 0 ? static_cast<double>(b - last_batches) / dt : 0});
        last_batches = b;
        last_progress = now;
        next_progress = now + std::chrono::milliseconds(static_cast<int64_t>(config_.progress_every_seconds * 1000));
      }
    }
  }

  schema::Snapshot TakeSnapshot() {
    schema::Snapshot snap;
    int64_t wall = MonoNanos() - start_mono_;
    // Snapshots must move forward even when two land in one clock tick.
    {
      std::lock_guard<std::mutex> lock(snap_mu_);
      wall = std::max(wall, last_wall_ + 1);
      last_wall_ = wall;
    }
    snap.set_wall_ns(wall);
    if (program_) program_->stats().Fill(&snap);
    auto* root = snap.mutable_root();
    root->set_next_calls(root_counters_.next_calls.load());
    root->set_wait_ns(root_counters_.wait_ns.load());
    root->set_max_wait_ns(root_counters_.max_wait_ns.load());
    snap.set_process_cpu_ns(ProcessCpuNanos() - start_cpu_);
    snap.set_rss_bytes(RssBytes(env_));
    {
      std::lock_guard<std::mutex> lock(snap_mu_);
      FillMachineCpu(&snap);
    }
    return snap;
  }

  StatusOr<RunResult> Finish(RunResult result, const Status& status, std::nullptr_t) {
    cpu::Flush();
    if (!status.ok()) {
      result.end_status = "error";
      result.error = status;
    } else {
      result.end_status = end_status_.empty() ? "ok" : end_status_;
    }
    result.final_snapshot = TakeSnapshot();
    if (writer_) {
      // After a failed write the writer refuses everything (trace_io.h),
      // and closes the file at Finish.
      Status s = writer_->Append(result.final_snapshot);
      if (s.ok()) ++snapshots_;
      schema::RunEnd end;
      end.set_status(result.end_status);
      if (!status.ok()) end.set_message(status.ToString());
      Status f = writer_->Finish(end);
      if (f.ok() && result.batches > 0) f = writer_->Publish();
      // A run that produced nothing leaves a trace kept from before alone.
      result.trace_discarded = !writer_->published();
      writer_.reset();
      if (!s.ok() || !f.ok()) {
        // Failing only now, at the end, still loses the end record.
        if (!trace_failed_.load()) {
          std::lock_guard<std::mutex> lock(mu_);
          trace_error_ = !s.ok() ? s : f;
          trace_failed_.store(true);
        }
        if (result.error.ok()) {
          result.end_status = "error";
          result.error = TraceError();
        }
      }
    }
    result.snapshots = snapshots_;
    return result;
  }

  // Why the trace could not be written, and what it still holds: an error
  // about the target the user chose, as every failed write is (exit 2).
  Status TraceError() {
    std::lock_guard<std::mutex> lock(mu_);
    return Status::FailedPrecondition("writing the trace failed: " + trace_error_.message() + "; " + config_.trace_path +
                           " keeps the " + FormatCount(snapshots_, "snapshot", "snapshots") +
                           " written before the failure");
  }

  Env* env_;
  const RunConfig& config_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Iterator> root_;
  RootCounters root_counters_;
  int64_t start_mono_ = 0;
  int64_t start_cpu_ = 0;
  std::optional<MachineCpuTicks> start_machine_;
  std::vector<int> machine_cpus_;  // empty: the aggregate line
  std::string end_status_;
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> deadline_hit_{false};
  // Set once by the thread whose trace write failed (the monitor, or the
  // consumer in Finish); trace_error_ under mu_.
  std::atomic<bool> trace_failed_{false};
  Status trace_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::mutex snap_mu_;
  int64_t last_wall_ = -1;
  int64_t last_machine_idle_ns_ = 0;  // under snap_mu_
  int64_t last_machine_busy_ns_ = 0;
  int64_t snapshots_ = 0;
};

}  // namespace

schema::Machine DescribeMachine(Env* env, const StorageOptions& storage) {
  schema::Machine m;
  // The CPUs the run may use, the same set its machine CPU time sums.
  int cores = static_cast<int>(RunnableCpus().size());
  if (cores <= 0) cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  m.set_cores(cores);
  if (auto meminfo = ReadFileToString(env, "/proc/meminfo", 1 << 20); meminfo.ok()) {
    m.set_memory_bytes(MeminfoBytes(*meminfo, "MemTotal"));
    m.set_available_memory_bytes(MeminfoBytes(*meminfo, "MemAvailable"));
  }
  m.set_read_bandwidth_bytes_per_s(storage.read_bandwidth);
  m.set_read_latency_ns(storage.read_latency_ns);
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) m.set_hostname(host);
  return m;
}

schema::HandoffCost CalibrateHandoff() {
  const HandoffCost h = MeasureHandoff(2, 0.2);
  schema::HandoffCost out;
  out.set_parallelism(h.parallelism);
  out.set_cpu_ns(h.cpu_ns);
  out.set_latency_ns(h.latency_ns);
  out.set_chunked_cpu_ns(h.chunked_cpu_ns);
  out.set_payload_cpu_ns(h.payload_cpu_ns);
  out.set_payload_cpu_ns_per_byte(h.payload_cpu_ns_per_byte);
  out.set_copy_cpu_ns(h.copy_cpu_ns);
  out.set_copy_cpu_ns_per_byte(h.copy_cpu_ns_per_byte);
  out.set_cold_stacking_cpu_ns_per_byte(h.cold_stacking_cpu_ns_per_byte);
  out.set_parked_chunk_cpu_ns(h.parked_chunk_cpu_ns);
  out.set_payload_cpu_ns_spread(h.payload_cpu_ns_spread);
  out.set_parked_chunk_cpu_ns_spread(h.parked_chunk_cpu_ns_spread);
  const CacheReplayCost replay = MeasureCacheReplay(Env::Default());
  out.set_file_replay_cpu_ns(replay.file_ns);
  out.set_file_replay_cpu_ns_per_byte(replay.file_ns_per_byte);
  out.set_file_replay_epoch_cpu_ns(replay.file_epoch_ns);
  out.set_memory_replay_cpu_ns(replay.memory_ns);
  out.set_memory_replay_cpu_ns_per_byte(replay.memory_ns_per_byte);
  out.set_file_replay_pooled_wall_ns_per_byte(replay.file_pooled_wall_ns_per_byte);
  // Waiting stages get up to 64 threads per core (kMaxThreadsPerCore); the
  // price per wait grows with the threads parked, so it is measured near
  // there, capped where a bigger machine would only take longer.
  const int cpus = std::max<int>(1, static_cast<int>(RunnableCpus().size()));
  const int waiters = std::min(128, 64 * cpus);
  if (const WaitCost wait = MeasureWaitCost(waiters, 0.3); wait.cpu_ns > 0) {
    out.set_wait_cpu_ns(wait.cpu_ns);
    out.set_wait_thread_cpu_ns(wait.thread_cpu_ns);
    out.set_wait_parallelism(waiters);
  }
  return out;
}

StatusOr<RunResult> RunPipeline(Env* env, const ProgramGraph& program, const RunConfig& config) {
  Session session(env, config);
  return session.Run(program);
}

}  // namespace plumber::runtime
