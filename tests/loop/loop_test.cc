// End-to-end tests of the loop on a tiny generated image dataset, and on
// the text example over generated lines: the rewrite of a naive pipeline is
// valid, yields exactly the elements of the original (deterministic
// variant, compared by checksum element by element), and is not slower
// beyond a generous bound; the optimize loop keeps its best step and stops
// on request; the binary's `optimize` writes a valid pipeline and
// `demo --small` succeeds. Runs are about a second each, so the file takes
// a few seconds; speed targets live in bench/.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "base/crc32c.h"
#include "harness.h"
#include "optimize/demo.h"
#include "optimize/optimize_loop.h"
#include "pipeline/op_table.h"
#include "pipeline/validate.h"
#include "report/optimize_format.h"
#include "rewrite/rewriter.h"
#include "runtime/datagen.h"
#include "runtime/run.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber {
namespace {

namespace fs = std::filesystem;

// A dataset small enough to generate in a blink: 2 shards of 24 JPEGs.
struct TinyData {
  ScopedTempDir dir;
  int records = 0;
};

TinyData MakeTinyData() {
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-loop-test-");
  REQUIRE(dir.ok());
  TinyData t{std::move(dir).value(), 0};
  REQUIRE(Env::Default()->CreateDirectories(t.dir.path() + "/data").ok());
  runtime::ImageGenOptions gen;
  gen.files = 2;
  gen.records_per_file = 24;
  gen.width = gen.height = 96;
  gen.seed = 3;
  auto files = runtime::GenerateImages(Env::Default(), t.dir.path() + "/data", gen);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 2);
  t.records = gen.files * gen.records_per_file;
  return t;
}

// The naive image pipeline without its random ops (crop and flip become a
// resize), so that every run yields the same elements in the same order.
schema::Pipeline DeterministicImagePipeline(int batch_size) {
  const std::string json = R"({"name": "image-det", "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "data/train-*.tfrecord"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 2, "block_length": 1, "parallelism": 1}},
    {"name": "decode", "op": "map", "inputs": ["shards"],
     "map": {"parallelism": 1, "udf": [
       {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}},
       {"op": "decode_jpeg", "args": {"channels": 3}},
       {"op": "resize", "args": {"height": 80, "width": 80}},
       {"op": "normalize", "args": {"mean": [123.7, 116.3, 103.5], "std": [58.4, 57.1, 57.4]}}
     ]}},
    {"name": "repeat", "op": "repeat", "inputs": ["decode"]},
    {"name": "batch", "op": "batch", "inputs": ["repeat"], "batch": {"batch_size": )" +
                           std::to_string(batch_size) + R"(, "drop_remainder": true}}
  ]})";
  auto p = ParsePipeline(json, "test pipeline");
  REQUIRE(p.ok());
  runtime::testing::Graph(*p);  // valid
  return *p;
}

runtime::RunConfig ShortRun(const std::string& base_dir, const std::string& trace, double seconds) {
  runtime::RunConfig c;
  c.seconds = seconds;
  c.warmup_seconds = 0.25;
  c.snapshot_every_seconds = 0.1;
  c.base_dir = base_dir;
  c.trace_path = trace;
  return c;
}

double Throughput(const runtime::RunResult& r) {
  return r.measured_seconds > 0 ? static_cast<double>(r.measured_batches) / r.measured_seconds : 0;
}

// CRC32C of each element's serialized form, in the order produced.
std::vector<uint32_t> Checksums(const schema::Pipeline& p, const std::string& base_dir, int64_t count) {
  runtime::testing::Harness h(p, {}, true, base_dir);
  REQUIRE(h.build_status().ok());
  std::vector<runtime::Element> elements;
  REQUIRE(h.Collect(&elements, count).ok());
  REQUIRE(static_cast<int64_t>(elements.size()) == count);
  std::vector<uint32_t> sums;
  for (const auto& e : elements) {
    const std::string bytes = runtime::SerializeElement(e);
    sums.push_back(crc32c::Value(bytes.data(), bytes.size()));
  }
  return sums;
}

TEST_CASE("naive -> analyze -> rewrite -> run: valid, same elements, not slower", "[loop][serial]") {
  TinyData data = MakeTinyData();
  const std::string base = data.dir.path();
  const int batch = 4;
  const schema::Pipeline naive = DeterministicImagePipeline(batch);
  Env* env = Env::Default();

  const std::string trace = base + "/naive.pb";
  auto naive_run = runtime::RunPipeline(env, runtime::testing::Graph(naive), ShortRun(base, trace, 1.5));
  REQUIRE(naive_run.ok());
  REQUIRE(naive_run->end_status == "ok");
  const double naive_rate = Throughput(*naive_run);
  REQUIRE(naive_rate > 0);

  analysis::AnalysisOptions aopt;
  aopt.cores = 2;  // the same plan on any machine: decode gets more than one thread
  aopt.solve_programs = true;
  auto report = analysis::AnalyzeTraceFile(env, trace, aopt);
  REQUIRE(report.ok());
  CHECK(report->bottleneck == "decode");
  auto rewritten = rewrite::Rewrite(*report);
  REQUIRE(rewritten.ok());
  const schema::Pipeline& fast = rewritten->pipeline;
  CHECK(ValidatePipeline(fast).empty());
  // The rewrite acts on the bottleneck: more decode threads, or (decode is
  // deterministic and the data small) a cache above it so it works once.
  bool decode_changed = false;
  std::string changes;
  for (const auto& c : rewritten->changes) {
    decode_changed |= (c.node == "decode" && c.what == "parallelism") ||
                      (c.what == "cache" && c.after == "in memory after decode");
    changes += c.node + " " + c.what + " " + c.after + "; ";
  }
  INFO(changes);
  CHECK(decode_changed);
  // The run recorded no model step, so a prefetch on top would overlap
  // nothing: one goes on only where the model says its thread gains.
  for (const auto& c : rewritten->changes) {
    if (c.what == "prefetch") CHECK_THAT(c.why, Catch::Contains("the model predicts"));
  }
  CHECK(rewritten->predicted_after > rewritten->predicted_before);

  // Exactly the same elements in the same order over three epochs: the
  // first fills any cache the rewrite added, the others replay it.
  const int64_t elements = 3 * data.records / batch;
  const auto want = Checksums(naive, base, elements);
  const auto got = Checksums(fast, base, elements);
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("batch " << i);
    CHECK(want[i] == got[i]);
  }
  // A different pipeline gives different checksums: the comparison can fail.
  const auto other = Checksums(DeterministicImagePipeline(batch + 1), base, 2);
  CHECK(other[0] != want[0]);

  auto fast_run = runtime::RunPipeline(env, runtime::testing::Graph(fast), ShortRun(base, base + "/fast.pb", 1.5));
  REQUIRE(fast_run.ok());
  REQUIRE(fast_run->end_status == "ok");
  // Generous: the machine is shared with other work; the speed-up itself is
  // measured in bench/. Not in a sanitizer build, whose instrumented threads
  // and copies do not run at the speeds the trace priced (see below).
  if (!runtime::testing::kSanitized) CHECK(Throughput(*fast_run) >= 0.7 * naive_rate);
}

// The text example as shipped: tokenize costs a few microseconds a line,
// about what handing a line to another thread costs, so a thread of its own
// would slow it down (it measured 16x slower when it once got two).
TEST_CASE("the text example: tokenize stays inline when a hand-off costs more, and the rewrite is not slower",
          "[loop][serial]") {
  auto dir = ScopedTempDir::Make(Env::Default(), "plumber-loop-text-");
  REQUIRE(dir.ok());
  const std::string base = dir->path();
  REQUIRE(Env::Default()->CreateDirectories(base + "/data").ok());
  runtime::TextGenOptions text;
  text.files = 2;
  text.lines_per_file = 4000;
  REQUIRE(runtime::GenerateText(Env::Default(), base + "/data", text).ok());
  auto naive = LoadProgram(Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/examples/text.json");
  REQUIRE(naive.ok());
  Env* env = Env::Default();

  const std::string trace = base + "/naive.pb";
  // As `plumber run` does: the trace carries the machine's price of a
  // hand-off, without which a thread of its own looks free to tokenize.
  runtime::RunConfig config = ShortRun(base, trace, 1.5);
  config.handoff = runtime::CalibrateHandoff();
  auto naive_run = runtime::RunPipeline(env, *naive, config);
  REQUIRE(naive_run.ok());
  REQUIRE(naive_run->end_status == "ok");
  const double naive_rate = Throughput(*naive_run);
  REQUIRE(naive_rate > 0);

  analysis::AnalysisOptions aopt;
  aopt.cores = 2;
  aopt.solve_programs = true;
  auto report = analysis::AnalyzeTraceFile(env, trace, aopt);
  REQUIRE(report.ok());
  auto rewritten = rewrite::Rewrite(*report);
  REQUIRE(rewritten.ok());
  std::string changes;
  for (const auto& c : rewritten->changes) changes += c.node + " " + c.what + " " + c.after + "; ";
  INFO(changes);
  INFO("predicted " << rewritten->predicted_before << " -> " << rewritten->predicted_after << "/s; hand-off "
                    << config.handoff.payload_cpu_ns() << " ns an element, " << config.handoff.cpu_ns()
                    << " ns a chunk");
  const schema::Pipeline& fast = rewritten->pipeline;
  CHECK(ValidatePipeline(fast).empty());
  // Inline when handing a line over costs at least what tokenizing it
  // does: 0.8 us against 1.0 to 1.2 on the machines here. A sanitizer
  // build tokenizes some 20x slower, and a thread of its own then pays.
  const analysis::NodeModel* tokens = report->Find("tokens");
  REQUIRE(tokens != nullptr);
  REQUIRE(tokens->visit_ratio > 0);
  const double work_ns = 1e9 * tokens->cpu_seconds_per_minibatch / tokens->visit_ratio;
  INFO("tokenize " << work_ns << " ns a line");
  int tokens_parallelism = 0;
  for (const auto& node : fast.nodes()) {
    if (node.name() == "tokens") tokens_parallelism = NodeParallelism(node);
  }
  REQUIRE(tokens_parallelism >= 1);
  if (config.handoff.payload_cpu_ns() >= work_ns) CHECK(tokens_parallelism == 1);
  CHECK(rewritten->predicted_after >= rewritten->predicted_before);

  auto fast_run =
      runtime::RunPipeline(env, runtime::testing::Graph(fast), ShortRun(base, base + "/fast.pb", 1.5));
  REQUIRE(fast_run.ok());
  REQUIRE(fast_run->end_status == "ok");
  INFO("naive " << naive_rate << "/s, rewritten " << Throughput(*fast_run) << "/s");
  // Generous, as above: one run each; bench/ measures the ratio properly.
  // Not in a sanitizer build: there tokenize costs more than a hand-off, the
  // rewrite pools it, and the instrumented pool ran at 0.62x of inline in CI
  // where 1.45x was predicted, the pooled-tiny-map miss the fidelity issue
  // tracks. The checks above (valid, predicted not lower, it runs) still hold.
  if (!runtime::testing::kSanitized) CHECK(Throughput(*fast_run) >= 0.7 * naive_rate);
}

optimize::OptimizeOptions LoopOptions(const std::string& base, const std::string& traces) {
  optimize::OptimizeOptions o;
  o.cores = 2;
  o.seconds_per_run = 1.0;
  o.max_steps = 2;
  o.base_dir = base;
  o.trace_dir = traces;
  return o;
}

TEST_CASE("optimize loop: steps, best step, traces kept", "[loop]") {
  TinyData data = MakeTinyData();
  const std::string base = data.dir.path();
  REQUIRE(Env::Default()->CreateDirectories(base + "/traces").ok());
  auto result = optimize::Optimize(Env::Default(), runtime::testing::Graph(DeterministicImagePipeline(4)), LoopOptions(base, base + "/traces"));
  REQUIRE(result.ok());
  const auto& r = *result;
  REQUIRE(r.steps.size() == 2);  // max_steps 2, and step 0's rewrite changes something
  CHECK_FALSE(r.interrupted);
  CHECK(r.failure.ok());
  CHECK(r.stopped_because == "reached the limit of 2 steps");
  CHECK(r.steps[0].changes.empty());
  CHECK_FALSE(r.steps[1].changes.empty());
  CHECK(r.steps[0].bottleneck == "decode");
  for (const auto& s : r.steps) {
    CHECK(s.complete);
    CHECK(s.measured > 0);
    CHECK(s.predicted.has_value());
    CHECK(fs::exists(s.trace_path));
    CHECK(fs::exists(s.pipeline_path));
  }
  // The best is the fastest complete step.
  const int other = 1 - r.best_step;
  CHECK(r.best().measured >= r.steps[static_cast<size_t>(other)].measured);
  CHECK(r.speedup() == Approx(r.best().measured / r.steps[0].measured));
  CHECK(ValidatePipeline(r.best_pipeline()).empty());
  // Step 1's prediction is step 0's rewrite's.
  CHECK(*r.steps[1].predicted == Approx(r.steps[0].rewrite->predicted_after));

  auto json = nlohmann::json::parse(report::StepJson(r, "out.json"));
  CHECK(json["steps"].size() == 2);
  CHECK(json["best_step"] == r.best_step);
  CHECK(json["output"] == "out.json");
  CHECK(json["steps"][1]["changes"].size() == r.steps[1].changes.size());
  // Step 0's rewrite had only step 0's costs, all at the traced
  // parallelism: nothing learned yet.
  CHECK(r.steps[1].learned.empty());
  CHECK(json["steps"][1]["learned_costs"].size() == r.steps[1].learned.size());
  const std::string table = report::StepTable(r);
  CHECK(table.find("(as given)") != std::string::npos);
  CHECK(table.find("stopped: reached the limit of 2 steps") != std::string::npos);
}

// A 100 us map, then a 400 us check as a filter keeping three quarters:
// examples/checked.json, in small batches.
TEST_CASE("optimize loop: each step's rewrite fuses and moves too, and forgets the old node's costs", "[loop]") {
  runtime::testing::TempDir dir;
  REQUIRE(Env::Default()->CreateDirectories(dir.File("traces")).ok());
  auto p = ParsePipeline(R"({"name": "checked", "nodes": [
    {"name": "source", "op": "range", "range": {"stop": 1000}},
    {"name": "epochs", "op": "repeat", "inputs": ["source"]},
    {"name": "make", "op": "map", "inputs": ["epochs"], "map": {"udf": [
      {"op": "cpu_burn", "args": {"micros": 100}}, {"op": "add", "args": {"value": 1}}]}},
    {"name": "check", "op": "filter", "inputs": ["make"], "filter": {"predicate": [
      {"op": "cpu_burn", "args": {"micros": 400}}, {"op": "label_in", "args": {"min": 1, "max": 750}}]}},
    {"name": "batch", "op": "batch", "inputs": ["check"], "batch": {"batch_size": 16}}]})",
                         "checked");
  REQUIRE(p.ok());
  optimize::OptimizeOptions o = LoopOptions(dir.path(), dir.File("traces"));
  o.max_steps = 3;
  auto result = optimize::Optimize(Env::Default(), runtime::testing::Graph(*p), o);
  REQUIRE(result.ok());
  const auto& r = *result;
  REQUIRE(r.steps.size() >= 2);
  // The check's one thread holds the pipeline; fused into make, make's pool
  // runs it. Shape changes come first in the step's changes.
  REQUIRE_FALSE(r.steps[1].changes.empty());
  const rewrite::Change& fused = r.steps[1].changes[0];
  CHECK(fused.node == "check");
  CHECK(fused.what == "fused into");
  CHECK(fused.after == "make");
  CHECK_THAT(fused.why, Catch::EndsWith("the first 16 outputs are the same, in order"));
  bool has_check = false;
  for (const auto& n : r.steps[1].pipeline.nodes()) {
    has_check |= n.name() == "check";
    if (n.name() == "make") CHECK(n.map().keep_if_size() == 2);
  }
  CHECK_FALSE(has_check);
  CHECK(report::StepTable(r).find("check: fused into make") != std::string::npos);
  // Step 0 measured make without the check's work: that cost must not
  // price the fused make at 1 thread in a later step.
  for (size_t k = 2; k < r.steps.size(); ++k) {
    for (const auto& l : r.steps[k].learned) CHECK_FALSE((l.stage == "make" && l.parallelism == 1));
  }
  // Knobs only, the check stays.
  o.reshape = false;
  o.max_steps = 2;
  o.trace_dir = dir.File("traces");
  auto knobs = optimize::Optimize(Env::Default(), runtime::testing::Graph(*p), o);
  REQUIRE(knobs.ok());
  for (const auto& s : knobs->steps) {
    for (const auto& c : s.changes) CHECK(c.what != "fused into");
  }
}

TEST_CASE("optimize loop: a stop request keeps the best step measured", "[loop]") {
  TinyData data = MakeTinyData();
  const std::string base = data.dir.path();
  std::atomic<bool> stop{false};
  auto o = LoopOptions(base, base);
  o.max_steps = 4;
  o.stop = &stop;
  SECTION("during step 1: step 0 is the best, step 1 is cut short") {
    // Ctrl-C as step 1 starts running, deterministically.
    auto result = optimize::Optimize(Env::Default(), runtime::testing::Graph(DeterministicImagePipeline(4)), o, [&](const optimize::Progress& p) {
      if (p.step == 1 && p.phase == "run") stop.store(true);
    });
    REQUIRE(result.ok());
    CHECK(result->interrupted);
    REQUIRE(result->steps.size() == 2);
    CHECK(result->steps[0].complete);
    CHECK_FALSE(result->steps[1].complete);
    CHECK(result->best_step == 0);
    CHECK(result->stopped_because == "interrupted");
  }
  SECTION("before anything ran: no complete step") {
    stop.store(true);
    auto result = optimize::Optimize(Env::Default(), runtime::testing::Graph(DeterministicImagePipeline(4)), o);
    REQUIRE(result.ok());
    CHECK(result->interrupted);
    REQUIRE(result->steps.size() == 1);
    CHECK_FALSE(result->steps[0].complete);
  }
}

// Runs a shell command, returns its exit code and stdout.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_CASE("plumber optimize writes a valid pipeline and a JSON step table", "[loop][cli]") {
  TinyData data = MakeTinyData();
  const std::string base = data.dir.path();
  const std::string in = base + "/image.json";
  REQUIRE(WritePipeline(Env::Default(), in, DeterministicImagePipeline(4), Encoding::kJson).ok());
  auto [code, out] = Shell(std::string(PLUMBER_BINARY) + " optimize " + in +
                           " --cores 2 --seconds 1 --max-steps 2 --format json --keep-traces " + base + "/t");
  INFO(out);
  REQUIRE(code == 0);
  auto json = nlohmann::json::parse(out);
  CHECK(json["steps"].size() == 2);
  CHECK(json["output"] == base + "/image.optimized.json");
  CHECK(fs::exists(base + "/t/step-0.pb"));
  CHECK(fs::exists(base + "/t/step-1.pb"));
  auto written = LoadProgram(Env::Default(), base + "/image.optimized.json");
  REQUIRE(written.ok());
  CHECK(written->size() > 0);
}

TEST_CASE("plumber optimize: bad input exits 2", "[loop][cli]") {
  CHECK(Shell(std::string(PLUMBER_BINARY) + " optimize /nonexistent/p.json 2>/dev/null").first == 2);
  CHECK(Shell(std::string(PLUMBER_BINARY) + " optimize " + PLUMBER_SOURCE_DIR +
              "/examples/cpu.json --seconds -1 2>/dev/null")
            .first == 2);
}

TEST_CASE("plumber demo --small succeeds and shows before and after", "[loop][cli][serial]") {
  auto [code, out] = Shell(std::string(PLUMBER_BINARY) + " demo --small");
  INFO(out);
  REQUIRE(code == 0);
  CHECK(out.find("before:") != std::string::npos);
  CHECK(out.find("after:") != std::string::npos);
  // The bottleneck line names a node of the image pipeline (which one
  // depends on the machine: decode, or batch for such small images).
  const auto at = out.find("bottleneck: ");
  REQUIRE(at != std::string::npos);
  const std::string node = out.substr(at + 12, out.find_first_of(" \n", at + 12) - at - 12);
  CHECK((node == "decode" || node == "batch" || node == "shards" || node == "read"));
  // The loop rewrote the pipeline and ran it: step 1 lists the decode's
  // threads. Whether step 1 then wins is a race of two 1 s runs, which
  // other tests (bench/, the rewrite-not-slower case) judge: under the
  // sanitizers it once measured 83.4 minibatches/s against step 0's 84.5,
  // where eight reruns gave it 1.3x to 1.6x.
  CHECK(out.find("\n1 ") != std::string::npos);
  // Step 1 changed the pipeline. Which change depends on the cores the run
  // had: on an idle machine the decode's threads and a cache; on a CI
  // machine whose other core was busy the run had about one core, and the
  // plan rightly adds no thread, only the cache.
  CHECK((out.find("decode parallelism 1->2") != std::string::npos ||
         out.find("shards_cache: cache in memory") != std::string::npos));
}

}  // namespace
}  // namespace plumber
