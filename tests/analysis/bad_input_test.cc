// Bad traces: one snapshot, zero elapsed time, zero minibatches, counters
// going backwards, stats for a node the program lacks, a torn tail, a
// corrupt record. Each gives a clear message naming the file and either the
// best analysis the data allows or an InvalidArgument (exit 2), never a
// crash or a NaN.
#include <filesystem>

#include <unistd.h>

#include <google/protobuf/util/json_util.h>

#include "base/env.h"
#include "trace_builder.h"
#include "pipeline/validate.h"
#include "traceio/trace_io.h"

namespace plumber::analysis {
namespace {

using testing::Counters;
using testing::RequireFinite;
using testing::TraceBuilder;

const char* kChain = R"({"name": "chain", "nodes": [
  {"name": "source", "op": "range", "range": {"stop": 100000}},
  {"name": "work", "op": "map", "inputs": ["source"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 10}}]}},
  {"name": "batch", "op": "batch", "inputs": ["work"], "batch": {"batch_size": 10}}]})";

// Counters for a steady run at `t` seconds: 100 minibatches per second.
void Steady(schema::Snapshot& s, double t) {
  const int64_t mb = static_cast<int64_t>(100 * t), el = 10 * mb;
  TraceBuilder::Node(s, "source", {el, 8 * el, 1000 * el, 0, 0});
  TraceBuilder::Node(s, "work", {el, 8 * el, 50000 * el, 0, el});
  TraceBuilder::Node(s, "batch", {mb, 80 * mb, 20000 * mb, 0, el});
}

bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("One snapshot: the window runs from the start of the run, with a warning", "[analysis][bad]") {
  TraceBuilder b(kChain, 4, 1.0);
  Steady(b.Snapshot(2), 2);
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(r->window_start_seconds == 0);
  CHECK(r->minibatches == 200);
  CHECK(r->observed_throughput == 100);
  CHECK(Mentions(r->warnings, "single snapshot"));
}

TEST_CASE("Zero elapsed time: a single snapshot at 0 ns is refused, naming the file", "[analysis][bad]") {
  TraceBuilder b(kChain);
  Steady(b.Snapshot(0), 0);
  auto r = b.Analyze();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsBadInput());
  CHECK(r.status().message().find("synthetic.json") != std::string::npos);
  CHECK(r.status().message().find("zero elapsed time") != std::string::npos);
}

TEST_CASE("Snapshots that repeat a time are skipped with a warning", "[analysis][bad]") {
  TraceBuilder b(kChain);
  Steady(b.Snapshot(1), 1);
  Steady(b.Snapshot(1), 1);
  Steady(b.Snapshot(3), 3);
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(r->window_seconds == 2);
  CHECK(r->minibatches == 200);
  CHECK(Mentions(r->warnings, "1 snapshot does not move time forward and was skipped"));
}

TEST_CASE("Zero minibatches in the window: refused with a message naming the file and node", "[analysis][bad]") {
  TraceBuilder b(kChain);
  for (int t = 1; t <= 3; ++t) {
    auto& s = b.Snapshot(t);
    TraceBuilder::Node(s, "source", {10 * t, 80 * t, 1000, 0, 0});
    TraceBuilder::Node(s, "work", {5, 40, 1000, 0, 5});
    TraceBuilder::Node(s, "batch", {0, 0, 1000, 0, 5});
  }
  auto r = b.Analyze();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsBadInput());
  CHECK(r.status().message().find("synthetic.json") != std::string::npos);
  CHECK(r.status().message().find("'batch' produced no minibatches") != std::string::npos);
}

TEST_CASE("No snapshots at all: refused", "[analysis][bad]") {
  TraceBuilder b(kChain);
  auto r = b.Analyze();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsBadInput());
  CHECK(r.status().message().find("no snapshots") != std::string::npos);
}

TEST_CASE("Counters going backwards: the node is left out with a warning, the output node cannot be",
          "[analysis][bad]") {
  TraceBuilder b(kChain);
  Steady(b.Snapshot(1), 1);
  auto& mid = b.Snapshot(2);
  Steady(mid, 2);
  mid.mutable_nodes(1)->set_active_cpu_ns(1);  // work's CPU counter restarts
  Steady(b.Snapshot(3), 3);
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(Mentions(r->warnings, "'work' go backwards"));
  const NodeModel* work = r->Find("work");
  CHECK_FALSE(work->reliable);
  CHECK_FALSE(work->rate_per_core.has_value());
  CHECK(r->ranking.back() == "work");
  CHECK(r->bottleneck == "batch");

  TraceBuilder out(kChain);
  Steady(out.Snapshot(1), 1);
  auto& bad = out.Snapshot(2);
  Steady(bad, 2);
  bad.mutable_nodes(2)->set_elements_produced(3);
  Steady(out.Snapshot(3), 3);
  auto r2 = out.Analyze();
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.status().IsBadInput());
  CHECK(r2.status().message().find("'batch'") != std::string::npos);
}

TEST_CASE("Stats for a node the program lacks are ignored with a warning", "[analysis][bad]") {
  TraceBuilder b(kChain);
  for (int t = 1; t <= 2; ++t) {
    auto& s = b.Snapshot(t);
    Steady(s, t);
    TraceBuilder::Node(s, "ghost", {1, 1, 1, 0, 0});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(Mentions(r->warnings, "'ghost'"));
  CHECK(r->Find("ghost") == nullptr);
  CHECK(r->nodes.size() == 3);
}

TEST_CASE("A window beyond the trace is refused, a trace shorter than its warm-up is used whole", "[analysis][bad]") {
  TraceBuilder b(kChain, 4, 10.0);
  Steady(b.Snapshot(1), 1);
  Steady(b.Snapshot(2), 2);
  auto r = b.Analyze();
  REQUIRE(r.ok());
  CHECK(Mentions(r->warnings, "before its warm-up"));
  CHECK(r->minibatches == 200);
  AnalysisOptions opt;
  opt.window.start_seconds = 5;
  auto r2 = b.Analyze(opt);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.status().IsBadInput());
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("plumber-analysis-bad-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string File(const std::string& name, const std::string& bytes) const {
    const std::string p = (path / name).string();
    REQUIRE(WriteFileAtomically(Env::Default(), p, bytes).ok());
    return p;
  }
};

TEST_CASE("Torn tail: every complete record is analysed, with a warning naming the file", "[analysis][bad]") {
  TraceBuilder b(kChain);
  for (int t = 1; t <= 4; ++t) Steady(b.Snapshot(t), t);
  schema::Trace four = b.trace();
  four.clear_end();
  const std::string whole = SerializeTraceBinary(four);
  schema::Trace shorter = b.trace();
  shorter.mutable_snapshots()->RemoveLast();
  shorter.clear_end();
  const std::string cut_at = SerializeTraceBinary(shorter);
  TempDir dir;
  auto want = AnalyzeTraceFile(Env::Default(), dir.File("short.pb", cut_at), {});
  REQUIRE(want.ok());
  // Cut inside the last snapshot record at several offsets.
  for (size_t cut = cut_at.size() + 1; cut < whole.size(); cut += 7) {
    INFO("cut at " << cut);
    const std::string path = dir.File("torn.pb", whole.substr(0, cut));
    auto r = AnalyzeTraceFile(Env::Default(), path, {});
    REQUIRE(r.ok());
    RequireFinite(*r);
    CHECK(Mentions(r->warnings, "torn.pb"));
    CHECK(r->minibatches == want->minibatches);
    CHECK(r->observed_throughput == want->observed_throughput);
    CHECK(r->ranking == want->ranking);
  }
}

TEST_CASE("A corrupt record: the records before it are analysed, with a warning", "[analysis][bad]") {
  TraceBuilder b(kChain);
  for (int t = 1; t <= 4; ++t) Steady(b.Snapshot(t), t);
  std::string bytes = SerializeTraceBinary(b.trace());
  schema::Trace three = b.trace();
  three.mutable_snapshots()->RemoveLast();
  three.clear_end();
  const size_t last_record = SerializeTraceBinary(three).size();
  bytes[last_record + 20] ^= 0x5a;  // inside the fourth snapshot's payload
  TempDir dir;
  auto r = AnalyzeTraceFile(Env::Default(), dir.File("corrupt.pb", bytes), {});
  REQUIRE(r.ok());
  CHECK(Mentions(r->warnings, "corrupt.pb"));
  CHECK(r->window_end_seconds == 3);
}

TEST_CASE("A memory ceiling (--max-memory): input that would take more is refused before it is read", "[analysis][bad]") {
  TraceBuilder b(kChain);
  for (int t = 1; t <= 4; ++t) Steady(b.Snapshot(t), t);
  TempDir dir;
  std::string json;
  REQUIRE(google::protobuf::util::MessageToJsonString(b.trace(), &json).ok());
  const std::string json_path = dir.File("big.json", json);
  const std::string binary_path = dir.File("big.pb", SerializeTraceBinary(b.trace()));
  AnalysisOptions roomy;
  REQUIRE(AnalyzeTraceFile(Env::Default(), json_path, roomy).ok());
  REQUIRE(AnalyzeTraceFile(Env::Default(), binary_path, roomy).ok());

  // A JSON trace is parsed whole: a ceiling below its parsing cost refuses
  // it and points at the binary form, which streams.
  // Room for the binary form's largest record (16 bytes per byte) and the
  // model (4 kB per node), but not for parsing the JSON (8 per byte).
  const std::string binary = SerializeTraceBinary(b.trace());
  AnalysisOptions tight;
  tight.max_memory_bytes = std::max<uint64_t>(16 * binary.size(), 3 * 4096);
  REQUIRE(tight.max_memory_bytes < 8 * json.size());
  auto refused = AnalyzeTraceFile(Env::Default(), json_path, tight);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Status::Code::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Catch::Contains("big.json") && Catch::Contains("--max-memory") &&
                                             Catch::Contains("plumber convert"));
  // The binary form of the same trace fits, since only a record at a time
  // is held.
  CHECK(AnalyzeTraceFile(Env::Default(), binary_path, tight).ok());

  // A ceiling below one record's cost refuses the binary trace too, naming
  // the record, rather than analysing only the records before it.
  AnalysisOptions tiny;
  tiny.max_memory_bytes = 16 * 20;
  auto record = AnalyzeTraceFile(Env::Default(), binary_path, tiny);
  REQUIRE_FALSE(record.ok());
  CHECK(record.status().code() == Status::Code::kResourceExhausted);
  CHECK_THAT(record.status().message(), Catch::Contains("big.pb: record 0 at offset 12") &&
                                            Catch::Contains("--max-memory"));

  // Records that fit, but a program too large to model within the ceiling.
  AnalysisOptions few_nodes;
  few_nodes.max_memory_bytes = 2 * 4096;
  REQUIRE(16 * b.trace().header().ByteSizeLong() < few_nodes.max_memory_bytes);
  auto model = AnalyzeTraceFile(Env::Default(), binary_path, few_nodes);
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == Status::Code::kResourceExhausted);
  CHECK_THAT(model.status().message(), Catch::Contains("big.pb: modelling its program of 3 nodes"));
}

TEST_CASE("A 20000-node chain is validated and modelled without deep recursion", "[analysis][bad]") {
  // Chains this long overflowed nothing, but lookups by name made the
  // ranking quadratic (100,000 nodes took 97 s; now about 2 s).
  const int n = 20000;
  std::string json = R"({"name": "long", "nodes": [{"name": "source", "op": "range", "range": {"stop": 1000000000}})";
  for (int i = 0; i < n; ++i) {
    json += R"(, {"name": "m)" + std::to_string(i) + R"(", "op": "map", "inputs": [")" +
            (i == 0 ? std::string("source") : "m" + std::to_string(i - 1)) +
            R"("], "map": {"udf": [{"op": "add"}]}})";
  }
  json += R"(, {"name": "batch", "op": "batch", "inputs": ["m)" + std::to_string(n - 1) +
          R"("], "batch": {"batch_size": 10}}]})";
  TraceBuilder b(json, 8);
  REQUIRE(ValidatePipeline(b.header().program()).empty());
  for (int t = 1; t <= 2; ++t) {
    auto& snap = b.Snapshot(t);
    const int64_t el = 1000 * t;
    TraceBuilder::Node(snap, "source", {el, 8 * el, 2000 * el, 0, 0});
    for (int i = 0; i < n; ++i) TraceBuilder::Node(snap, "m" + std::to_string(i), {el, 8 * el, 100 * el, 0, el});
    TraceBuilder::Node(snap, "batch", {el / 10, 8 * el, 100 * el, 0, el});
  }
  auto r = b.Analyze();
  REQUIRE(r.ok());
  RequireFinite(*r);
  CHECK(r->nodes.size() == static_cast<size_t>(n + 2));
  CHECK(r->ranking.size() == static_cast<size_t>(n + 2));
  CHECK(r->observed_throughput == 100);
  // 20,000 maps at 100 ns per element outweigh the 2 us source, but each
  // map alone is cheaper: the source is the slowest single node.
  CHECK(r->bottleneck == "source");
  CHECK(r->Find("m19999") != nullptr);
  CHECK(r->Find("m19999")->name == "m19999");
  CHECK(r->Find("nope") == nullptr);
}

TEST_CASE("Not a trace, an empty file, a missing file: clear errors", "[analysis][bad]") {
  TempDir dir;
  auto empty = AnalyzeTraceFile(Env::Default(), dir.File("empty.pb", ""), {});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find("empty.pb") != std::string::npos);
  auto pipeline = AnalyzeTraceFile(Env::Default(), dir.File("p.json", kChain), {});
  REQUIRE_FALSE(pipeline.ok());
  CHECK(pipeline.status().IsBadInput());
  auto missing = AnalyzeTraceFile(Env::Default(), (dir.path / "nope.pb").string(), {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("nope.pb") != std::string::npos);
}

}  // namespace
}  // namespace plumber::analysis
