// The rewrite keeps what the pipeline yields: run a pipeline and trace it,
// rewrite the trace, then drain both pipelines in the runtime. For a
// deterministic pipeline every element must be byte-identical and in the
// same order; for a random one the count and the element signature (dtypes
// and shapes) must match.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "analysis/analyze.h"
#include "base/crc32c.h"
#include "rewrite/rewriter.h"
#include "runtime/datagen.h"
#include "runtime/program.h"
#include "runtime/run.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

using namespace plumber;

namespace {

struct Drained {
  std::vector<uint32_t> checksums;  // one per element, in order
  std::vector<std::string> signatures;
};

std::string Signature(const runtime::Element& e) {
  std::string s;
  for (const auto& t : e) {
    s += std::to_string(static_cast<int>(t.dtype())) + "[";
    for (auto d : t.shape()) s += std::to_string(d) + ",";
    s += "]";
  }
  return s;
}

// The validated graph of a pipeline the test holds.
ProgramGraph Graph(const schema::Pipeline& p) {
  auto g = ProgramGraph::Build(p, "test pipeline");
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

Drained Drain(const schema::Pipeline& p, const std::string& base_dir) {
  runtime::Storage storage(Env::Default(), runtime::StorageOptions{});
  runtime::RunContext ctx{&storage, false};
  auto program = runtime::Program::Build(Graph(p), runtime::BuildContext{Env::Default(), base_dir});
  INFO(program.status().ToString());
  REQUIRE(program.ok());
  auto it = (*program)->output()->MakeIterator(runtime::IterCtx{&ctx, nullptr, nullptr});
  REQUIRE(it.ok());
  Drained out;
  while (true) {
    runtime::Element e;
    bool end = false;
    Status s = (*it)->GetNext(&e, &end);
    INFO(s.ToString());
    REQUIRE(s.ok());
    if (end) break;
    out.checksums.push_back(crc32c::Value(runtime::SerializeElement(e)));
    out.signatures.push_back(Signature(e));
  }
  (*it)->Close();
  return out;
}

// Traces `p` briefly, then rewrites the trace for 4 cores and 1 GB.
rewrite::RewriteResult TraceAndRewrite(const schema::Pipeline& p, const std::string& dir) {
  runtime::RunConfig config;
  config.batches = 20;
  config.snapshot_every_seconds = 0.05;
  config.trace_path = dir + "/trace.pb";
  config.base_dir = dir;
  config.tool_version = "test";
  auto run = runtime::RunPipeline(Env::Default(), Graph(p), config);
  REQUIRE(run.ok());
  INFO(run->error.ToString());
  REQUIRE(run->end_status != "error");
  analysis::AnalysisOptions opt;
  opt.cores = 4;
  opt.memory_bytes = uint64_t{1} << 30;
  opt.solve_programs = true;
  auto report = analysis::AnalyzeTraceFile(Env::Default(), config.trace_path, opt);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  auto result = rewrite::Rewrite(*report);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return std::move(result).value();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "plumber-rw-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

schema::Pipeline Parse(const std::string& json) {
  auto p = ParsePipeline(json, "test.json");
  REQUIRE(p.ok());
  Graph(*p);  // valid
  return *p;
}

const char* kImagePipeline = R"({"name": "image", "nodes": [
  {"name": "files", "op": "list_files", "list_files": {"pattern": "data/*.tfrecord"}},
  {"name": "read", "op": "tfrecord"},
  {"name": "shards", "op": "interleave", "inputs": ["files"], "interleave": {"function": "read", "cycle_length": 2}},
  {"name": "decode", "op": "map", "inputs": ["shards"], "map": {"udf": [
    {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}},
    {"op": "decode_jpeg", "args": {"channels": 3}},
    {"op": "resize", "args": {"height": 32, "width": 32}}%s]}},
  {"name": "again", "op": "repeat", "inputs": ["decode"], "repeat": {"count": 3}},
  {"name": "batch", "op": "batch", "inputs": ["again"], "batch": {"batch_size": 8}}]})";

std::string ImagePipeline(bool random) {
  char buf[4096];
  std::snprintf(buf, sizeof(buf), kImagePipeline,
                random ? R"(, {"op": "random_crop", "args": {"height": 24, "width": 24, "seed": 3}},
                             {"op": "random_flip_left_right", "args": {"seed": 4}})"
                       : "");
  return buf;
}

}  // namespace

TEST_CASE("a rewritten deterministic pipeline yields the same elements", "[rewrite][semantics]") {
  TempDir dir;
  runtime::ImageGenOptions gen;
  gen.files = 3;
  gen.records_per_file = 24;
  gen.width = gen.height = 48;
  std::filesystem::create_directories(dir.path() + "/data");
  auto files = runtime::GenerateImages(Env::Default(), dir.path() + "/data", gen);
  INFO(files.status().ToString());
  REQUIRE(files.ok());
  const schema::Pipeline original = Parse(ImagePipeline(false));
  rewrite::RewriteResult r = TraceAndRewrite(original, dir.path());
  // The rewrite must have changed something for the test to mean anything.
  REQUIRE_FALSE(r.changes.empty());
  const Drained before = Drain(original, dir.path());
  const Drained after = Drain(r.pipeline, dir.path());
  CHECK(before.checksums.size() == 3 * 72 / 8);
  CHECK(after.checksums == before.checksums);
}

TEST_CASE("a rewritten random pipeline keeps its count and signature", "[rewrite][semantics]") {
  TempDir dir;
  runtime::ImageGenOptions gen;
  gen.files = 2;
  gen.records_per_file = 16;
  gen.width = gen.height = 48;
  std::filesystem::create_directories(dir.path() + "/data");
  auto files = runtime::GenerateImages(Env::Default(), dir.path() + "/data", gen);
  INFO(files.status().ToString());
  REQUIRE(files.ok());
  const schema::Pipeline original = Parse(ImagePipeline(true));
  rewrite::RewriteResult r = TraceAndRewrite(original, dir.path());
  REQUIRE_FALSE(r.changes.empty());
  const Drained before = Drain(original, dir.path());
  const Drained after = Drain(r.pipeline, dir.path());
  CHECK(before.signatures.size() == 3 * 32 / 8);
  CHECK(after.signatures == before.signatures);
}

TEST_CASE("a rewritten CPU pipeline with a cache yields the same elements", "[rewrite][semantics]") {
  TempDir dir;
  const schema::Pipeline original = Parse(R"({"name": "cpu", "nodes": [
    {"name": "src", "op": "range", "range": {"stop": 256}},
    {"name": "burn", "op": "map", "inputs": ["src"], "map": {"udf": [{"op": "cpu_burn", "args": {"micros": 200}},
                                                                       {"op": "add", "args": {"value": 7}}]}},
    {"name": "again", "op": "repeat", "inputs": ["burn"], "repeat": {"count": 4}},
    {"name": "batch", "op": "batch", "inputs": ["again"], "batch": {"batch_size": 16}}]})");
  rewrite::RewriteResult r = TraceAndRewrite(original, dir.path());
  bool cached = false;
  for (const auto& n : r.pipeline.nodes()) cached = cached || n.op() == "cache";
  CHECK(cached);  // deterministic and re-read by the repeat: a cache pays
  const Drained before = Drain(original, dir.path());
  const Drained after = Drain(r.pipeline, dir.path());
  CHECK(before.checksums.size() == 64);
  CHECK(after.checksums == before.checksums);
}
