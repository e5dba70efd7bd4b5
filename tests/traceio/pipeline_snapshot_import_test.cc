// The Plumber PipelineSnapshot importer on the fixtures of
// testdata/pipeline_snapshot: what the import makes of each field, that the
// text and binary forms import alike, that the analysis of the pair equals
// the README's hand computation, that detection claims nothing else, and
// that every kind of bad input fails with the file and the place.
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <google/protobuf/text_format.h>

#include "analysis/analyze.h"
#include "import_notes.h"
#include "pipeline_snapshot.pb.h"
#include "traceio/import.h"
#include "traceio/pipeline_snapshot_import.h"

namespace plumber {
namespace {

using tfsnap::PipelineSnapshot;

std::string SnapshotFixture(const std::string& name) {
  const std::string path = std::string(PLUMBER_SOURCE_DIR) + "/testdata/pipeline_snapshot/" + name;
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

PipelineSnapshot FromText(const std::string& name) {
  PipelineSnapshot s;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(SnapshotFixture(name), &s));
  return s;
}

ImportInput Input(const std::string& path, const PipelineSnapshot& s) { return {path, s.SerializeAsString(), {}}; }

StatusOr<schema::Trace> ImportPair(const PipelineSnapshot& a, const PipelineSnapshot& b) {
  return ImportDumps({Input("a.pb", a), Input("b.pb", b)}, {});
}

const schema::Node& NodeNamed(const schema::Pipeline& p, const std::string& name) {
  for (const auto& n : p.nodes()) {
    if (n.name() == name) return n;
  }
  FAIL("no node " << name);
  static schema::Node none;
  return none;
}

const schema::NodeStats& StatsNamed(const schema::Snapshot& s, const std::string& name) {
  for (const auto& n : s.nodes()) {
    if (n.name() == name) return n;
  }
  FAIL("no stats for " << name);
  static schema::NodeStats none;
  return none;
}

TEST_CASE("PipelineSnapshot: the pair imports as one run with the fixture's numbers", "[import][snapshot]") {
  auto t =
      ImportDumps({{"run_a.pb", SnapshotFixture("run_a.pb"), {}}, {"run_b.pb", SnapshotFixture("run_b.pb"), {}}}, {});
  REQUIRE(t.ok());
  const auto& h = t->header();
  CHECK(h.program().imported_from() == "Plumber PipelineSnapshot");
  CHECK(h.program().output() == "Prefetch.14");
  REQUIRE(h.program().nodes_size() == 6);
  // Output first, then down the inputs.
  CHECK(h.program().nodes(0).name() == "Prefetch.14");

  const auto& prefetch = NodeNamed(h.program(), "Prefetch.14");
  CHECK(prefetch.op() == "prefetch");
  CHECK(prefetch.imported_type() == "Prefetch");
  CHECK(prefetch.prefetch().buffer_size() == 2);
  const auto& batch = NodeNamed(h.program(), "BatchV2.12");
  CHECK(batch.op() == "batch");
  CHECK(batch.batch().batch_size() == 32);
  CHECK(!batch.batch().has_parallelism());
  const auto& map = NodeNamed(h.program(), "ParallelMapV2.9");
  CHECK(map.op() == "map");
  CHECK(map.map().parallelism() == 4);
  CHECK(map.inputs(0) == "ParallelInterleaveV4.7");
  const auto& il = NodeNamed(h.program(), "ParallelInterleaveV4.7");
  CHECK(il.op() == "interleave");
  CHECK(il.interleave().function() == "TFRecordDataset");
  CHECK(il.interleave().cycle_length() == 4);
  CHECK(il.interleave().block_length() == 1);
  CHECK(il.interleave().parallelism() == 2);
  CHECK(il.inputs(0) == "TensorSlice.1");
  const auto& reader = NodeNamed(h.program(), "TFRecordDataset");
  CHECK(reader.op() == "tfrecord");
  CHECK(reader.imported_type() == "TFRecord");
  CHECK(reader.inputs_size() == 0);
  const auto& slice = NodeNamed(h.program(), "TensorSlice.1");
  CHECK(slice.op() == "opaque");
  CHECK(slice.imported_type() == "TensorSlice");

  CHECK(h.machine().cores() == 8);
  CHECK(h.machine().memory_bytes() == 17179869184LL);
  CHECK(h.machine().available_memory_bytes() == 8589934592LL);
  CHECK(h.machine().read_bandwidth_bytes_per_s() == 200000000.0);
  CHECK(h.start_unix_ns() == 1764000000000000000LL);
  CHECK_FALSE(h.wait_traced());

  const auto& info = h.imported();
  CHECK(info.format() == "Plumber PipelineSnapshot");
  CHECK(info.files_size() == 2);
  CHECK(info.thread_cpu());
  CHECK(info.file_sizes_known());
  CHECK(info.window_known());
  CHECK(info.window_from() == "the dumps' own timestamps");
  CHECK(h.options().warmup_seconds() == 10.0);

  REQUIRE(t->snapshots_size() == 2);
  CHECK(t->snapshots(0).wall_ns() == 10000000000LL);
  CHECK(t->snapshots(1).wall_ns() == 30000000000LL);
  const auto& b = t->snapshots(1);
  const auto& m = StatsNamed(b, "ParallelMapV2.9");
  CHECK(m.elements_produced() == 240000);
  CHECK(m.elements_consumed() == 240000);
  CHECK(m.active_cpu_ns() == 96000000000LL);   // the thread CPU clock
  CHECK(m.self_wall_ns() == 102000000000LL);   // the wall time of its own work
  CHECK(m.bytes_produced() == 960000000);
  CHECK(m.bytes_consumed() == 240000000);
  CHECK(m.parallelism() == 4);
  CHECK_FALSE(m.has_cardinality());  // -2: unknown
  const auto& r = StatsNamed(b, "TFRecordDataset");
  CHECK(r.storage_bytes_read() == 240000000);
  CHECK(r.files_completed() == 4);
  CHECK(r.files_opened() == 4);
  CHECK(r.completed_file_bytes() == 400000000);
  CHECK(r.completed_file_bytes_sq() == 1e16 + 1.44e16 + 0.64e16 + 1e16);
  CHECK(r.completed_file_records() == 400000);
  CHECK(r.completed_file_records_sq() == 1e10 + 1.44e10 + 0.64e10 + 1e10);
  CHECK(StatsNamed(b, "TensorSlice.1").cardinality() == 4);
  CHECK(b.root().next_calls() == 7500);
  CHECK(b.root().wait_ns() == 3750000000LL);
  CHECK(b.process_cpu_ns() == 103000000000LL);
  CHECK(t->snapshots(0).root().wait_ns() == 1250000000LL);
}

TEST_CASE("PipelineSnapshot: the text and binary fixtures import identically", "[import][snapshot]") {
  for (const char* name : {"run_a", "run_b"}) {
    INFO(name);
    const PipelineSnapshot text = FromText(std::string(name) + ".pbtxt");
    PipelineSnapshot binary;
    REQUIRE(binary.ParseFromString(SnapshotFixture(std::string(name) + ".pb")));
    auto from_text = ImportDumps({Input("x.pb", text)}, {});
    auto from_binary = ImportDumps({Input("x.pb", binary)}, {});
    REQUIRE(from_text.ok());
    REQUIRE(from_binary.ok());
    CHECK(from_text->SerializeAsString() == from_binary->SerializeAsString());
  }
}

TEST_CASE("PipelineSnapshot: one dump says that throughput needs a second or --window", "[import][snapshot]") {
  // Without the dump's own times (and mtimes): the shared rule's note.
  PipelineSnapshot a = FromText("run_a.pbtxt");
  a.clear_snapshot_info();
  auto t = ImportDumps({Input("a.pb", a)}, {});
  REQUIRE(t.ok());
  CHECK_FALSE(t->header().imported().window_known());
  // The analysis says what that leaves unknown, and how to get it.
  auto analysed = analysis::AnalyzeTrace(*t, {}, "a.pb");
  REQUIRE(analysed.ok());
  CHECK_FALSE(analysed->observed_throughput);
  bool noted = false;
  for (const auto& l : analysed->source_limits) noted = noted || l.find("--window") != std::string::npos;
  CHECK(noted);
  // With its own timestamps the one dump covers the 10 s since the start.
  auto own = ImportDumps({{"run_a.pb", SnapshotFixture("run_a.pb"), {}}}, {});
  REQUIRE(own.ok());
  CHECK(own->header().imported().window_known());
  CHECK(own->snapshots(0).wall_ns() == 10000000000LL);
}

TEST_CASE("PipelineSnapshot: without the CPU clock fields, wall time stands in and the trace says so",
          "[import][snapshot]") {
  PipelineSnapshot a = FromText("run_a.pbtxt");
  PipelineSnapshot b = FromText("run_b.pbtxt");
  for (auto* s : {&a, &b}) {
    for (auto& op : *s->mutable_stats()) op.clear_aggregate_processing_time_clock();
  }
  auto t = ImportPair(a, b);
  REQUIRE(t.ok());
  CHECK_FALSE(t->header().imported().thread_cpu());
  CHECK(StatsNamed(t->snapshots(1), "ParallelMapV2.9").active_cpu_ns() == 102000000000LL);
}

TEST_CASE("PipelineSnapshot: the pair's analysis equals the README's hand computation", "[import][snapshot]") {
  auto t =
      ImportDumps({{"run_a.pb", SnapshotFixture("run_a.pb"), {}}, {"run_b.pb", SnapshotFixture("run_b.pb"), {}}}, {});
  REQUIRE(t.ok());
  auto a = analysis::AnalyzeTrace(*t, {}, "pair");
  REQUIRE(a.ok());
  CHECK(a->window_seconds == Approx(20));
  CHECK(a->minibatches == 5000);
  CHECK(a->observed_throughput == Approx(250));
  REQUIRE(a->consumer_wait_seconds);
  CHECK(*a->consumer_wait_seconds == Approx(0.0005));
  CHECK(*a->consumer_wait_fraction == Approx(0.125));
  CHECK(a->cpu_seconds_per_minibatch == Approx(0.013559));
  CHECK(a->bottleneck == "ParallelMapV2.9");
  for (const auto& n : a->nodes) {
    INFO(n.name);
    if (n.name == "ParallelMapV2.9") {
      CHECK(n.visit_ratio == Approx(32));
      CHECK(n.cpu_seconds_per_minibatch == Approx(0.0128));
      CHECK(n.cores_used == Approx(3.2));
      CHECK(n.cardinality.value == Approx(400000));
    } else if (n.name == "TFRecordDataset") {
      CHECK(n.visit_ratio == Approx(32));
      CHECK(n.cpu_seconds_per_minibatch == Approx(0.00064));
      CHECK(n.disk_bytes_per_minibatch == Approx(32000));
    } else if (n.name == "BatchV2.12") {
      CHECK(n.visit_ratio == Approx(1));
      CHECK(n.cpu_seconds_per_minibatch == Approx(0.00005));
      CHECK(n.cardinality.value == Approx(12500));
    } else if (n.name == "ParallelInterleaveV4.7") {
      CHECK(n.cpu_seconds_per_minibatch == Approx(0.000064));
      CHECK(n.cardinality.value == Approx(400000));
    } else if (n.name == "TensorSlice.1") {
      CHECK(n.visit_ratio == 0);
    }
  }
}

// Detection is by content and must not claim other formats.
TEST_CASE("PipelineSnapshot: detection claims the dumps and nothing else", "[import][snapshot]") {
  CHECK(DetectImportFormat(SnapshotFixture("run_a.pb")) == ImportFormat::kPipelineSnapshot);
  CHECK(LooksLikePipelineSnapshot(SnapshotFixture("run_b.pb")));
  CHECK_FALSE(LooksLikePipelineSnapshot(SnapshotFixture("run_a.pbtxt")));  // the fork writes binary only
  CHECK_FALSE(LooksLikePipelineSnapshot(""));
  CHECK_FALSE(LooksLikePipelineSnapshot("PLMTRACE\x01\x00\x00\x00"));
  CHECK_FALSE(LooksLikePipelineSnapshot("{\"header\": {}}"));
  // A binary plumber pipeline (every top-level field length-delimited, as
  // the snapshot's are).
  schema::Pipeline p;
  p.set_name("demo");
  auto* n = p.add_nodes();
  n->set_name("src");
  n->set_op("range");
  n->mutable_range()->set_stop(10);
  p.set_output("src");
  CHECK_FALSE(LooksLikePipelineSnapshot(p.SerializeAsString()));
  // A tf.data ModelProto, map form: nodes {key: 1 value {id: 1 name:
  // "Prefetch"}} output: 1 (field 2 as a varint, where the snapshot has
  // its stats).
  const std::string node = std::string("\x08\x01\x12\x08Prefetch", 12);
  const std::string entry = std::string("\x08\x01\x12", 3) + static_cast<char>(node.size()) + node;
  const std::string model = std::string("\x0a", 1) + static_cast<char>(entry.size()) + entry + std::string("\x10\x01", 2);
  CHECK_FALSE(LooksLikePipelineSnapshot(model));
  // Its nested form: output {id: 1 name: "Prefetch"}.
  CHECK_FALSE(LooksLikePipelineSnapshot(std::string("\x0a", 1) + static_cast<char>(node.size()) + node));
  // A snapshot whose stats name no op of its graph is not one.
  PipelineSnapshot s = FromText("run_a.pbtxt");
  for (auto& op : *s.mutable_stats()) op.set_name("elsewhere/" + op.name());
  CHECK_FALSE(LooksLikePipelineSnapshot(s.SerializeAsString()));
}

// Each case breaks one thing in dump A and names what the error must say.
struct BadCase {
  const char* what;
  std::function<void(PipelineSnapshot&)> breaks;
  const char* says;
};

TEST_CASE("PipelineSnapshot: bad input fails with the file and the place", "[import][snapshot][bad]") {
  auto stat = [](PipelineSnapshot& s, const std::string& name) -> PipelineSnapshot::OpStats& {
    for (auto& op : *s.mutable_stats()) {
      if (op.name() == name) return op;
    }
    FAIL("no stats " << name);
    return *s.mutable_stats(0);
  };
  auto node = [](PipelineSnapshot& s, const std::string& name) -> tfsnap::NodeDef& {
    for (auto& n : *s.mutable_graph()->mutable_node()) {
      if (n.name() == name) return n;
    }
    FAIL("no node " << name);
    return *s.mutable_graph()->mutable_node(0);
  };
  const std::vector<BadCase> cases = {
      {"negative CPU time", [&](auto& s) { stat(s, "ParallelMapDatasetV2/_9").set_aggregate_processing_time_clock(-5); },
       "stats[2] (op 'ParallelMapDatasetV2/_9'): aggregate_processing_time_clock is negative (-5)"},
      {"negative count", [&](auto& s) { stat(s, "BatchDatasetV2/_12").set_aggregate_elements_produced(-1); },
       "(op 'BatchDatasetV2/_12'): aggregate_elements_produced is negative"},
      {"huge count", [&](auto& s) { stat(s, "TFRecordDataset").set_aggregate_elements_produced(INT64_MAX); },
       "(op 'TFRecordDataset'): aggregate_elements_produced is 9223372036854775807, beyond any real run"},
      {"huge parallelism", [&](auto& s) { stat(s, "ParallelMapDatasetV2/_9").set_aggregate_parallelism(1 << 30); },
       "aggregate_parallelism is 1073741824, beyond any real run"},
      {"unknown cardinality code", [&](auto& s) { stat(s, "TensorSliceDataset/_1").set_cardinality(-3); },
       "(op 'TensorSliceDataset/_1'): cardinality -3 is none of a count, -1 (infinite) or -2 (unknown)"},
      {"repeated op name in stats", [&](auto& s) { *s.add_stats() = s.stats(0); },
       "stats[6] (op 'PrefetchDataset/_14'): repeats the op name of an earlier entry"},
      {"repeated node name in graph", [&](auto& s) { *s.mutable_graph()->add_node() = s.graph().node(1); },
       "the graph: node 16 repeats the name 'TensorSliceDataset/_1' of node 1"},
      {"missing root", [&](auto& s) { node(s, "dataset").set_name("not_the_root"); },
       "the graph has no root: no node named 'dataset'"},
      {"root reads nothing", [&](auto& s) { node(s, "dataset").clear_input(); }, "the root node 'dataset' reads no dataset op"},
      {"cycle", [&](auto& s) { node(s, "TensorSliceDataset/_1").add_input("PrefetchDataset/_14"); },
       "the datasets form a cycle through 'PrefetchDataset/_14'"},
      {"missing interleave function",
       [&](auto& s) { s.mutable_graph()->mutable_library()->mutable_function(0)->mutable_signature()->set_name("x"); },
       "op 'ParallelInterleaveDatasetV4/_7': function '__inference_read_file_10' is not in the graph's library"},
      {"input that does not exist", [&](auto& s) { node(s, "dataset").set_input(0, "Nowhere"); },
       "the root node 'dataset' reads no dataset op ('Nowhere')"},
      {"negative file size", [&](auto& s) { s.mutable_ctx_info()->mutable_file_sizes(2)->set_size(-7); },
       "ctx_info.file_sizes[2] ('data/train-2.tfrecord'): size is negative (-7)"},
      {"file listed twice", [&](auto& s) { *s.mutable_ctx_info()->add_file_sizes() = s.ctx_info().file_sizes(0); },
       "ctx_info.file_sizes[4] ('data/train-0.tfrecord'): the file is listed twice"},
      {"negative cores", [&](auto& s) { s.mutable_machine_info()->set_num_cores(-8); },
       "machine_info: num_cores is negative (-8)"},
      {"NaN bandwidth", [&](auto& s) { s.mutable_machine_info()->set_estimated_disk_bandwidth(std::nan("")); },
       "machine_info: estimated_disk_bandwidth is not a bandwidth"},
      {"negative wait", [&](auto& s) { s.mutable_iter_stats()->set_avg_wallclock_duration(-1); },
       "iter_stats: avg_wallclock_duration is not a duration"},
      {"time running backwards", [&](auto& s) { s.mutable_snapshot_info()->set_current_time(5); },
       "snapshot_info: current_time is before start_time"},
      {"negative time", [&](auto& s) { s.mutable_snapshot_info()->set_start_time(-1); },
       "snapshot_info: start_time is negative (-1)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    PipelineSnapshot a = FromText("run_a.pbtxt");
    c.breaks(a);
    auto t = ImportDumps({Input("bad.pb", a)}, {});
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == Status::Code::kInvalidArgument);
    CHECK(t.status().message().rfind("bad.pb: ", 0) == 0);
    CHECK_THAT(t.status().message(), Catch::Contains(c.says));
  }
}

TEST_CASE("PipelineSnapshot: dumps of one run must agree", "[import][snapshot][bad]") {
  const PipelineSnapshot a = FromText("run_a.pbtxt");
  const PipelineSnapshot b = FromText("run_b.pbtxt");
  SECTION("given in the wrong order, their own times run backwards") {
    auto t = ImportPair(b, a);
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains("b.pb: the dumps' own times do not move forward"));
  }
  SECTION("a different pipeline") {
    PipelineSnapshot other = b;
    for (auto& n : *other.mutable_graph()->mutable_node()) {
      if (n.name() == "BatchDatasetV2/_12") n.set_op("PaddedBatchDatasetV2");
    }
    auto t = ImportPair(a, other);
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains("b.pb: shows a different pipeline from a.pb"));
  }
  SECTION("a root wait beyond any run") {
    PipelineSnapshot big = a;
    big.mutable_iter_stats()->set_avg_wallclock_duration(1e17);
    auto t = ImportDumps({Input("big.pb", big)}, {});
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains("big.pb: iter_stats: avg_wallclock_duration times the root's"));
  }
}

using testing::HasNote;

TEST_CASE("PipelineSnapshot: autotuned or missing constants come from the counters, with a note",
          "[import][snapshot]") {
  PipelineSnapshot a = FromText("run_a.pbtxt");
  for (auto& n : *a.mutable_graph()->mutable_node()) {
    if (n.name() == "Const/_13" || n.name() == "Const/_2") {
      (*n.mutable_attr())["value"].mutable_tensor()->set_int64_val(0, -1);  // AUTOTUNE
    }
    if (n.name() == "Const/_10") n.clear_attr();  // a placeholder, not a constant
  }
  auto t = ImportDumps({Input("a.pb", a)}, {});
  REQUIRE(t.ok());
  const auto& p = t->header().program();
  CHECK(NodeNamed(p, "Prefetch.14").prefetch().buffer_size() == 2);  // the largest it held
  CHECK(NodeNamed(p, "ParallelInterleaveV4.7").interleave().cycle_length() == 2);  // its parallelism
  CHECK(NodeNamed(p, "BatchV2.12").batch().batch_size() == 32);  // 80,000 elements / 2,500 batches
  CHECK(HasNote(*t, "the buffer of 'Prefetch.14' was autotuned; taken as 2"));
  CHECK(HasNote(*t, "the cycle_length of 'ParallelInterleaveV4.7' was autotuned"));
  CHECK(HasNote(*t, "the batch size of 'BatchV2.12' is not a constant in the graph; taken as 32"));
}

TEST_CASE("PipelineSnapshot: without file sizes the reader's cardinality is unknown, and said",
          "[import][snapshot]") {
  PipelineSnapshot a = FromText("run_a.pbtxt");
  a.mutable_ctx_info()->clear_file_sizes();
  auto t = ImportDumps({Input("a.pb", a)}, {});
  REQUIRE(t.ok());
  CHECK_FALSE(t->header().imported().file_sizes_known());
  CHECK(StatsNamed(t->snapshots(0), "TFRecordDataset").files_completed() == 0);
  CHECK(HasNote(*t, "the dump lists no file sizes"));
}

TEST_CASE("PipelineSnapshot: names that are not text become printable in the trace", "[import][snapshot]") {
  // Regression (fuzz/corpus/pipeline_snapshot_fuzz/regression-invalid-utf8-names):
  // the dump's names are bytes; the trace's strings must be UTF-8.
  PipelineSnapshot a = FromText("run_a.pbtxt");
  for (auto& n : *a.mutable_graph()->mutable_node()) {
    if (n.name() == "TensorSliceDataset/_1") n.set_op("Odd\xff" "Dataset");
  }
  a.add_stats()->set_name("\xfe\xff");
  auto t = ImportDumps({Input("a.pb", a)}, {});
  REQUIRE(t.ok());
  CHECK(NodeNamed(t->header().program(), "Odd..1").imported_type() == "Odd.");
  CHECK(HasNote(*t, "left out: '?" "?'"));
  schema::Trace again;
  REQUIRE(again.ParseFromString(t->SerializeAsString()));
  CHECK(again.SerializeAsString() == t->SerializeAsString());
}

TEST_CASE("PipelineSnapshot: ops plumber has no op for stay, as opaque nodes", "[import][snapshot]") {
  PipelineSnapshot a = FromText("run_a.pbtxt");
  for (auto& n : *a.mutable_graph()->mutable_node()) {
    if (n.name() == "BatchDatasetV2/_12") n.set_op("UnbatchDataset");
  }
  auto t = ImportDumps({Input("a.pb", a)}, {});
  REQUIRE(t.ok());
  const auto& n = NodeNamed(t->header().program(), "Unbatch.12");
  CHECK(n.op() == "opaque");
  CHECK(n.imported_type() == "Unbatch");
  CHECK(StatsNamed(t->snapshots(0), "Unbatch.12").elements_produced() == 2500);
}

}  // namespace
}  // namespace plumber
