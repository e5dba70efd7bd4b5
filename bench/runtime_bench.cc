// plumber_bench [SECONDS]: measures what issues 3 and 15 set targets for.
//   tracing overhead  throughput traced / untraced, tiny-op pipeline
//                     (range -> map(add) -> batch(256), target >= 0.95) and
//                     the image example (target >= 0.99);
//   engine efficiency range -> map(cpu_burn 200us, parallelism = cores) ->
//                     batch(32) against a hand loop of the same burns on the
//                     same cores (target >= 0.95);
//   hand-off          the tiny-op pipeline with its map at parallelism 2
//                     against the same map inline (target >= 0.8), and the
//                     hand-off's cost per element at parallelism 2, 4, 8:
//                     the calibration `plumber run` records (one element at
//                     a time, and chunked) and what the pipeline pays
//                     (target < 5 us per element);
//   tracing accuracy  CPU charged per element of map(cpu_burn 1000us) at
//                     parallelism 1 and 4 (target 1000us +- 10%).
// Each throughput is the median of three runs alternated with the runs it
// is compared with, so that a busy neighbour hurts both sides alike; the
// tracing overheads, a few percent, are medians of nine paired ratios
// (Overhead). Prints
// the load average first (figures taken under load are not comparable) and
// one line per measurement.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/calibrate.h"
#include "runtime/datagen.h"
#include "runtime/run.h"
#include "runtime/stats.h"
#include "runtime/udf.h"
#include "traceio/pipeline_io.h"

namespace plumber::runtime {
namespace {

ProgramGraph Parse(const std::string& json) {
  auto p = ParsePipeline(json, "bench");
  if (!p.ok()) {
    std::fprintf(stderr, "bad bench pipeline: %s\n", p.status().ToString().c_str());
    std::exit(1);
  }
  auto g = ProgramGraph::Build(std::move(*p), "bench");
  if (!g.ok()) {
    std::fprintf(stderr, "bad bench pipeline: %s\n", g.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*g);
}

// Elements per second out of the root (batches x batch size).
double Throughput(const ProgramGraph& p, double seconds, bool tracing, int64_t batch, const std::string& base = "",
                  RunResult* out = nullptr) {
  RunConfig c;
  c.seconds = seconds;
  c.warmup_seconds = std::min(1.0, seconds / 4);
  c.tracing = tracing;
  c.base_dir = base;
  auto r = RunPipeline(Env::Default(), p, c);
  if (!r.ok() || r->end_status == "error") {
    std::fprintf(stderr, "run failed: %s\n", r.ok() ? r->error.ToString().c_str() : r.status().ToString().c_str());
    std::exit(1);
  }
  if (out) *out = *r;
  return static_cast<double>(r->measured_batches * batch) / r->measured_seconds;
}

// The 1-minute load average now, printed with each row: the machine may be
// shared, and a row measured under load is not comparable with one that
// was not.
std::string Load() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "load ?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "load %.2f", load[0]);
  return buf;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Medians of three alternated runs of `a` and of `b`.
// Medians of three alternated runs of `a` and of `b`. With
// PLUMBER_BENCH_VERBOSE set, each run's figure goes to stderr: a median
// hides a bimodal measure.
template <typename A, typename B>
std::pair<double, double> Alternated(A&& a, B&& b) {
  static const bool verbose = std::getenv("PLUMBER_BENCH_VERBOSE") != nullptr;
  std::vector<double> va, vb;
  for (int i = 0; i < 3; ++i) {
    vb.push_back(b());
    va.push_back(a());
    if (verbose) std::fprintf(stderr, "  run %d: %.0f vs %.0f\n", i, va.back(), vb.back());
  }
  return {Median(va), Median(vb)};
}

// Throughput traced / untraced, as the median of the ratios of nine pairs
// of runs of `seconds`, each pair run back to back and the order inside
// a pair swapped each time. A tracing cost of a few percent is smaller than
// how much this VM's speed drifts over a minute (CPU per element of the
// same untraced run moved from 30 to 36 ns between sets): a ratio of
// medians compares runs tens of seconds apart, a paired ratio runs a few
// seconds apart, and the quartiles of the pairs show how far one may
// trust the median. The CPU per element (process CPU over elements) of
// each run gives a second, steadier reading of the same cost.
void Overhead(const char* what, const ProgramGraph& p, double seconds, int64_t batch, const std::string& base,
              double target) {
  const std::string load = Load();
  constexpr int kPairs = 9;
  std::vector<double> on, off, ratio, cpu_on, cpu_off, cpu_ratio;
  auto run = [&](bool tracing, std::vector<double>& rate, std::vector<double>& cpu) {
    RunResult r;
    rate.push_back(Throughput(p, seconds, tracing, batch, base, &r));
    cpu.push_back(static_cast<double>(r.final_snapshot.process_cpu_ns()) /
                  static_cast<double>(std::max<int64_t>(1, r.batches * batch)));
  };
  static const bool verbose = std::getenv("PLUMBER_BENCH_VERBOSE") != nullptr;
  for (int i = 0; i < kPairs; ++i) {
    if (i % 2 == 0) {
      run(true, on, cpu_on);
      run(false, off, cpu_off);
    } else {
      run(false, off, cpu_off);
      run(true, on, cpu_on);
    }
    ratio.push_back(on.back() / off.back());
    cpu_ratio.push_back(cpu_off.back() / cpu_on.back());
    if (verbose) std::fprintf(stderr, "  pair %d: %.0f vs %.0f  ratio %.3f\n", i, on.back(), off.back(), ratio.back());
  }
  auto quartiles = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return std::pair{v[v.size() / 4], v[v.size() - 1 - v.size() / 4]};
  };
  const auto [lo, hi] = quartiles(ratio);
  const auto [clo, chi] = quartiles(cpu_ratio);
  std::printf("tracing overhead  %-10s on %.0f/s  off %.0f/s  ratio %.3f [%.3f-%.3f]  (target >= %.2f); CPU per "
              "element on %.1f ns  off %.1f ns  ratio %.3f [%.3f-%.3f]  (median of %d paired ratios [quartiles]; "
              "%s before, %s after)\n",
              what, Median(on), Median(off), Median(ratio), lo, hi, target, Median(cpu_on), Median(cpu_off),
              Median(cpu_ratio), clo, chi, kPairs, load.c_str(), Load().c_str());
}

std::string TinyOp(int parallelism) {
  return R"({"nodes":[{"name":"r","op":"range","range":{"stop":1000000000000}},
             {"name":"m","op":"map","inputs":["r"],"map":{"parallelism":)" +
         std::to_string(parallelism) + R"(,"udf":[{"op":"add"}]}},
             {"name":"b","op":"batch","inputs":["m"],"batch":{"batch_size":256}}]})";
}

// Process CPU nanoseconds per element of a run of the tiny-op pipeline.
double CpuPerElement(const RunResult& r) {
  return static_cast<double>(r.final_snapshot.process_cpu_ns()) / static_cast<double>(std::max<int64_t>(1, r.batches * 256));
}

void Handoff(double seconds) {
  const ProgramGraph inline_map = Parse(TinyOp(1));
  RunResult ri;
  for (int p : {2, 4, 8}) {
    const ProgramGraph pooled = Parse(TinyOp(p));
    RunResult rp;
    const std::string load = Load();
    auto [with_pool, without] = Alternated([&] { return Throughput(pooled, seconds, true, 256, "", &rp); },
                                           [&] { return Throughput(inline_map, seconds, true, 256, "", &ri); });
    const double wall_us = (1 / with_pool - 1 / without) * 1e6;
    const double cpu_us = (CpuPerElement(rp) - CpuPerElement(ri)) / 1000;
    std::printf("hand-off          tiny-op map parallelism %d vs inline: %.0f/s vs %.0f/s  ratio %.3f%s  "
                "per element: %+.3f us wall, %+.3f us CPU  (target < 5 us)  [%s before, %s after]\n",
                p, with_pool, without, with_pool / without, p == 2 ? " (target >= 0.80)" : "", wall_us, cpu_us,
                load.c_str(), Load().c_str());
  }
  for (int p : {2, 4, 8}) {
    std::vector<double> cpu, latency, chunked;
    for (int i = 0; i < 3; ++i) {
      const HandoffCost c = MeasureHandoff(p, std::min(1.0, seconds / 4));
      cpu.push_back(c.cpu_ns);
      latency.push_back(c.latency_ns);
      chunked.push_back(c.chunked_cpu_ns);
    }
    std::printf("hand-off          calibration parallelism %d: one element alone %.2f us CPU, round trip %.2f us; "
                "chunked %.3f us CPU per element  (median of 3)\n",
                p, Median(cpu) / 1000, Median(latency) / 1000, Median(chunked) / 1000);
  }
}

int64_t ProcessCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Burns per second on `threads` threads; *cpu_per_burn (when given) gets the
// process CPU nanoseconds per burn.
double HandLoop(int threads, double seconds, double micros, double* cpu_per_burn = nullptr) {
  const auto iters = static_cast<uint64_t>(micros * BurnIterationsPerMicro());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::vector<std::thread> pool;
  const int64_t t0 = MonoNanos();
  const int64_t cpu0 = ProcessCpuNanos();
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        BurnLoop(iters);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  if (cpu_per_burn) {
    *cpu_per_burn = static_cast<double>(ProcessCpuNanos() - cpu0) / static_cast<double>(std::max<int64_t>(1, done.load()));
  }
  return static_cast<double>(done.load()) / (static_cast<double>(MonoNanos() - t0) / 1e9);
}

}  // namespace
}  // namespace plumber::runtime

// plumber_bench [SECONDS [handoff|tiny|engine]]: "handoff" runs the hand-off
// rows alone, "tiny" the tiny-op tracing overhead alone, "engine" the engine
// efficiency alone.
int main(int argc, char** argv) {
  using namespace plumber::runtime;
  KeepFreedMemoryForReuse();  // as the plumber binary does
  const double seconds = argc > 1 ? std::atof(argv[1]) : 4.0;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  BurnIterationsPerMicro();  // calibrate before anything is timed
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3) std::printf("load average      %.2f %.2f %.2f (%d cores)\n", load[0], load[1], load[2], cores);
  const std::string only = argc > 2 ? argv[2] : "";

  // Output goes to logs: print each row as it is measured.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  if (only.empty() || only == "handoff") Handoff(seconds);
  if (only == "handoff") return 0;

  // Tracing overhead, tiny ops.
  if (only.empty() || only == "tiny") Overhead("tiny-op", Parse(TinyOp(1)), seconds, 256, "", 0.95);
  if (only == "tiny") return 0;

  // Tracing overhead, image pipeline over generated data.
  if (only.empty()) {
    const std::string dir = (std::filesystem::temp_directory_path() / ("plumber-bench-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir + "/data");
    ImageGenOptions g;
    g.files = 4;
    g.records_per_file = 32;
    if (!GenerateImages(plumber::Env::Default(), dir + "/data", g).ok()) return 1;
    auto image = plumber::LoadProgram(plumber::Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/examples/image.json");
    if (!image.ok()) return 1;
    Overhead("image", *image, seconds, 32, dir, 0.99);
    std::filesystem::remove_all(dir);
  }

  // Engine efficiency: the pipeline against the hand loop on all cores.
  const std::string par = std::to_string(cores);
  auto burn = Parse(R"({"nodes":[{"name":"r","op":"range","range":{"stop":1000000000000}},
      {"name":"m","op":"map","inputs":["r"],"map":{"parallelism":)" + par +
                    R"(,"udf":[{"op":"cpu_burn","args":{"micros":200}}]}},
      {"name":"b","op":"batch","inputs":["m"],"batch":{"batch_size":32}}]})");
  const std::string engine_load = Load();
  // Also CPU per burn, pipeline against hand loop: under load the scheduler
  // shares the cores among everyone's threads, and wall-clock throughput
  // says more about that share than about the engine; CPU per element is
  // what the engine adds to each burn.
  std::vector<double> cpu_engine, cpu_hand;
  auto [engine, hand] = Alternated(
      [&] {
        RunResult r;
        const double t = Throughput(burn, seconds, true, 32, "", &r);
        cpu_engine.push_back(static_cast<double>(r.final_snapshot.process_cpu_ns()) /
                             static_cast<double>(std::max<int64_t>(1, r.batches * 32)));
        return t;
      },
      [&] {
        double c = 0;
        const double t = HandLoop(cores, seconds, 200, &c);
        cpu_hand.push_back(c);
        return t;
      });
  std::printf("engine efficiency cpu_burn 200us x %d cores: pipeline %.0f/s  hand loop %.0f/s  ratio %.3f  (target >= 0.95); "
              "CPU per burn pipeline %.1f us  hand loop %.1f us  ratio %.3f  [%s before, %s after]\n",
              cores, engine, hand, engine / hand, Median(cpu_engine) / 1000, Median(cpu_hand) / 1000,
              Median(cpu_hand) / Median(cpu_engine), engine_load.c_str(), Load().c_str());
  if (only == "engine") return 0;

  // Tracing accuracy, against the nominal 1000us and against what the burn
  // really costs on this machine now (its calibration may have been taken
  // under a different load).
  int64_t burn_ns = 0;
  {
    const auto iters = static_cast<uint64_t>(1000 * BurnIterationsPerMicro());
    std::vector<int64_t> costs;
    for (int i = 0; i < 51; ++i) {
      const int64_t t0 = ThreadCpuNanos();
      BurnLoop(iters);
      costs.push_back(ThreadCpuNanos() - t0);
    }
    std::sort(costs.begin(), costs.end());
    burn_ns = costs[costs.size() / 2];
  }
  std::printf("tracing accuracy  one cpu_burn 1000us costs %.1f us of thread CPU here (median of 51)\n", burn_ns / 1000.0);
  for (int p : {1, 4}) {
    auto pl = Parse(R"({"nodes":[{"name":"r","op":"range","range":{"stop":1000000000000}},
        {"name":"m","op":"map","inputs":["r"],"map":{"parallelism":)" + std::to_string(p) +
                    R"(,"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}},
        {"name":"b","op":"batch","inputs":["m"],"batch":{"batch_size":32}}]})");
    RunResult r;
    Throughput(pl, seconds, true, 32, "", &r);
    for (const auto& n : r.final_snapshot.nodes()) {
      if (n.name() != "m") continue;
      const double us = static_cast<double>(n.active_cpu_ns()) / static_cast<double>(n.elements_produced()) / 1000;
      std::printf("tracing accuracy  cpu_burn 1000us parallelism %d: charged %.1f us/element  error %+.1f%% vs nominal, "
                  "%+.1f%% vs measured  (target +-10%%)\n",
                  p, us, (us - 1000) / 10, (us * 1000 / static_cast<double>(burn_ns) - 1) * 100);
    }
  }
  return 0;
}
