// The end-to-end benchmark of issues 6 and 13: does plumber's rewrite make
// the example pipelines as fast as they can be on this machine, and does
// its model predict what they measure? For each workload it measures, in
// one run of this program: the naive pipeline; the heuristic users apply by
// hand (every parallel stage at the number of cores, a prefetch after
// each); plumber's one-shot rewrite of the naive trace; plumber after the
// optimize loop; the best configuration of a small exhaustive grid over the
// same knobs (parallelism per stage, beyond the cores for stages that wait;
// cache point; output prefetch); and plumber's predictions next to the
// measurements: the as-traced prediction of the naive trace against the
// naive pipeline, the rewrite's prediction against the rewritten one. The
// naive, one-shot and grid-best figures are medians of runs alternated
// among the three (A B C A B C ...), so that a change in the machine's load
// hits all three alike. It also runs the step-wise baselines of the paper's
// Figure 6 (per step, the top-ranked bottleneck gets more threads: those
// the ranking says lift a waiting stage to the next limit, else double;
// from the naive pipeline with an output prefetch, against a random walk
// of doublings) and counts steps to 95% of the grid optimum.
//
// Writes RESULTS.md and e2e.svg into the directory given (bench/ by
// default). Usage: plumber_e2e_bench [--seconds S] [--out DIR]
// [--only NAME] [--no-steps] [--repeats N]. Throughputs here are timing
// measurements on a possibly shared machine: they belong in this report,
// never in unit tests.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "analysis/analyze.h"
#include "base/env.h"
#include "optimize/optimize_loop.h"
#include "optimize/output_check.h"
#include "pipeline/op_table.h"
#include "pipeline/validate.h"
#include "report/optimize_format.h"
#include "rewrite/cache_placement.h"
#include "rewrite/rewriter.h"
#include "rewrite/shape_search.h"
#include "runtime/allocator.h"
#include "runtime/datagen.h"
#include "runtime/run.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::bench {
namespace {

namespace fs = std::filesystem;

struct Workload {
  std::string name;
  std::string file;  // under the source tree: examples/ or bench/e2e/pipelines/
  std::string what;
  runtime::StorageOptions storage;
  std::string storage_text;
  // Stages that wait (a remote call in a UDF, reads under request
  // latency): their threads pay beyond the core count, so the grid tries
  // them at 1, cores, 4x, 16x and 64x cores.
  std::vector<std::string> waiting;
  // Files the workload's data has: an interleave over them opens no more
  // than that many, so its grid stops there (0: no cap).
  int files = 0;
  // Directory under the bench's temporary root whose data/ the pipeline
  // reads ("": the shared dataset).
  std::string data_root;
  // Memory plumber may plan a cache with; set below the dataset's size for
  // the storage workloads so that reading, not a cache, is what gets tuned
  // (the grid then tries no cache either).
  std::optional<uint64_t> memory;
  // Room on local disk for a file cache (the rewrite's and the grid's):
  // the data does not fit `memory` but fits there.
  bool file_cache = false;
  // The data decodes everywhere (`rewrite --assume-valid-data`): a filter
  // or a shuffle may move above the decode.
  bool assume_valid_data = false;
};

struct Config {
  std::string label;
  schema::Pipeline pipeline;
};

struct Measurement {
  double throughput = 0;
  std::string end_status;
};

struct WorkloadResult {
  Workload w;
  // naive, heuristic, oneshot and grid: medians of the alternated runs
  // below; optimized: a single run.
  double naive = 0, heuristic = 0, oneshot = 0, optimized = 0, grid = 0;
  std::vector<double> naive_runs, heuristic_runs, oneshot_runs, grid_runs;
  // The best grid point without a cache, rerun when the best needs one.
  std::vector<double> nocache_runs;
  // The naive run whose trace the analysis and the rewrite read: the
  // median of the traced runs, in the order they ran.
  double naive_traced = 0;
  std::vector<double> naive_traced_runs;
  // The model on the naive trace: the pipeline as configured, and where
  // it says the limit is.
  std::optional<double> as_traced;
  std::string as_traced_limit;
  double oneshot_predicted = 0;
  std::optional<double> optimized_predicted;
  int optimize_steps = 0;
  int optimize_best_step = 0;
  std::string grid_best;
  // The grid point's single run that picked it (biased high: the best of
  // many noisy runs), before its alternated reruns.
  double grid_best_first = 0;
  int grid_size = 0;
  std::string bottleneck;
  std::vector<std::string> oneshot_changes;
  // Figure 6: steps to reach 95% of the walks' target (-1: not within
  // the limit): the optimum, or when that needs a cache, the best grid
  // point without one (a walk only moves threads).
  double walk_target = 0;
  bool walk_target_without_cache = false;
  int steps_lp = -1, steps_ranked = -1;
  std::vector<int> steps_random;  // one per seed
  int random_limit = 0;           // steps a random walk was allowed
  std::vector<double> ranked_curve;
  std::vector<std::vector<double>> random_curves;
};

double g_seconds = 3;
int g_cores = 2;
int g_repeats = 3;
// The machine's hand-off price, measured once at the start and recorded in
// every traced run, as `plumber run` and `plumber optimize` record it.
schema::HandoffCost g_handoff;
int g_runs = 0;      // pipeline runs so far, to say what a run of the bench costs
std::string g_base;  // where the data and the pipelines live

std::string BaseDir(const Workload& w) { return w.data_root.empty() ? g_base : g_base + "/" + w.data_root; }

// Where a workload's file caches go (created by main).
std::string FileCacheDir(const Workload& w) { return g_base + "/" + w.name + "-caches"; }

Measurement Measure(const schema::Pipeline& p, const Workload& w, const std::string& trace = "") {
  ++g_runs;
  runtime::RunConfig c;
  c.seconds = g_seconds;
  c.warmup_seconds = std::min(1.0, g_seconds / 3);
  c.snapshot_every_seconds = std::clamp(g_seconds / 10, 0.1, 1.0);
  c.storage = w.storage;
  c.base_dir = BaseDir(w);
  c.trace_path = trace;
  // Calibrated right before each traced run, as `plumber run` does: one
  // calibration at the start of the bench priced every workload with that
  // moment's machine, and on this host a moment can be 30% slow at copies
  // (2026-12-03: the cached workload's one-shot predicted 8.2k against
  // 10.8k measured, from prices measured just after a loaded minute).
  if (!trace.empty()) c.handoff = runtime::CalibrateHandoff();
  Measurement m;
  auto graph = ProgramGraph::Build(p, "the benchmark's pipeline");
  if (!graph.ok()) {
    std::fprintf(stderr, "  invalid pipeline: %s\n", graph.status().ToString().c_str());
    m.end_status = "error";
    return m;
  }
  auto r = runtime::RunPipeline(Env::Default(), *graph, c);
  if (!r.ok()) {
    std::fprintf(stderr, "  run failed: %s\n", r.status().ToString().c_str());
    m.end_status = "error";
    return m;
  }
  m.end_status = r->end_status;
  if (r->end_status == "error") std::fprintf(stderr, "  run error: %s\n", r->error.ToString().c_str());
  m.throughput = r->measured_seconds > 0 ? static_cast<double>(r->measured_batches) / r->measured_seconds : 0;
  return m;
}

// Sets a parallel stage's threads; an interleave opens at least as many
// datasets as it has threads.
void SetParallelism(schema::Node* node, int p) {
  const OpDef& op = *FindOp(node->op());
  op.set_parallelism(node, p);
  if (op.has_function() && op.cycle_length(*node) < p) op.set_cycle_length(node, p);
}

bool Parallel(const schema::Node& node) {
  const OpDef* def = FindOp(node.op());
  return def != nullptr && def->parallelizable();
}

void AddPrefetch(schema::Pipeline* p, const std::string& target, int buffer) {
  InsertAbove(p, target, MakePrefetchNode(target + "_prefetch", target, buffer));
}

// A memory cache after `target`, or with `file_dir` a file cache there.
void AddCache(schema::Pipeline* p, const std::string& target, const std::string& file_dir) {
  InsertAbove(p, target,
              MakeCacheNode(target + "_cache", target, file_dir.empty() ? "" : file_dir + "/" + target + ".grid"));
}

// What users do by hand: every parallel stage at the number of cores, a
// prefetch after each of them (and so at the output).
schema::Pipeline Heuristic(schema::Pipeline p) {
  std::vector<std::string> stages;
  for (auto& node : *p.mutable_nodes()) {
    if (!Parallel(node)) continue;
    SetParallelism(&node, g_cores);
    stages.push_back(node.name());
  }
  for (const auto& s : stages) AddPrefetch(&p, s, 2);
  if (!p.output().empty() && p.output().find("_prefetch") == std::string::npos) AddPrefetch(&p, OutputNodeName(p), 2);
  return p;
}

// Cache candidates for the grid: the input of a repeat, when the analysis
// found it cacheable (finite, deterministic) - where a cache can pay.
std::vector<std::string> CacheCandidates(const schema::Pipeline& p, const analysis::Analysis& report) {
  std::vector<std::string> out;
  for (const auto& n : p.nodes()) {
    const OpDef* op = FindOp(n.op());
    if (op == nullptr || op->rereads_input == nullptr || !op->rereads_input(n) || n.inputs_size() != 1) continue;
    const auto* m = report.Find(n.inputs(0));
    if (m != nullptr && m->cacheable) out.push_back(n.inputs(0));
  }
  return out;
}

// The threads the grid tries for one parallel stage: 1 and the cores; for
// a stage that waits also 4x, 16x and 64x the cores (64 per core is the
// most the rewrite gives, kMaxThreadsPerCore), an interleave never more
// than its files. One knob per stage: an interleave's cycle_length follows
// its parallelism (SetParallelism), since each thread reads its own file.
std::vector<int> GridValues(const schema::Node& n, const Workload& w) {
  std::vector<int> candidates = {1, g_cores};
  if (std::find(w.waiting.begin(), w.waiting.end(), n.name()) != w.waiting.end()) {
    for (int f : {4, 16, 64}) candidates.push_back(f * g_cores);
  }
  std::vector<int> values;
  for (int v : candidates) {
    if (FindOp(n.op())->has_function() && w.files > 0) v = std::min(v, w.files);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

std::vector<Config> Grid(const schema::Pipeline& naive, const Workload& w, const analysis::Analysis& report) {
  std::vector<std::pair<std::string, std::vector<int>>> knobs;
  for (const auto& n : naive.nodes()) {
    if (Parallel(n)) knobs.emplace_back(n.name(), GridValues(n, w));
  }
  std::vector<std::string> caches = {""};
  if (!w.memory || w.file_cache) {
    for (const auto& c : CacheCandidates(naive, report)) caches.push_back(c);
  }
  std::vector<Config> out;
  std::vector<size_t> idx(knobs.size(), 0);
  for (;;) {
    for (const auto& cache : caches) {
      for (int prefetch = 0; prefetch < 2; ++prefetch) {
        Config c;
        c.pipeline = naive;
        std::string label;
        for (size_t k = 0; k < knobs.size(); ++k) {
          for (auto& node : *c.pipeline.mutable_nodes()) {
            if (node.name() == knobs[k].first) SetParallelism(&node, knobs[k].second[idx[k]]);
          }
          label += fmt::format("{}={} ", knobs[k].first, knobs[k].second[idx[k]]);
        }
        if (!cache.empty()) {
          AddCache(&c.pipeline, cache, w.file_cache ? FileCacheDir(w) : "");
          label += "cache@" + cache + " ";
        }
        if (prefetch) {
          AddPrefetch(&c.pipeline, OutputNodeName(c.pipeline), 4);
          label += "prefetch";
        }
        c.label = label;
        out.push_back(std::move(c));
      }
    }
    size_t k = 0;
    while (k < knobs.size() && ++idx[k] == knobs[k].second.size()) idx[k++] = 0;
    if (k == knobs.size()) break;
  }
  return out;
}

analysis::AnalysisOptions AnalysisOptionsFor(const Workload& w) {
  analysis::AnalysisOptions o;
  o.cores = g_cores;
  o.memory_bytes = w.memory;
  o.solve_programs = true;  // the plan the rewrite applies
  if (w.file_cache) rewrite::PlaceFileCache(Env::Default(), FileCacheDir(w), "", &o.plan);
  return o;
}

StatusOr<analysis::Analysis> Analyze(const std::string& trace, const Workload& w) {
  return analysis::AnalyzeTraceFile(Env::Default(), trace, AnalysisOptionsFor(w));
}

// What `plumber rewrite` does: the shape search, each change verified on
// the workload's data (16 outputs, as the command's default), then the
// knobs.
StatusOr<rewrite::RewriteResult> OneShot(const std::string& trace, const Workload& w,
                                         const analysis::Analysis& report) {
  const analysis::AnalysisOptions o = AnalysisOptionsFor(w);
  auto loaded = analysis::LoadTraceFile(Env::Default(), trace, o.window, o.max_memory_bytes);
  if (!loaded.ok()) return loaded.status();
  rewrite::ShapeSearchOptions shape;
  shape.legality.assume_valid_data = w.assume_valid_data;
  shape.verify = [dir = BaseDir(w)](const schema::Pipeline& traced,
                                    const schema::Pipeline& reshaped) -> StatusOr<rewrite::ShapeVerdict> {
    auto check = optimize::CompareOutputs(Env::Default(), traced, reshaped, dir, 16, /*any_order=*/false);
    if (!check.ok()) return check.status();
    return rewrite::ShapeVerdict{check->same, check->same ? "same" : check->difference};
  };
  auto searched = rewrite::SearchShapes(*loaded, report, o, rewrite::RewriteOptions{}, shape);
  if (!searched.ok()) return searched.status();
  return std::move(searched->rewrite);
}

// The knob (a parallel node) that governs `name`: itself, or the interleave
// whose function it belongs to.
std::string KnobOf(const schema::Pipeline& p, const analysis::Analysis& report, const std::string& name) {
  const auto* m = report.Find(name);
  std::string knob = m != nullptr && !m->interleave.empty() ? m->interleave : name;
  for (const auto& n : p.nodes()) {
    if (n.name() == knob && Parallel(n)) return knob;
  }
  return "";
}

// The most threads a walk gives a stage: the most the grid tries for any
// stage (64 per core; an interleave no more than its files). The cap is the
// same for every stage, as the paper's random walk knows nothing of a stage
// either: more threads for a stage that cannot use them is the step it
// wastes.
int WalkCap(const schema::Node& node, const Workload& w) {
  int cap = analysis::kMaxThreadsPerCore * g_cores;
  if (FindOp(node.op())->has_function() && w.files > 0) cap = std::min(cap, w.files);
  return cap;
}

const schema::Node* FindNode(const schema::Pipeline& p, const std::string& name) {
  for (const auto& node : p.nodes()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

// Whether the knob can still be doubled (Double).
bool CanDouble(const schema::Pipeline& p, const std::string& knob, const Workload& w) {
  const schema::Node* node = FindNode(p, knob);
  return node != nullptr && NodeParallelism(*node) < WalkCap(*node, w);
}

// One step of a walk: the knob's threads doubled, or set to `at_least`
// when that is more (the ranked walk's step for a stage that waits, sized
// by the ranking), up to WalkCap (a waiting stage needs tens of threads,
// which one thread per step would take tens of measured runs to reach).
// False when it is at the cap already.
bool Double(schema::Pipeline* p, const std::string& knob, const Workload& w, int at_least = 0) {
  if (!CanDouble(*p, knob, w)) return false;
  for (auto& node : *p->mutable_nodes()) {
    if (node.name() == knob) {
      SetParallelism(&node, std::min(WalkCap(node, w), std::max(at_least, 2 * NodeParallelism(node))));
    }
  }
  return true;
}

constexpr int kTracedRuns = 3;
constexpr int kMaxWalkSteps = 8;
constexpr int kRandomWalks = 3;

// Where the walks of Figure 6 start, as in the paper: the naive pipeline
// with a prefetch at its output. Without it a walk, which only moves
// threads, could not reach an optimum that overlaps the last stage with
// the consumer (image, skewed and latency did not, 2026-12-02).
schema::Pipeline WalkStart(const schema::Pipeline& naive) {
  schema::Pipeline p = naive;
  AddPrefetch(&p, OutputNodeName(p), 4);
  return p;
}
std::string WalkStartTrace(const std::string& dir, const Workload& w) {
  return dir + fmt::format("/{}-walk-start.pb", w.name);
}

// A walk of Figure 6 from WalkStart: per step, one stage's threads doubled
// (Double), until the throughput reaches `target`. Ranked picks the
// top-ranked bottleneck of `plumber rank` on that step's trace that can
// still use more (threads when it waits, cores when its CPU limits it);
// random picks a parallel stage below the cap with `seed`.
// `start_throughput` is step 0, measured once (traced at WalkStartTrace)
// for all walks. Returns the steps taken, or -1 when not reached within
// `max_steps`.
int StepWise(const schema::Pipeline& start, const Workload& w, double target, double start_throughput, bool ranked,
             unsigned seed, int max_steps, std::vector<double>* curve, const std::string& dir) {
  std::mt19937 rng(seed);
  schema::Pipeline p = start;
  std::vector<std::string> knobs;
  for (const auto& n : start.nodes()) {
    if (Parallel(n)) knobs.push_back(n.name());
  }
  curve->push_back(start_throughput);
  if (start_throughput >= 0.95 * target) return 0;
  std::string trace = WalkStartTrace(dir, w);
  for (int step = 1; step <= max_steps; ++step) {
    bool moved = false;
    if (ranked) {
      auto report = Analyze(trace, w);
      if (!report.ok()) break;
      for (const auto& name : report->ranking) {
        const std::string knob = KnobOf(p, *report, name);
        const auto* m = report->Find(name);
        if (knob.empty() || m == nullptr) continue;
        // What the ranking says the stage could use: threads when it
        // waits, cores when its CPU limits it, nothing more at its cap.
        const double can_use = m->limit == analysis::Limit::kWait  ? m->max_threads
                               : m->limit == analysis::Limit::kCpu ? m->max_cores
                                                                   : 0;
        if (m->threads >= can_use) continue;
        // A waiting stage gets the threads the ranking says lift it to the
        // next limit (threads_to_pass), one step where doubling took up to 6.
        const int sized = m->threads_to_pass ? static_cast<int>(std::ceil(*m->threads_to_pass)) : 0;
        if ((moved = Double(&p, knob, w, sized))) break;
      }
    } else {
      std::vector<std::string> open;
      for (const auto& k : knobs) {
        if (CanDouble(p, k, w)) open.push_back(k);
      }
      if (!open.empty()) moved = Double(&p, open[std::uniform_int_distribution<size_t>(0, open.size() - 1)(rng)], w);
    }
    if (!moved) break;
    trace = dir + fmt::format("/{}-{}-{}.pb", w.name, ranked ? "ranked" : "random", step);
    const Measurement m = Measure(p, w, ranked ? trace : "");
    curve->push_back(m.throughput);
    std::fprintf(stderr, "    %s step %d: %.1f\n", ranked ? "ranked" : fmt::format("random({})", seed).c_str(), step,
                 m.throughput);
    if (m.throughput >= 0.95 * target) return step;
  }
  return -1;
}

std::string Ratio(double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : "-"; }
std::string Pct(double predicted, double measured) {
  return measured > 0 ? fmt::format("{:+.0f}%", 100 * (predicted - measured) / measured) : "-";
}
// (predicted - measured) / measured; nullopt when either is missing.
std::optional<double> Error(std::optional<double> predicted, double measured) {
  if (!predicted || *predicted <= 0 || measured <= 0) return std::nullopt;
  return (*predicted - measured) / measured;
}
// "15.2 (+3%)": a prediction and its error against the measurement.
std::string PredictionCell(std::optional<double> predicted, double measured) {
  if (!predicted || *predicted <= 0) return "-";
  return fmt::format("{:.1f} ({})", *predicted, Pct(*predicted, measured));
}
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
std::string Runs(const std::vector<double>& v) {
  std::vector<std::string> out;
  for (double x : v) out.push_back(fmt::format("{:.1f}", x));
  return out.empty() ? "-" : fmt::format("{}", fmt::join(out, ", "));
}
std::string Steps(int s, int limit) { return s < 0 ? fmt::format(">{}", limit) : std::to_string(s); }

// The machine's load average, to say how shared it was while measuring.
std::string LoadAverage() {
  auto text = ReadFileToString(Env::Default(), "/proc/loadavg", 4096);
  if (!text.ok()) return "unknown";
  const auto fields = text->substr(0, text->find(' ', text->find(' ', text->find(' ') + 1) + 1));
  return fields;
}
std::string g_load_start;

WorkloadResult RunWorkload(const Workload& w, const std::string& source_dir, const std::string& tmp, bool steps) {
  WorkloadResult r;
  r.w = w;
  std::fprintf(stderr, "== %s (%s)\n", w.name.c_str(), w.what.c_str());
  auto naive_program = LoadProgram(Env::Default(), source_dir + "/" + w.file);
  if (!naive_program.ok()) {
    std::fprintf(stderr, "  %s\n", naive_program.status().ToString().c_str());
    return r;
  }
  const ProgramGraph& naive_graph = *naive_program;
  const schema::Pipeline& naive = naive_graph.program();
  // The analysis reads the median of three traced naive runs: one run
  // taken just after the waiting workloads' 64 threads measured 23.6
  // against a naive median of 30.5 (cached, 2026-12-02), the model matched
  // that run within 1%, and every cost it handed the rewrite was 25% high.
  const std::string trace = tmp + "/" + w.name + "-naive.pb";
  std::vector<std::pair<double, std::string>> traced;
  for (int i = 0; i < kTracedRuns; ++i) {
    const std::string path = tmp + fmt::format("/{}-naive-{}.pb", w.name, i + 1);
    traced.emplace_back(Measure(naive, w, path).throughput, path);
    r.naive_traced_runs.push_back(traced.back().first);
  }
  std::sort(traced.begin(), traced.end());
  r.naive_traced = traced[traced.size() / 2].first;
  if (Status s = Env::Default()->RenameFile(traced[traced.size() / 2].second, trace); !s.ok()) {
    std::fprintf(stderr, "  %s\n", s.ToString().c_str());
    return r;
  }
  std::fprintf(stderr, "  naive (traced) %.1f, the median of %s\n", r.naive_traced,
               Runs(r.naive_traced_runs).c_str());
  const schema::Pipeline heuristic = Heuristic(naive);

  auto report = Analyze(trace, w);
  if (!report.ok()) {
    std::fprintf(stderr, "  analysis failed: %s\n", report.status().ToString().c_str());
    return r;
  }
  r.bottleneck = report->bottleneck;
  r.as_traced = report->as_traced.throughput;
  r.as_traced_limit = report->as_traced.limit.empty()
                          ? ""
                          : report->as_traced.limit + " at `" + report->as_traced.bottleneck + "`";
  std::fprintf(stderr, "  as traced: predicted %.1f (%s)\n", r.as_traced.value_or(0), r.as_traced_limit.c_str());
  auto rw = OneShot(trace, w, *report);
  if (rw.ok()) {
    r.oneshot_predicted = rw->predicted_after;
    for (const auto& a : rw->shape.applied) {
      r.oneshot_changes.push_back(rewrite::DescribeChange(a.change) + " (" + a.change.rule + ", verified)");
    }
    for (const auto& d : rw->shape.dropped) {
      std::fprintf(stderr, "  shape change dropped: %s: %s\n", rewrite::DescribeChange(d.change).c_str(),
                   d.why.c_str());
    }
    for (const auto& c : rw->changes) {
      r.oneshot_changes.push_back(c.before.empty() ? c.node + " " + c.what + " " + c.after
                                                   : c.node + " " + c.what + " " + c.before + "->" + c.after);
    }
  } else {
    std::fprintf(stderr, "  rewrite failed: %s\n", rw.status().ToString().c_str());
  }

  optimize::OptimizeOptions o;
  o.cores = g_cores;
  o.seconds_per_run = g_seconds;
  o.max_steps = 4;
  o.storage = w.storage;
  o.handoff = runtime::CalibrateHandoff();  // as `plumber optimize` does, once at its start
  o.memory_bytes = w.memory;
  o.base_dir = BaseDir(w);
  o.trace_dir = tmp + "/" + w.name + "-optimize";
  if (Env::Default()->CreateDirectories(o.trace_dir).ok()) {
    auto opt = optimize::Optimize(Env::Default(), naive_graph, o);
    if (opt.ok() && !opt->steps.empty()) {
      r.optimized = opt->best().measured;
      r.optimized_predicted = opt->best().predicted;
      r.optimize_steps = static_cast<int>(opt->steps.size());
      r.optimize_best_step = opt->best_step;
      g_runs += r.optimize_steps;  // each step is one measured run of the loop
      std::fprintf(stderr, "%s", report::StepTable(*opt).c_str());
    }
  }

  const auto grid = Grid(naive, w, *report);
  r.grid_size = static_cast<int>(grid.size());
  const Config* best = nullptr;
  const Config* best_nocache = nullptr;
  double best_without_cache = 0;
  for (const auto& c : grid) {
    const double x = Measure(c.pipeline, w).throughput;
    if (c.label.find("cache@") == std::string::npos && x > best_without_cache) {
      best_without_cache = x;
      best_nocache = &c;
    }
    std::fprintf(stderr, "  grid %-50s %.1f\n", c.label.c_str(), x);
    if (best == nullptr || x > r.grid_best_first) {
      r.grid_best_first = x;
      r.grid_best = c.label;
      best = &c;
    }
  }

  // The figures the targets are judged on, alternated run by run (naive,
  // heuristic, one-shot, grid best, naive, ...): a drift in the machine's
  // load then touches all four alike instead of one configuration's block
  // of runs. The grid's best point is rerun because the single run that
  // picked it is the maximum of many noisy runs, biased high. The
  // heuristic is a median too since a single run of it once measured 12%
  // over the storage workload's throttle, prefetches filled in the
  // warm-up draining inside the window. So is the best point without a
  // cache when the best has one: it is the walks' target, and from its
  // single grid run (55.4 on the cached workload) neither the ranked walk
  // (44.9) nor one of three random walks (46.8 at best) arrived.
  const bool walk_without_cache =
      best != nullptr && best->label.find("cache@") != std::string::npos && best_nocache != nullptr;
  for (int i = 0; i < g_repeats; ++i) {
    if (walk_without_cache) r.nocache_runs.push_back(Measure(best_nocache->pipeline, w).throughput);
    r.naive_runs.push_back(Measure(naive, w).throughput);
    r.heuristic_runs.push_back(Measure(heuristic, w).throughput);
    if (rw.ok()) r.oneshot_runs.push_back(Measure(rw->pipeline, w).throughput);
    if (best != nullptr) r.grid_runs.push_back(Measure(best->pipeline, w).throughput);
    std::fprintf(stderr, "  round %d: naive %.1f heuristic %.1f one-shot %.1f grid best %.1f\n", i + 1,
                 r.naive_runs.back(), r.heuristic_runs.back(),
                 r.oneshot_runs.empty() ? 0.0 : r.oneshot_runs.back(), r.grid_runs.empty() ? 0.0 : r.grid_runs.back());
  }
  r.naive = Median(r.naive_runs);
  r.heuristic = Median(r.heuristic_runs);
  r.oneshot = Median(r.oneshot_runs);
  r.grid = Median(r.grid_runs);
  std::fprintf(stderr, "  medians: naive %.1f (as traced %.1f) one-shot %.1f (predicted %.1f) grid %.1f\n", r.naive,
               r.as_traced.value_or(0), r.oneshot, r.oneshot_predicted, r.grid);

  // The best any measured configuration did is the optimum here: if
  // plumber's beat every grid point, the grid was too coarse.
  const double optimum = std::max({r.grid, r.oneshot, r.optimized, r.heuristic});
  if (steps) {
    // The loop's best step is the number of rewrites it took (0: the
    // pipeline as given was already there).
    r.steps_lp = r.oneshot >= 0.95 * optimum ? 1 : (r.optimized >= 0.95 * optimum ? r.optimize_best_step : -1);
    // Medians only: the optimize loop's best is a single run, and one
    // lucky run put the target where no later run of the same
    // configuration reached (image, 2026-12-02).
    r.walk_target = std::max({r.grid, r.oneshot, r.heuristic});
    if (walk_without_cache) {
      r.walk_target = Median(r.nocache_runs);
      r.walk_target_without_cache = true;
    }
    const schema::Pipeline start = WalkStart(naive);
    const double start_step = Measure(start, w, WalkStartTrace(tmp, w)).throughput;
    r.steps_ranked = StepWise(start, w, r.walk_target, start_step, true, 0, kMaxWalkSteps, &r.ranked_curve, tmp);
    // Ranked is 2x better when a random walk needs at least twice its
    // steps, so a random walk stops there (paper: three walks).
    r.random_limit = r.steps_ranked < 0 ? kMaxWalkSteps : std::max(2, 2 * r.steps_ranked);
    for (int i = 0; i < kRandomWalks; ++i) {
      r.random_curves.emplace_back();
      r.steps_random.push_back(StepWise(start, w, r.walk_target, start_step, false, 42 + i, r.random_limit,
                                        &r.random_curves.back(), tmp));
    }
  }
  return r;
}

// Grouped bars: each configuration's throughput over the best measured.
std::string Svg(const std::vector<WorkloadResult>& results) {
  const char* names[] = {"naive", "heuristic", "plumber one-shot", "plumber optimize", "grid optimum"};
  const char* colors[] = {"#bbbbbb", "#8da0cb", "#66c2a5", "#1b9e77", "#fc8d62"};
  const int group = 130, bar = 20, height = 260, top = 40, left = 50;
  const int width = left + group * static_cast<int>(results.size()) + 20;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">Throughput / best measured configuration ({} cores)</text>\n",
      width, height + top + 90, left, g_cores);
  for (int t = 0; t <= 4; ++t) {
    const double y = top + height - height * t / 4.0;
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.0f}\" y2=\"{:.0f}\" stroke=\"#ddd\"/>"
                     "<text x=\"{}\" y=\"{:.0f}\" text-anchor=\"end\">{:.2f}</text>\n",
                     left, width - 10, y, y, left - 5, y + 4, t / 4.0);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const double best = std::max({r.grid, r.oneshot, r.optimized, r.heuristic, r.naive, 1e-9});
    const double v[] = {r.naive, r.heuristic, r.oneshot, r.optimized, r.grid};
    const int x0 = left + 10 + group * static_cast<int>(i);
    for (int k = 0; k < 5; ++k) {
      const double h = height * std::min(1.0, v[k] / best);
      s += fmt::format("<rect x=\"{}\" y=\"{:.0f}\" width=\"{}\" height=\"{:.0f}\" fill=\"{}\"/>\n", x0 + k * bar,
                       top + height - h, bar - 2, h, colors[k]);
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + 2 * bar + bar / 2,
                     top + height + 15, r.w.name);
  }
  for (int k = 0; k < 5; ++k) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                     left + 150 * (k % 3), top + height + 35 + 18 * (k / 3), colors[k], left + 150 * (k % 3) + 16,
                     top + height + 46 + 18 * (k / 3), names[k]);
  }
  return s + "</svg>\n";
}

// The bench's targets, judged on the medians; "" when a figure is missing.
constexpr double kAsTracedTarget = 0.10, kAfterRewriteTarget = 0.15, kGridTarget = 0.95;

std::string Markdown(const std::vector<WorkloadResult>& results, double elapsed, bool steps) {
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string s = "# End-to-end benchmark (issues 6 and 13)\n\n";
  s += fmt::format(
      "Measured {} on this machine: {} cores, {} s per run ({:.2g} s of it warm-up), {} pipeline runs, "
      "{:.0f} s ({:.1f} min) in all. Load average (1, 5, 15 min) at the start: {}; at the end: {}. "
      "Produced by `bench/e2e.sh` (`plumber_e2e_bench`); throughputs are minibatches/s. **naive**, "
      "**heuristic**, **one-shot** and **grid** are each the median of {} runs alternated among the four "
      "(naive, heuristic, one-shot, grid best, naive, ...; the runs are listed under Workloads); optimize, "
      "every other grid point and the Figure 6 steps are single runs, so expect noise of several "
      "percent there, more under load.\n\n",
      date, g_cores, g_seconds, std::min(1.0, g_seconds / 3), g_runs, elapsed, elapsed / 60, g_load_start,
      LoadAverage(), g_repeats);
  s += "Configurations: **naive** (the example as written: parallelism 1, no prefetch, no cache); "
       "**heuristic** (every parallel stage at the core count, a prefetch after each); **one-shot** "
       "(`plumber rewrite` of the naive trace); **optimize** (best step of `plumber optimize`, at most "
       "4 runs); **grid** (the best point of an exhaustive grid, rerun: each parallel stage at 1 or the "
       "core count, a stage that waits also at 4x, 16x and 64x the cores (an interleave at most at its "
       "number of files), cache at each cacheable input of a repeat or none, output prefetch on or "
       "off).\n\n";
  s += fmt::format(
      "The machine's hand-off price, measured at the start (each traced run, and each optimize loop, "
      "calibrates its own right before it, as `plumber run` and `plumber optimize` do): {:.1f} us of CPU per element handed over alone back to back, {:.1f} us per chunk whose "
      "threads park and are woken, {:.0f} ns per chunked "
      "scalar, {:.0f} ns per 128-byte element with a buffer of its own and {:.3f} ns per byte beyond; "
      "{:.1f} us per element that waits among {} workers (its hand-off and wake-up); copying on one thread "
      "{:.3f} ns per byte, and {:.3f} more to stack elements made a quarter of a millisecond apart.\n\n",
      g_handoff.cpu_ns() / 1e3, g_handoff.parked_chunk_cpu_ns() / 1e3, g_handoff.chunked_cpu_ns(),
      g_handoff.payload_cpu_ns(),
      g_handoff.payload_cpu_ns_per_byte(), g_handoff.wait_cpu_ns() / 1e3, g_handoff.wait_parallelism(),
      g_handoff.copy_cpu_ns_per_byte(), g_handoff.cold_stacking_cpu_ns_per_byte());
  s += "| workload | naive | heuristic | one-shot | optimize (pred.) | grid (n) | plumber/naive | "
       "plumber/heuristic | plumber/grid | as traced: pred. (error) | after rewrite: pred. (error) |\n";
  s += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    const double plumber = std::max(r.oneshot, r.optimized);
    s += fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} ({}) | {:.1f} ({}) | {} | {} | {} | {} | {} |\n",
                     r.w.name, r.naive, r.heuristic, r.oneshot, r.optimized,
                     r.optimized_predicted ? fmt::format("{:.1f}", *r.optimized_predicted) : "-", r.grid, r.grid_size,
                     Ratio(plumber, r.naive), Ratio(plumber, r.heuristic), Ratio(plumber, r.grid),
                     PredictionCell(r.as_traced, r.naive), PredictionCell(r.oneshot_predicted, r.oneshot));
  }
  s += "\n\"plumber\" in the ratios is the better of one-shot and optimize. Errors are (predicted - "
       "measured) / measured: **as traced** is the model's prediction for the naive pipeline exactly as "
       "configured (`as_traced` of `plumber analyze` on the naive trace) against the naive median; **after "
       "rewrite** is the one-shot rewrite's prediction for the pipeline it emits against that pipeline's "
       "median.\n\n";

  // The issue's targets, met or not, from the figures above.
  std::vector<std::string> as_traced_miss, after_miss, grid_miss, waiting;
  for (const auto& r : results) {
    const auto e1 = Error(r.as_traced, r.naive);
    if (!e1 || std::abs(*e1) > kAsTracedTarget) as_traced_miss.push_back(r.w.name);
    const auto e2 = Error(r.oneshot_predicted, r.oneshot);
    if (!e2 || std::abs(*e2) > kAfterRewriteTarget) after_miss.push_back(r.w.name);
    if (r.w.waiting.empty()) continue;
    waiting.push_back(r.w.name);
    if (r.grid <= 0 || std::max(r.oneshot, r.optimized) < kGridTarget * r.grid) grid_miss.push_back(r.w.name);
  }
  auto verdict = [](const std::vector<std::string>& miss) {
    return miss.empty() ? std::string("met") : fmt::format("**not met** on {}", fmt::join(miss, ", "));
  };
  s += "Targets, judged on the medians:\n\n";
  s += fmt::format("- as-traced error within {:.0f}% on every workload: {}\n", 100 * kAsTracedTarget,
                   verdict(as_traced_miss));
  s += fmt::format("- error after the rewrite within {:.0f}% on every workload: {}\n", 100 * kAfterRewriteTarget,
                   verdict(after_miss));
  s += fmt::format("- plumber >= {:.2f} of the grid optimum on the waiting workloads ({}): {}\n\n", kGridTarget,
                   waiting.empty() ? "none run" : fmt::format("{}", fmt::join(waiting, ", ")), verdict(grid_miss));
  s += "## Workloads\n\n";
  for (const auto& r : results) {
    s += fmt::format("- **{}** (`{}`{}): {}. Bottleneck in the naive trace: `{}`; as traced, the limit "
                     "is {} (the traced naive runs measured {}; the analysis read the median). One-shot changes: {}. Best grid point: `{}` "
                     "({:.1f} in the grid). Runs: naive {}; heuristic {}; one-shot {}; grid best {}{}.\n",
                     r.w.name, r.w.file, r.w.storage_text.empty() ? "" : ", " + r.w.storage_text, r.w.what,
                     r.bottleneck, r.as_traced_limit.empty() ? "unknown" : r.as_traced_limit, Runs(r.naive_traced_runs),
                     r.oneshot_changes.empty() ? "none" : fmt::format("{}", fmt::join(r.oneshot_changes, "; ")),
                     r.grid_best, r.grid_best_first, Runs(r.naive_runs), Runs(r.heuristic_runs),
                     Runs(r.oneshot_runs), Runs(r.grid_runs),
                     r.nocache_runs.empty() ? "" : "; best without a cache " + Runs(r.nocache_runs));
  }
  if (steps) {
    s += fmt::format(
        "\n## Steps to 95% of the optimum (paper, Figure 6)\n\n"
        "From the naive pipeline with a prefetch of 4 at its output (the paper starts its walks with prefetching; "
        "step 0), one change per step, each step a measured run: a change doubles one parallel "
        "stage's threads (up to 64 per core, an interleave up to its files), so that a stage that waits reaches its tens of "
        "threads in a few steps. **ranked** changes the top-ranked bottleneck that can still use more (the "
        "ranking of `plumber rank` on that step's trace: threads up to what a stage that waits could use, cores up to "
        "what a CPU-bound one could): a stage that waits gets the threads the ranking says lift it to the next limit "
        "(at least double), any other doubles; **random** doubles a random parallel stage's; three "
        "random walks (seeds 42, 43, 44), each stopped at twice the ranked walk's steps (at {} when ranked did not "
        "arrive), since reaching the target later than that is all the comparison needs. The target is 95% of the "
        "best median above (grid, one-shot, heuristic), or, where the optimum needs a cache (a walk only moves threads), of the best grid "
        "point without one (the median of its reruns, alternated with the others). **LP** is plumber's one-shot rewrite (1 step) or the "
        "optimize loop's best step (its number of rewrites). `>N` means not reached within N steps.\n\n",
        kMaxWalkSteps);
    s += "| workload | target | LP | ranked | random (median; the three walks) | ranked 2x fewer? | ranked throughput "
         "per step | random throughput per step (first walk) |\n|---|---|---|---|---|---|---|---|\n";
    std::vector<std::string> met, missed;
    for (const auto& r : results) {
      auto curve = [](const std::vector<double>& c) {
        std::vector<std::string> v;
        for (double x : c) v.push_back(fmt::format("{:.1f}", x));
        return fmt::format("{}", fmt::join(v, ", "));
      };
      // Not reached counts as more than the limit: the median of three walks.
      std::vector<int> random = r.steps_random;
      for (int& x : random) x = x < 0 ? r.random_limit + 1 : x;
      std::sort(random.begin(), random.end());
      const int median = random.empty() ? -1 : random[random.size() / 2];
      std::vector<std::string> each;
      for (int x : r.steps_random) each.push_back(Steps(x, r.random_limit));
      std::string verdict = "-";
      if (r.steps_ranked == 0 && median == 0) {
        verdict = "- (the naive pipeline is there)";
      } else if (r.steps_ranked > 0 && !random.empty()) {
        const bool ok = median >= 2 * r.steps_ranked;
        verdict = ok ? "yes" : "**no**";
        (ok ? met : missed).push_back(r.w.name);
      } else if (r.steps_ranked < 0) {
        verdict = "**no** (ranked did not arrive)";
        missed.push_back(r.w.name);
      }
      s += fmt::format("| {} | {:.1f}{} | {} | {} | {} ({}) | {} | {} | {} |\n", r.w.name, r.walk_target,
                       r.walk_target_without_cache ? " (no cache)" : "",
                       Steps(r.steps_lp, std::max(1, r.optimize_steps - 1)), Steps(r.steps_ranked, kMaxWalkSteps),
                       median > r.random_limit ? Steps(-1, r.random_limit) : std::to_string(median),
                       fmt::join(each, ", "), verdict, curve(r.ranked_curve),
                       r.random_curves.empty() ? "" : curve(r.random_curves.front()));
    }
    s += fmt::format("\nRanked at least 2x fewer steps than random (median of three walks): met on {}; not met on "
                     "{}.\n",
                     met.empty() ? "none" : fmt::format("{}", fmt::join(met, ", ")),
                     missed.empty() ? "none" : fmt::format("{}", fmt::join(missed, ", ")));
  }
  return s;
}

int Main(int argc, char** argv) {
  std::string out = PLUMBER_SOURCE_DIR "/bench";
  std::string only;
  bool steps = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) g_seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--no-steps")) steps = false;
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) g_repeats = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--out DIR] [--only NAME] [--no-steps] [--repeats N]\n", argv[0]);
      return 2;
    }
  }
  if (g_repeats < 1) {
    std::fprintf(stderr, "--repeats must be at least 1\n");
    return 2;
  }
  g_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto start = std::chrono::steady_clock::now();
  g_load_start = LoadAverage();
  g_handoff = runtime::CalibrateHandoff();
  auto tmp = ScopedTempDir::Make(Env::Default(), "plumber-e2e-");
  if (!tmp.ok()) return 1;
  g_base = tmp->path();
  const std::string data = g_base + "/data";
  if (!Env::Default()->CreateDirectories(data).ok()) return 1;
  runtime::ImageGenOptions images;
  images.files = 4;
  images.records_per_file = 64;
  images.width = images.height = 256;
  runtime::TextGenOptions text;
  text.files = 2;
  text.lines_per_file = 20000;
  if (auto s = runtime::GenerateImages(Env::Default(), data, images); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  if (auto s = runtime::GenerateText(Env::Default(), data, text); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  // The latency workloads read their own dataset: the same images in many
  // small files, so that an interleave can keep up to 64x the cores
  // requests in flight (each of its threads reads its own file). About
  // 26 MB, far more than the 2 MB those workloads allow for a cache.
  runtime::ImageGenOptions shards = images;
  shards.files = 64;
  shards.records_per_file = 16;
  const std::string shards_data = g_base + "/shards/data";
  if (!Env::Default()->CreateDirectories(shards_data).ok()) return 1;
  if (auto s = runtime::GenerateImages(Env::Default(), shards_data, shards); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  std::vector<Workload> workloads;
  auto add = [&](std::string name, std::string file, std::string what) -> Workload& {
    Workload& w = workloads.emplace_back();
    w.name = std::move(name);
    w.file = file.find('/') == std::string::npos ? "examples/" + file : std::move(file);
    w.what = std::move(what);
    return w;
  };
  add("image", "image.json", "JPEG decode and augmentation, decode-heavy");
  add("text", "text.json", "tokenize, length filter, padded batch: tiny ops");
  {
    Workload& w = add("storage", "io.json",
                      "storage-bound: reads throttled to 20 MB/s; memory for a cache limited to 2 MB (the data is "
                      "larger), so only reading can be tuned");
    w.storage_text = "--read-bandwidth 20MB/s --mem 2MB";
    w.storage.read_bandwidth = 20e6;
    w.memory = 2'000'000;
  }
  // Two latencies over the same many-file dataset: at 5 ms the readers'
  // waiting and the CPU both matter, at 20 ms waiting is nearly all.
  for (const int ms : {5, 20}) {
    Workload& w = add(ms == 5 ? "latency" : "latency-nocache", "io.json",
                      fmt::format("latency-bound: {} ms per 256 KiB read request over {} files of {} records; memory "
                                  "for a cache limited to 2 MB (the data is about 26 MB), so read parallelism is what "
                                  "matters",
                                  ms, shards.files, shards.records_per_file));
    w.storage_text = fmt::format("--read-latency {}ms --mem 2MB", ms);
    w.storage.read_latency_ns = int64_t{ms} * 1'000'000;
    w.memory = 2'000'000;
    w.waiting = {"shards"};
    w.files = shards.files;
    w.data_root = "shards";
  }
  // A cache that fits only on disk: the records (6.6 MB) under 20 ms of
  // request latency in 4 files, so reading them back from a file cache
  // beats any read parallelism; what the rewrite predicts for it rests on
  // the replay's calibrated price.
  runtime::ImageGenOptions few = images;
  few.files = 4;
  few.records_per_file = 64;
  const std::string few_data = g_base + "/fewfiles/data";
  if (!Env::Default()->CreateDirectories(few_data).ok()) return 1;
  if (auto s = runtime::GenerateImages(Env::Default(), few_data, few); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  {
    Workload& w = add("file-cache", "io.json",
                      "a cache only on disk: 20 ms per read request over 4 files of 64 records (6.6 MB); memory for "
                      "a cache limited to 2 MB, room for it on local disk");
    w.storage_text = "--read-latency 20ms --mem 2MB --cache-dir DIR";
    w.storage.read_latency_ns = 20'000'000;
    w.memory = 2'000'000;
    w.file_cache = true;
    w.waiting = {"shards"};
    w.files = few.files;
    w.data_root = "fewfiles";
    if (!Env::Default()->CreateDirectories(FileCacheDir(w)).ok()) return 1;
  }
  add("cached", "cached.json", "small dataset, deterministic decode: a cache after decode wins");
  // The fidelity issue's two other misses as workloads of their own: an
  // inline chain whose epoch lasts about a second (5,600 small JPEGs), and
  // a tiny op that a pool of 2 must never make slower.
  runtime::ImageGenOptions small = images;
  small.files = 4;
  small.records_per_file = 1400;
  small.width = small.height = 64;
  const std::string small_data = g_base + "/smalljpeg/data";
  if (!Env::Default()->CreateDirectories(small_data).ok()) return 1;
  if (auto s = runtime::GenerateImages(Env::Default(), small_data, small); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  add("chain", "bench/e2e/pipelines/chain.json",
      "small JPEGs decoded inline under a repeat whose epoch lasts about a second, a cheap random flip, batch 64")
      .data_root = "smalljpeg";
  add("tiny", "bench/e2e/pipelines/tiny.json", "an add of about 25 ns an element, inline, batched by 256");
  // The shape workloads (issue 35): what holds them back is the order the
  // pipeline was written in, which no knob changes. The grid stays
  // knob-only, so plumber/grid is what reordering and fusing add.
  {
    Workload& w = add("subset", "subset.json",
                      "a filter keeping a quarter of the classes after the decode; memory for a cache limited to 2 MB");
    w.storage_text = "--mem 2MB (rewrite --assume-valid-data)";
    w.memory = 2'000'000;
    w.assume_valid_data = true;
  }
  {
    Workload& w = add("shuffled", "shuffled.json",
                      "a shuffle of 256 decoded images whose buffer crowds a cache of the records out of 18 MB; "
                      "reads throttled to 5 MB/s");
    w.storage_text = "--read-bandwidth 5MB/s --mem 18MB (rewrite --assume-valid-data)";
    w.storage.read_bandwidth = 5e6;
    w.memory = 18'000'000;
    w.assume_valid_data = true;
  }
  add("maps", "maps.json", "a chain of four 2 us maps written as four stages");
  add("checked", "checked.json", "a 400 us check written as a filter after a 100 us map: a filter runs on one thread");
  add("skewed", "skewed.json", "two maps of 50 us and 2 ms per element");
  add("remote", "remote.json",
      "a map whose UDF waits 2 ms like a remote call and burns 50 us of CPU per element: it needs threads, "
      "not cores")
      .waiting = {"call"};

  std::vector<WorkloadResult> results;
  for (const auto& w : workloads) {
    if (!only.empty() && w.name != only) continue;
    results.push_back(RunWorkload(w, PLUMBER_SOURCE_DIR, g_base, steps));
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string md = Markdown(results, elapsed, steps);
  // The runtime's own figures (plumber_bench) share the file and
  // are measured apart: keep everything from their heading on.
  if (auto old = ReadFileToString(Env::Default(), out + "/RESULTS.md"); old.ok()) {
    const size_t at = old->find("\n# Runtime speed");
    if (at != std::string::npos) md += old->substr(at);
  }
  if (!WriteFileAtomically(Env::Default(), out + "/RESULTS.md", md).ok() ||
      !WriteFileAtomically(Env::Default(), out + "/e2e.svg", Svg(results)).ok()) {
    std::fprintf(stderr, "cannot write into %s\n", out.c_str());
    return 1;
  }
  std::fputs(md.c_str(), stdout);
  return 0;
}

}  // namespace
}  // namespace plumber::bench

int main(int argc, char** argv) {
  plumber::runtime::KeepFreedMemoryForReuse();  // as the plumber binary does
  return plumber::bench::Main(argc, argv);
}
