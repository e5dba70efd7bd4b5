// Machine calibrations. The hand-off: an endless source of scalars through
// an add, inline and through the ordered pool, timed by the process's CPU
// clock and the wall clock. The source: cut the reading interleave out of
// the pipeline, run it at each parallelism, count the storage bytes read.
#include "runtime/calibrate.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "runtime/datagen.h"
#include "runtime/ordered_pool.h"
#include "runtime/program.h"
#include "runtime/run.h"
#include "runtime/tensor.h"
#include "runtime/udf.h"
#include "traceio/pipeline_io.h"

namespace plumber::runtime {
namespace {

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Endless scalars 0, 1, 2, ...
class CountingIterator final : public Iterator {
 public:
  Status GetNextInternal(Element* out, bool* end) override {
    // Refills *out as the range source does, reusing its buffer.
    out->clear();
    out->push_back(Tensor::Scalar(next_++));
    *end = false;
    return Status::OK();
  }
  void Cancel() override {}
  void Close() override {}

 private:
  int64_t next_ = 0;
};

Status AddOne(Element* e) {
  (*e)[0].data<int64_t>()[0] += 1;
  return Status::OK();
}

// Endless elements of `bytes` bytes in a buffer of their own each.
class PayloadIterator final : public Iterator {
 public:
  explicit PayloadIterator(int64_t bytes) : bytes_(bytes) {}
  Status GetNextInternal(Element* out, bool* end) override {
    out->clear();
    Tensor t(DType::kUint8, {bytes_});
    t.raw()[0] = static_cast<char>(next_++);
    out->push_back(std::move(t));
    *end = false;
    return Status::OK();
  }
  void Cancel() override {}
  void Close() override {}

 private:
  int64_t bytes_;
  int64_t next_ = 0;
};

// What an op making a new output does: allocate it and fill it.
Status CopyPayload(Element* e) {
  const std::string& in = (*e)[0].raw();
  Tensor t(DType::kUint8, {static_cast<int64_t>(in.size())});
  std::memcpy(t.raw().data(), in.data(), in.size());
  (*e)[0] = std::move(t);
  return Status::OK();
}

// What a consumer does with an element: reads it (a byte per cache line).
uint64_t Touch(const Element& e) {
  uint64_t sum = 0;
  const std::string& r = e[0].raw();
  for (size_t i = 0; i < r.size(); i += 64) sum += static_cast<unsigned char>(r[i]);
  return sum;
}

// Per element over about `seconds`: process CPU and wall nanoseconds.
struct PerElement {
  double cpu_ns = 0;
  double wall_ns = 0;
};

template <typename Next>
PerElement Time(double seconds, Next&& next) {
  const int64_t budget = static_cast<int64_t>(seconds * 1e9);
  const int64_t cpu0 = ProcessCpuNanos(), wall0 = MonoNanos();
  int64_t n = 0, wall = 0;
  do {
    // The clock only every few hundred elements: reading it is not free.
    for (int i = 0; i < 256; ++i) next();
    n += 256;
    wall = MonoNanos() - wall0;
  } while (wall < budget);
  return {static_cast<double>(ProcessCpuNanos() - cpu0) / static_cast<double>(n),
          static_cast<double>(wall) / static_cast<double>(n)};
}

// The pool over `source`'s elements running `op` on each (recycling the
// buffers, as the map does), with `max_chunk` tasks per chunk.
template <typename Op>
std::unique_ptr<Iterator> PoolOf(std::unique_ptr<Iterator> source, Op op, int parallelism, int64_t capacity,
                                 int64_t max_chunk) {
  OrderedPoolSpec spec;
  spec.parallelism = parallelism;
  spec.capacity = capacity;
  spec.max_chunk = max_chunk;
  spec.work = [op](std::vector<Element>& in, uint64_t, Element* out) {
    out->swap(in[0]);
    return op(out);
  };
  return MakeOrderedPoolIterator(std::move(source), std::move(spec));
}

// PoolOf's results timed; the consumer does `consume` with each.
template <typename Op, typename Consume>
PerElement TimePoolOf(std::unique_ptr<Iterator> source, Op op, Consume&& consume, int parallelism, int64_t capacity,
                      int64_t max_chunk, double seconds) {
  auto pool = PoolOf(std::move(source), op, parallelism, capacity, max_chunk);
  Element e;
  bool end = false;
  // A warm-up: threads started, chunk size learned.
  for (int i = 0; i < 2000; ++i) (void)pool->GetNext(&e, &end);
  PerElement t = Time(seconds, [&] {
    (void)pool->GetNext(&e, &end);
    consume(e);
  });
  pool->Close();
  return t;
}

// The pool over CountingIterator's scalars and an add.
PerElement TimePool(int parallelism, int64_t capacity, int64_t max_chunk, double seconds) {
  return TimePoolOf(std::make_unique<CountingIterator>(), AddOne, [](const Element&) {}, parallelism, capacity,
                    max_chunk, seconds);
}

// CPU per element of `bytes`-byte payloads made by CopyPayload and read,
// inline on one thread and through the pool (chunked, as in runs),
// nanoseconds.
struct PayloadCost {
  double source_ns = 0;  // making the payload the op copies (the input)
  double inline_ns = 0;
  double pooled_ns = 0;
};
PayloadCost PayloadHandoff(int parallelism, int64_t bytes, double seconds) {
  uint64_t sink = 0;
  PayloadIterator source(bytes);
  Element e;
  bool end = false;
  const PerElement source_cost = Time(seconds / 4, [&] { (void)source.GetNext(&e, &end); });
  const PerElement inline_cost = Time(seconds / 2, [&] {
    (void)source.GetNext(&e, &end);
    (void)CopyPayload(&e);
    sink += Touch(e);
  });
  const PerElement pooled = TimePoolOf(std::make_unique<PayloadIterator>(bytes), CopyPayload,
                                      [&](const Element& out) { sink += Touch(out); }, parallelism, parallelism,
                                      /*max_chunk=*/0, seconds / 2);
  // Keeps the reads from being optimised away without a volatile.
  if (sink == 1) return {};
  return {source_cost.cpu_ns, inline_cost.cpu_ns, pooled.cpu_ns};
}

// The nodes `root` depends on (inputs and functions), root included.
std::set<int> Closure(const ProgramGraph& g, int root) {
  std::set<int> seen;
  std::vector<int> todo = {root};
  while (!todo.empty()) {
    const int i = todo.back();
    todo.pop_back();
    if (!seen.insert(i).second) continue;
    for (int j : g.children(i)) todo.push_back(j);
  }
  return seen;
}

// Per byte, wall nanoseconds of stacking 32 elements of 48 KiB into one
// output as a batch does (batch.cc pulls them all, then allocates its
// output zero-filled, the last one freed, and copies each in): the median
// of `outputs` outputs, each element made `apart_micros` of other work
// after the one before. Made a quarter of a millisecond apart or more,
// the same bytes took 2-3x as long to stack as made back to back on this
// machine, whatever the work between touched (a spin, or megabytes of
// writes): it is the time since, not what evicted them. The thread does
// not block, so its wall time is its CPU.
constexpr int64_t kColdApartMicros = 250;  // 8 ms an output: HandoffPrice::kColdAfterSeconds
double StackingNanosPerByte(int64_t apart_micros, int outputs) {
  constexpr int64_t kSlice = 48 * 1024;
  constexpr int kSlices = 32;
  const auto burn = static_cast<uint64_t>(static_cast<double>(apart_micros) * BurnIterationsPerMicro());
  std::vector<std::string> elements(kSlices, std::string(kSlice, '\0'));
  uint64_t sink = 0;
  std::vector<double> took;
  Tensor last;
  for (int k = 0; k < outputs; ++k) {
    for (int i = 0; i < kSlices; ++i) {
      if (burn > 0) sink += BurnLoop(burn);
      std::memset(elements[i].data(), i + k, kSlice);
    }
    last = Tensor();
    const int64_t t0 = MonoNanos();
    Tensor out(DType::kUint8, {kSlices * kSlice});
    for (int i = 0; i < kSlices; ++i) std::memcpy(out.raw().data() + i * kSlice, elements[i].data(), kSlice);
    took.push_back(static_cast<double>(MonoNanos() - t0));
    sink += out.raw()[kSlices * kSlice - 1];
    last = std::move(out);
  }
  std::nth_element(took.begin(), took.begin() + took.size() / 2, took.end());
  return (took[took.size() / 2] + static_cast<double>(sink & 1) * 1e-9) / (kSlices * kSlice);
}

// CPU per element of a pool of `parallelism` workers handing over one
// element a chunk, each element `kParkedBurnMicros` of cpu_burn's work,
// less the same work inline, nanoseconds. The elements are far enough
// apart that the consumer's spin runs out and it parks for each, as it
// does behind a pool whose chunks take a millisecond.
constexpr int64_t kParkedBurnMicros = 250;
double ParkedChunkNanos(int parallelism) {
  constexpr int kPooled = 200;  // 25 ms at parallelism 2
  constexpr int kInline = 40;
  const auto burn = static_cast<uint64_t>(static_cast<double>(kParkedBurnMicros) * BurnIterationsPerMicro());
  uint64_t sink = 0;
  auto inline_ns = [&] {
    const int64_t t0 = ProcessCpuNanos();
    for (int i = 0; i < kInline; ++i) sink += BurnLoop(burn);
    return static_cast<double>(ProcessCpuNanos() - t0) / kInline;
  };
  auto add_burn = [burn](Element* e) {
    (*e)[0].data<int64_t>()[0] += static_cast<int64_t>(BurnLoop(burn) & 1);
    return Status::OK();
  };
  const double before = inline_ns();
  auto pool = PoolOf(std::make_unique<CountingIterator>(), add_burn, parallelism, parallelism, /*max_chunk=*/1);
  Element e;
  bool end = false;
  for (int i = 0; i < 4 * parallelism; ++i) (void)pool->GetNext(&e, &end);  // threads started
  const int64_t t0 = ProcessCpuNanos();
  for (int i = 0; i < kPooled; ++i) (void)pool->GetNext(&e, &end);
  const double pooled = static_cast<double>(ProcessCpuNanos() - t0) / kPooled;
  pool->Close();
  const double after = inline_ns();
  if (sink == 1) return 0;  // keeps the inline burns from being optimised away
  return std::max(0.0, pooled - (before + after) / 2);
}

}  // namespace

// Payload sizes the price per element and per byte are fitted between.
// The larger is 64 KiB (a small decoded image): fitted up to 8 KiB, the
// slope rested on a difference of about a microsecond and came out at 0.10
// to 0.39 ns per byte from one run to the next.
constexpr int64_t kSmallPayload = 128;
constexpr int64_t kLargePayload = 65536;

// The 128-byte price, the one that decides whether a cheap op gets a pool,
// swings from one measurement to the next (587 to 1,643 ns on the same
// idle machine, from where the threads land); a price too low pools ops
// whose hand-off costs more than they do, which runs slower than inline
// (the text example: tokenize pooled at a price of 587 ns ran 0.94x, the
// model saying 1.36x), while one too high only leaves a marginal pool out.
// The highest of a few measurements.
constexpr int kPayloadRepeats = 3;

HandoffCost MeasureHandoff(int parallelism, double seconds) {
  const double phase = seconds / 6;
  CountingIterator source;
  Element e;
  bool end = false;
  const PerElement inline_cost = Time(phase, [&] {
    (void)source.GetNext(&e, &end);
    (void)AddOne(&e);
  });
  const PerElement alone = TimePool(parallelism, parallelism, 1, phase);
  const PerElement round_trip = TimePool(1, 1, 1, phase);
  const PerElement chunked = TimePool(parallelism, parallelism, 0, phase);
  HandoffCost c;
  c.parallelism = parallelism;
  c.cpu_ns = std::max(1.0, alone.cpu_ns - inline_cost.cpu_ns);
  c.latency_ns = std::max(1.0, round_trip.wall_ns - inline_cost.wall_ns);
  c.chunked_cpu_ns = std::max(1.0, chunked.cpu_ns - inline_cost.cpu_ns);
  auto price = [](const PayloadCost& p) { return p.pooled_ns - p.inline_ns; };
  PayloadCost small_cost = PayloadHandoff(parallelism, kSmallPayload, phase);
  double lowest_small = price(small_cost);
  for (int i = 1; i < kPayloadRepeats; ++i) {
    const PayloadCost again = PayloadHandoff(parallelism, kSmallPayload, phase);
    lowest_small = std::min(lowest_small, price(again));
    if (price(again) > price(small_cost)) small_cost = again;
  }
  c.payload_cpu_ns_spread = price(small_cost) - lowest_small;
  const PayloadCost large_cost = PayloadHandoff(parallelism, kLargePayload, phase);
  constexpr double kSpan = static_cast<double>(kLargePayload - kSmallPayload);
  const double small = std::max(c.chunked_cpu_ns, price(small_cost));
  const double large = std::max(small, price(large_cost));
  c.payload_cpu_ns_per_byte = (large - small) / kSpan;
  c.payload_cpu_ns = small;
  // The op's copy and the consumer's read, without making the input.
  const double copy_small = small_cost.inline_ns - small_cost.source_ns;
  const double copy_large = large_cost.inline_ns - large_cost.source_ns;
  c.copy_cpu_ns = std::max(1.0, copy_small);
  c.copy_cpu_ns_per_byte = std::max(0.0, copy_large - copy_small) / kSpan;
  // Outputs of elements 250 us apart, 8 ms each: 7 of them, 56 ms. Single
  // outputs spread by 2x, the median of 7 by a third.
  const int outputs = seconds >= 0.1 ? 7 : 3;
  c.cold_stacking_cpu_ns_per_byte =
      std::max(0.0, StackingNanosPerByte(kColdApartMicros, outputs) - StackingNanosPerByte(0, 4 * outputs));
  // The median of three, about 110 ms: single measurements spread from 6
  // to 25 us on an idle machine.
  double parked[3];
  for (double& p : parked) p = ParkedChunkNanos(parallelism);
  std::sort(parked, parked + 3);
  c.parked_chunk_cpu_ns = parked[1];
  c.parked_chunk_cpu_ns_spread = parked[2] - parked[0];
  return c;
}

namespace {

// The wait calibration's op: a sleep, then some CPU of its own.
constexpr int64_t kWaitSleepMicros = 1000;
constexpr int64_t kWaitBurnMicros = 50;

// Per element of the waiting map `call` run at `parallelism` for about
// `seconds`, traced as `plumber run` traces it: its node's CPU and the
// process's, nanoseconds.
struct WaitRun {
  double node_ns = 0;
  double process_ns = 0;
};
StatusOr<WaitRun> RunWaitingMap(int parallelism, double seconds) {
  const std::string json =
      R"({"nodes": [{"name": "source", "op": "range", "range": {"stop": 1000000000}},
          {"name": "call", "op": "map", "inputs": ["source"], "map": {"parallelism": )" +
      std::to_string(parallelism) + R"(, "udf": [{"op": "sleep", "args": {"micros": )" +
      std::to_string(kWaitSleepMicros) + R"(}}, {"op": "cpu_burn", "args": {"micros": )" +
      std::to_string(kWaitBurnMicros) + R"(}}]}}]})";
  PLUMBER_ASSIGN_OR_RETURN(schema::Pipeline pipeline, ParsePipeline(json, "the wait calibration"));
  PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(pipeline), "the wait calibration"));
  RunConfig config;
  config.seconds = seconds;
  config.snapshot_every_seconds = seconds;
  PLUMBER_ASSIGN_OR_RETURN(RunResult run, RunPipeline(Env::Default(), graph, config));
  for (const auto& node : run.final_snapshot.nodes()) {
    if (node.name() != "call" || node.elements_produced() <= 0) continue;
    const auto n = static_cast<double>(node.elements_produced());
    return WaitRun{static_cast<double>(node.active_cpu_ns()) / n,
                   static_cast<double>(run.final_snapshot.process_cpu_ns()) / n};
  }
  return Status::Internal("the wait calibration's map made no element");
}

}  // namespace

WaitCost MeasureWaitCost(int threads, double seconds) {
  WaitCost c;
  auto alone = RunWaitingMap(1, seconds / 4);
  // A first run starts the threads, which then wait in the thread cache:
  // counted, their start put a tenth to a third on the price a process's
  // first calibration measured (59 and 68 us against 44-46 once warm).
  (void)RunWaitingMap(threads, seconds / 4);
  auto many = RunWaitingMap(threads, seconds / 2);
  if (!alone.ok() || !many.ok()) return c;  // not measured: older traces' price
  // What a naive trace charges the node is its CPU alone; among many
  // threads the same work costs its node more, and the process more still.
  c.cpu_ns = std::max(1.0, many->process_ns - alone->node_ns);
  c.thread_cpu_ns = std::clamp(many->node_ns - alone->node_ns, 0.0, c.cpu_ns);
  return c;
}

namespace {

// The replay calibration's images, decoded and resized to a side of 64 or
// 128 pixels: elements of 12 and 48 KiB (a small decoded image), an epoch
// of 64 in two batches of 32.
constexpr int kReplayRecords = 64;
constexpr int kReplayBatch = 32;
constexpr int kReplayTrials = 3;
constexpr int kReplayEpochs = 8;  // timed in a trial

double MedianOf(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// One cached pipeline of the replay calibration, filled and ready to time.
class ReplayRun {
 public:
  // The images of `dir` at `side` pixels a side, cached in memory
  // (`cache_file` empty) or in that file, repeated into batches of 32 made
  // by `batch_parallelism` threads.
  static StatusOr<ReplayRun> Open(Env* env, const std::string& dir, int side, const std::string& cache_file,
                                  int batch_parallelism = 1) {
    const std::string json = R"({"name": "replay_calibration", "nodes": [
        {"name": "files", "op": "list_files", "list_files": {"pattern": "train-*.tfrecord"}},
        {"name": "read", "op": "tfrecord"},
        {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read"}},
        {"name": "decode", "op": "map", "inputs": ["shards"], "map": {"udf": [
          {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}},
          {"op": "decode_jpeg", "args": {"channels": 3}},
          {"op": "resize", "args": {"height": )" + std::to_string(side) + R"(, "width": )" +
                             std::to_string(side) + R"(}}]}},
        {"name": "cache", "op": "cache", "inputs": ["decode"], "cache": {"filename": ")" + cache_file + R"("}},
        {"name": "repeat", "op": "repeat", "inputs": ["cache"]},
        {"name": "batch", "op": "batch", "inputs": ["repeat"], "batch": {"batch_size": )" +
                             std::to_string(kReplayBatch) + R"(, "parallelism": )" +
                             std::to_string(batch_parallelism) + R"(}}]})";
    PLUMBER_ASSIGN_OR_RETURN(schema::Pipeline pipeline, ParsePipeline(json, "the replay calibration"));
    PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(pipeline), "the replay calibration"));
    ReplayRun r;
    r.storage_ = std::make_unique<Storage>(env, StorageOptions{});
    r.context_ = std::make_unique<RunContext>(RunContext{r.storage_.get(), /*tracing=*/false});
    PLUMBER_ASSIGN_OR_RETURN(r.program_, Program::Build(graph, BuildContext{env, dir}));
    PLUMBER_ASSIGN_OR_RETURN(r.it_, r.program_->output()->MakeIterator(IterCtx{r.context_.get(), nullptr, nullptr}));
    for (int i = 0; i < kReplayRecords / kReplayBatch; ++i) PLUMBER_RETURN_IF_ERROR(r.Next());  // fills the cache
    return r;
  }
  ReplayRun(ReplayRun&&) = default;
  ~ReplayRun() {
    if (it_) it_->Close();
  }

  // Process CPU per epoch replayed, and of it what the epoch's first batch
  // took more than its second (the file opened again): the medians over
  // `epochs` epochs after one untimed, nanoseconds. The untimed epoch
  // brings the cache's elements back into the core's caches after the
  // other runs of the calibration: timed right after them, the memory
  // replay came out at 1.3-1.6x the CPU a pipeline spends in steady state.
  struct Epoch {
    double cpu_ns = 0;
    double start_ns = 0;
    double wall_ns = 0;
  };
  StatusOr<Epoch> Time(int epochs) {
    for (int i = 0; i < kReplayRecords / kReplayBatch; ++i) PLUMBER_RETURN_IF_ERROR(Next());
    std::vector<double> totals, starts, walls;
    for (int k = 0; k < epochs; ++k) {
      const int64_t w0 = MonoNanos();
      const int64_t t0 = ProcessCpuNanos();
      PLUMBER_RETURN_IF_ERROR(Next());
      const int64_t t1 = ProcessCpuNanos();
      PLUMBER_RETURN_IF_ERROR(Next());
      const int64_t t2 = ProcessCpuNanos();
      walls.push_back(static_cast<double>(MonoNanos() - w0));
      totals.push_back(static_cast<double>(t2 - t0));
      starts.push_back(static_cast<double>((t1 - t0) - (t2 - t1)));
    }
    return Epoch{MedianOf(totals), MedianOf(starts), MedianOf(walls)};
  }

 private:
  ReplayRun() = default;
  Status Next() {
    bool end = false;
    PLUMBER_RETURN_IF_ERROR(it_->GetNext(&element_, &end));
    return end ? Status::Internal("the replay calibration's repeat ended") : Status::OK();
  }
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<RunContext> context_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Iterator> it_;
  Element element_;
};

double TrialsMedian(const std::array<double, kReplayTrials>& v) { return MedianOf({v.begin(), v.end()}); }

}  // namespace

CacheReplayCost MeasureCacheReplay(Env* env) {
  auto dir = ScopedTempDir::Make(env, "plumber-replay-calibration-");
  if (!dir.ok()) return {};
  ImageGenOptions images;
  images.files = 1;
  images.records_per_file = kReplayRecords;
  images.width = images.height = 128;
  if (!GenerateImages(env, dir->path(), images).ok()) return {};
  // Memory and file at each size, the four timed in turn in each trial.
  constexpr std::array<int, 2> kSides = {64, 128};
  std::vector<ReplayRun> runs;
  for (const int side : kSides) {
    for (const std::string& file : {std::string(), "replay" + std::to_string(side)}) {
      auto run = ReplayRun::Open(env, dir->path(), side, file);
      if (!run.ok()) return {};
      runs.push_back(std::move(*run));
    }
  }
  // The large file cache again under a batch of 2 workers, which pull the
  // replay in turns: its wall time per epoch is the replay's pace there.
  auto pooled_run = ReplayRun::Open(env, dir->path(), kSides[1], "replay_pooled", 2);
  if (!pooled_run.ok()) return {};
  std::array<std::array<double, kReplayTrials>, 2> extra{}, start_extra{}, from_memory{};
  std::array<double, kReplayTrials> pooled_wall{};
  for (int t = 0; t < kReplayTrials; ++t) {
    auto pooled = pooled_run->Time(kReplayEpochs);
    if (!pooled.ok()) return {};
    pooled_wall[t] = pooled->wall_ns;
    for (size_t s = 0; s < kSides.size(); ++s) {
      auto memory = runs[2 * s].Time(kReplayEpochs);
      auto file = runs[2 * s + 1].Time(kReplayEpochs);
      if (!memory.ok() || !file.ok()) return {};
      extra[s][t] = file->cpu_ns - memory->cpu_ns;
      from_memory[s][t] = memory->cpu_ns;
      start_extra[s][t] = file->start_ns - memory->start_ns;
    }
  }
  // Per epoch the file costs `epoch` + 64 (per element + per byte * bytes)
  // more; the opening shows in the first batch of each epoch.
  CacheReplayCost c;
  c.file_epoch_ns = std::max(0.0, std::min(TrialsMedian(start_extra[0]), TrialsMedian(start_extra[1])));
  const double small_bytes = 64.0 * 64 * 3, large_bytes = 128.0 * 128 * 3;
  const double per_small = (TrialsMedian(extra[0]) - c.file_epoch_ns) / kReplayRecords;
  const double per_large = (TrialsMedian(extra[1]) - c.file_epoch_ns) / kReplayRecords;
  c.file_ns_per_byte = std::max(0.0, (per_large - per_small) / (large_bytes - small_bytes));
  c.file_ns = std::max(0.0, per_small - c.file_ns_per_byte * small_bytes);
  const double memory_small = TrialsMedian(from_memory[0]) / kReplayRecords;
  const double memory_large = TrialsMedian(from_memory[1]) / kReplayRecords;
  c.memory_ns_per_byte = std::max(0.0, (memory_large - memory_small) / (large_bytes - small_bytes));
  c.memory_ns = std::max(0.0, memory_small - c.memory_ns_per_byte * small_bytes);
  c.file_pooled_wall_ns_per_byte = TrialsMedian(pooled_wall) / kReplayRecords / large_bytes;
  return c;
}

StatusOr<std::vector<CalibrationPoint>> MeasureSourceBandwidth(Env* env, const ProgramGraph& program,
                                                               const std::string& base_dir,
                                                               const StorageOptions& storage, double seconds_per_point,
                                                               const std::vector<int>& parallelisms) {
  // The first interleave whose function reads storage, and whose
  // parallelism and cycle can be set.
  int reader_interleave = -1;
  for (int i = 0; i < program.size() && reader_interleave < 0; ++i) {
    const OpDef& op = program.op(i);
    if (program.function(i) < 0 || !op.parallelizable() || op.set_cycle_length == nullptr) continue;
    for (int j : Closure(program, program.function(i))) {
      if (program.op(j).reads_storage) reader_interleave = i;
    }
  }
  if (reader_interleave < 0) {
    return Status::FailedPrecondition(
        "calibration needs a reader (tfrecord, text_line) inside an interleave function: that is where read "
        "parallelism lives");
  }
  const auto keep = Closure(program, reader_interleave);
  const std::string& name = program.name(reader_interleave);
  std::vector<CalibrationPoint> points;
  for (int p : parallelisms) {
    schema::Pipeline source;
    source.set_name(program.program().name() + ".calibrate");
    for (int i = 0; i < program.size(); ++i) {
      if (!keep.count(i)) continue;
      schema::Node* copy = source.add_nodes();
      *copy = program.node(i);
      if (i == reader_interleave) {
        const OpDef& op = program.op(i);
        op.set_parallelism(copy, p);
        op.set_cycle_length(copy, std::max(p, op.cycle_length(*copy)));
        if (op.set_deterministic != nullptr) op.set_deterministic(copy, false);
      }
    }
    *source.add_nodes() = MakeRepeatNode(name + ".calibrate_repeat", name, -1);
    PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(source), "the calibration pipeline"));

    RunConfig config;
    config.seconds = seconds_per_point;
    config.snapshot_every_seconds = seconds_per_point;
    config.storage = storage;
    config.base_dir = base_dir;
    PLUMBER_ASSIGN_OR_RETURN(RunResult r, RunPipeline(env, graph, config));
    if (r.end_status == "error") return r.error.WithContext("calibrating at read parallelism " + std::to_string(p));
    int64_t bytes = 0;
    for (const auto& n : r.final_snapshot.nodes()) bytes += n.storage_bytes_read();
    if (r.seconds <= 0) return Status::Internal("calibration run took no time");
    points.push_back({p, static_cast<double>(bytes) / r.seconds});
  }
  return points;
}

}  // namespace plumber::runtime
