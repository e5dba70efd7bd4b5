// Measures `plumber analyze` against the cost of merely reading the trace:
// (1) a 100-node pipeline traced for 100,000 snapshots, analysed by the
// streaming path (AnalyzeTraceFile) versus framing + protobuf-parsing every
// record; (2) the answer time on a 2,000-node pipeline. Prints the numbers
// and the speed ratio (parse time / analyze time; >= 0.5 is the target).
// With --min-ratio R it exits 1 when the ratio is below R: CI's first step
// runs a smaller trace with R = 0.35, which only a 2x regression crosses
// (the reflection walk that dropped unknown fields once made it 0.25).
//
// Usage: analysis_bench [--snapshots N] [--nodes N] [--wide-nodes N] [--dir DIR] [--min-ratio R]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "analysis/analyze.h"
#include "report/analysis_format.h"
#include "base/env.h"
#include "traceio/record_io.h"
#include "traceio/trace_io.h"

namespace plumber {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// A chain: range -> (nodes - 2) maps -> batch 32, each map burning CPU.
schema::TraceHeader Header(int nodes) {
  schema::TraceHeader h;
  h.set_tool_version("0.1.0");
  auto* p = h.mutable_program();
  p->set_name("bench");
  auto* src = p->add_nodes();
  src->set_name("n0");
  src->set_op("range");
  src->mutable_range()->set_stop(1000000000);
  for (int i = 1; i < nodes - 1; ++i) {
    auto* m = p->add_nodes();
    m->set_name("n" + std::to_string(i));
    m->set_op("map");
    m->add_inputs("n" + std::to_string(i - 1));
    auto* op = m->mutable_map()->add_udf();
    op->set_op("cpu_burn");
    (*op->mutable_args())["micros"].set_number_value(10);
    m->mutable_map()->set_parallelism(1 + i % 4);
  }
  auto* b = p->add_nodes();
  b->set_name("n" + std::to_string(nodes - 1));
  b->set_op("batch");
  b->add_inputs("n" + std::to_string(nodes - 2));
  b->mutable_batch()->set_batch_size(32);
  h.mutable_machine()->set_cores(16);
  h.mutable_machine()->set_memory_bytes(int64_t{64} << 30);
  h.mutable_options()->set_warmup_seconds(1);
  return h;
}

Status WriteBenchTrace(const std::string& path, int nodes, int snapshots) {
  schema::TraceHeader header = Header(nodes);
  PLUMBER_ASSIGN_OR_RETURN(auto writer, TraceWriter::Create(Env::Default(), path, header));
  schema::Snapshot s;
  for (int i = 0; i < nodes; ++i) s.add_nodes()->set_name("n" + std::to_string(i));
  for (int t = 1; t <= snapshots; ++t) {
    s.set_wall_ns(int64_t{100000000} * t);  // every 100 ms
    const int64_t batches = 50LL * t;
    for (int i = 0; i < nodes; ++i) {
      auto* n = s.mutable_nodes(i);
      const int64_t el = i == nodes - 1 ? batches : 32 * batches;
      n->set_elements_produced(el);
      n->set_elements_consumed(i == 0 ? 0 : 32 * batches);
      n->set_bytes_produced(el * (i == nodes - 1 ? 8 * 32 : 8));
      n->set_bytes_consumed(i == 0 ? 0 : 32 * batches * 8);
      n->set_active_cpu_ns(el * (1000 + 37 * i));
      n->set_wall_ns(el * (1500 + 37 * i));
      n->set_parallelism(1);
    }
    s.mutable_root()->set_next_calls(batches);
    s.set_process_cpu_ns(int64_t{150000000} * t);
    PLUMBER_RETURN_IF_ERROR(writer->Append(s));
  }
  schema::RunEnd end;
  end.set_status("ok");
  return writer->Finish(end);
}

// The baseline: read every framed record and parse it with protobuf.
StatusOr<uint64_t> ParseOnly(const std::string& path) {
  PLUMBER_ASSIGN_OR_RETURN(uint64_t size, Env::Default()->GetFileSize(path));
  PLUMBER_ASSIGN_OR_RETURN(auto file, Env::Default()->NewSequentialFile(path));
  PLUMBER_RETURN_IF_ERROR(file->Skip(kTracePreambleBytes));
  RecordReader reader(file.get(), size, kTracePreambleBytes);
  std::string payload;
  schema::TraceRecord record;
  uint64_t nodes = 0;
  while (reader.Read(&payload)) {
    if (!record.ParseFromString(payload)) return Status::Corruption(path + ": bad record");
    if (record.has_snapshot()) nodes += record.snapshot().nodes_size();
  }
  PLUMBER_RETURN_IF_ERROR(reader.status());
  return nodes;
}

int Main(int argc, char** argv) {
  int snapshots = 100000, nodes = 100, wide = 2000;
  double min_ratio = 0;
  std::string dir = (std::filesystem::temp_directory_path() / ("plumber-bench-" + std::to_string(::getpid()))).string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--snapshots") snapshots = std::atoi(argv[i + 1]);
    if (a == "--nodes") nodes = std::atoi(argv[i + 1]);
    if (a == "--wide-nodes") wide = std::atoi(argv[i + 1]);
    if (a == "--dir") dir = argv[i + 1];
    if (a == "--min-ratio") min_ratio = std::atof(argv[i + 1]);
  }
  std::filesystem::create_directories(dir);
  const std::string big = dir + "/big.pb";
  const std::string wide_path = dir + "/wide.pb";

  auto t0 = Clock::now();
  if (Status s = WriteBenchTrace(big, nodes, snapshots); !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  if (Status s = WriteBenchTrace(wide_path, wide, 20); !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  auto t1 = Clock::now();
  std::printf("generated %d nodes x %d snapshots (%.0f MB) in %.2f s\n", nodes, snapshots,
              std::filesystem::file_size(big) / 1e6, Seconds(t0, t1));

  // Warm the page cache so both measurements read from memory.
  (void)ParseOnly(big);
  double parse = 1e9, analyze = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto a = Clock::now();
    auto n = ParseOnly(big);
    auto b = Clock::now();
    if (!n.ok()) return std::fprintf(stderr, "%s\n", n.status().ToString().c_str()), 1;
    auto r = analysis::AnalyzeTraceFile(Env::Default(), big, {});
    const std::string json = r.ok() ? report::FormatAnalysisJson(*r) : "";
    auto c = Clock::now();
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 1;
    parse = std::min(parse, Seconds(a, b));
    analyze = std::min(analyze, Seconds(b, c));
  }
  std::printf("parse records only: %.3f s; analyze (stream + model + JSON): %.3f s\n", parse, analyze);
  std::printf("speed ratio analyze/parse = %.2f (>= 0.50 wanted)\n", parse / analyze);

  double wide_s = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto a = Clock::now();
    auto r = analysis::AnalyzeTraceFile(Env::Default(), wide_path, {});
    const std::string text = r.ok() ? report::FormatAnalysisText(*r) : "";
    auto b = Clock::now();
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.status().ToString().c_str()), 1;
    wide_s = std::min(wide_s, Seconds(a, b));
  }
  std::printf("%d-node pipeline (20 snapshots): analyze + text report in %.4f s\n", wide, wide_s);
  std::filesystem::remove_all(dir);
  if (parse / analyze < min_ratio) {
    std::fprintf(stderr, "analysis_bench: analyze/parse %.2f is below %.2f: analysis got at least 2x slower\n",
                 parse / analyze, min_ratio);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace plumber

int main(int argc, char** argv) { return plumber::Main(argc, argv); }
