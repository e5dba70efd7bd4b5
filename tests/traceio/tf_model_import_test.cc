// Importing tf.data's autotuning model dumps (testdata/tfdata/): the program
// each fixture becomes, its counters, ImportInfo and times, text and binary
// alike, detection that claims only model dumps, and every bad input
// refused with the file and the place. testdata/tfdata/README.md works the
// fixtures' numbers out by hand.
#include <catch2/catch.hpp>

#include <fstream>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <sstream>

#include "analysis/analyze.h"
#include "pipeline/program_graph.h"
#include "tf_model.pb.h"
#include "import_notes.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/tf_model_import.h"
#include "traceio/trace_io.h"

using namespace plumber;
using google::protobuf::util::MessageDifferencer;

namespace {

std::string Fixture(const std::string& name) { return std::string(PLUMBER_SOURCE_DIR) + "/testdata/tfdata/" + name; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ImportInput Input(const std::string& name) { return {Fixture(name), Slurp(Fixture(name)), std::nullopt}; }

schema::Trace Import(const std::vector<std::string>& names, std::optional<double> window = std::nullopt) {
  std::vector<ImportInput> inputs;
  for (const auto& n : names) inputs.push_back(Input(n));
  ImportOptions options;
  options.window_seconds = window;
  auto trace = ImportDumps(inputs, options);
  INFO(trace.status().message());
  REQUIRE(trace.ok());
  return *trace;
}

const schema::Node& ProgramNode(const schema::Trace& t, const std::string& name) {
  for (const auto& n : t.header().program().nodes()) {
    if (n.name() == name) return n;
  }
  FAIL("no node " << name);
  return t.header().program().nodes(0);
}

const schema::NodeStats& Stats(const schema::Trace& t, int snapshot, const std::string& name) {
  for (const auto& s : t.snapshots(snapshot).nodes()) {
    if (s.name() == name) return s;
  }
  FAIL("no stats for " << name);
  return t.snapshots(snapshot).nodes(0);
}

using testing::HasNote;

Status ImportError(const std::string& name, const std::string& bytes) {
  auto trace = ImportTfModel({{name, bytes, std::nullopt}}, {});
  REQUIRE_FALSE(trace.ok());
  return trace.status();
}

const std::vector<std::string> kFixtures = {"nested_tf26",   "map_tf27",   "map_gap_tf214", "map_name_tf216",
                                            "map_interleave", "map_opaque", "run_a",         "run_b"};

}  // namespace

TEST_CASE("every fixture's binary is its text encoded", "[tf_model]") {
  // What `protoc --encode` made; re-encoded here so that an edit of one
  // without the other is caught.
  for (const auto& name : kFixtures) {
    INFO(name);
    const std::string text = Slurp(Fixture(name + ".pbtxt"));
    const std::string binary = Slurp(Fixture(name + ".pb"));
    std::string encoded;
    if (name.rfind("nested", 0) == 0) {
      tfmodel::NestedModelProto m;
      REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &m));
      REQUIRE(m.SerializeToString(&encoded));
    } else {
      tfmodel::ModelProto m;
      REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &m));
      REQUIRE(m.SerializeToString(&encoded));
    }
    CHECK(encoded == binary);
  }
}

TEST_CASE("text and binary dumps import to the same trace, a valid program", "[tf_model]") {
  for (const auto& name : kFixtures) {
    INFO(name);
    CHECK(LooksLikeTfModel(Slurp(Fixture(name + ".pbtxt"))));
    CHECK(LooksLikeTfModel(Slurp(Fixture(name + ".pb"))));
    schema::Trace text = Import({name + ".pbtxt"});
    schema::Trace binary = Import({name + ".pb"});
    CHECK(ProgramGraph::Build(text.header().program(), name).ok());
    // Only the file names and a text dump's named algorithm differ.
    for (auto* t : {&text, &binary}) {
      t->mutable_header()->mutable_imported()->clear_files();
      t->mutable_header()->mutable_imported()->clear_autotune_algorithm();
    }
    CHECK(MessageDifferencer::Equals(text, binary));
  }
}

TEST_CASE("nested form: program, counters and what the source could not tell", "[tf_model]") {
  const schema::Trace t = Import({"nested_tf26.pbtxt"});
  const auto& p = t.header().program();
  CHECK(p.imported_from() == "tf.data autotuning model (nested form, TF 2.5-2.6)");
  CHECK(p.output() == "Root.1");
  REQUIRE(p.nodes_size() == 5);
  CHECK(p.nodes(0).name() == "TFRecord.5");  // sources first
  CHECK(ProgramNode(t, "Root.1").op() == "opaque");
  CHECK(ProgramNode(t, "Root.1").imported_type() == "Root");
  CHECK(ProgramNode(t, "Prefetch.2").prefetch().buffer_size() == 2);
  CHECK(ProgramNode(t, "BatchV2.3").op() == "batch");
  CHECK(ProgramNode(t, "BatchV2.3").batch().batch_size() == 32);
  CHECK(ProgramNode(t, "ParallelMapV2.4").op() == "map");
  CHECK(ProgramNode(t, "ParallelMapV2.4").map().parallelism() == 4);
  CHECK(ProgramNode(t, "ParallelMapV2.4").imported_type() == "ParallelMapV2");
  CHECK(ProgramNode(t, "ParallelMapV2.4").inputs(0) == "TFRecord.5");
  CHECK(ProgramNode(t, "TFRecord.5").op() == "tfrecord");

  REQUIRE(t.snapshots_size() == 1);
  const auto& map = Stats(t, 0, "ParallelMapV2.4");
  CHECK(map.elements_produced() == 3264);
  CHECK(map.elements_consumed() == 3264);
  CHECK(map.active_cpu_ns() == 6528000000);
  CHECK(map.self_wall_ns() == 6528000000);
  CHECK(map.parallelism() == 4);
  CHECK(map.buffer_peak_fill() == 4);
  CHECK(map.peak_buffered_bytes() == 4000);
  const auto& batch = Stats(t, 0, "BatchV2.3");
  CHECK(batch.elements_produced() == 102);
  CHECK(batch.elements_consumed() == 3264);
  const auto& prefetch = Stats(t, 0, "Prefetch.2");
  CHECK(prefetch.buffer_capacity() == 2);
  CHECK(prefetch.buffer_peak_fill() == 2);
  CHECK(Stats(t, 0, "TFRecord.5").storage_bytes_read() == 3264000 + 16 * 3264);
  CHECK(Stats(t, 0, "TFRecord.5").elements_consumed() == 0);
  CHECK_FALSE(t.snapshots(0).has_root());  // the consumer's wait is not recorded

  const auto& h = t.header();
  CHECK_FALSE(h.wait_traced());
  CHECK(h.machine().cores() == 8);
  CHECK(h.machine().memory_bytes() == 4294967296);
  const auto& info = h.imported();
  CHECK(info.format() == "tf.data autotuning model (nested form, TF 2.5-2.6)");
  CHECK(info.files_size() == 1);
  CHECK_FALSE(info.thread_cpu());
  CHECK_FALSE(info.file_sizes_known());
  CHECK_FALSE(info.window_known());
  CHECK(info.autotune_algorithm() == "GRADIENT_DESCENT (named in the text dump)");
  CHECK(info.cpu_budget() == 8);
  CHECK(info.ram_budget_bytes() == 4294967296);
  CHECK(HasNote(t, "autotune's cpu_budget"));
  CHECK(HasNote(t, "16 bytes of framing each)"));
  CHECK_FALSE(info.window_known());  // one dump, no --window

  const schema::Trace b = Import({"nested_tf26.pb"});
  CHECK(b.header().imported().autotune_algorithm() == "1 (GRADIENT_DESCENT, TF 2.5-2.6 numbering)");
}

TEST_CASE("map form of TF 2.7: both readings of a binary algorithm number", "[tf_model]") {
  const schema::Trace t = Import({"map_tf27.pb"});
  CHECK(t.header().imported().format() == "tf.data autotuning model (map form, TF 2.7+)");
  CHECK(t.header().imported().autotune_algorithm() == "1 (HILL_CLIMB in TF 2.8+, GRADIENT_DESCENT in TF 2.7)");
  const auto& mab = ProgramNode(t, "MapAndBatch.3");
  CHECK(mab.op() == "batch");
  CHECK(mab.batch().batch_size() == 64);
  CHECK(mab.batch().parallelism() == 8);
  CHECK(ProgramNode(t, "Filter.4").op() == "filter");
  CHECK(ProgramNode(t, "TextLine.5").op() == "text_line");
  CHECK(Stats(t, 0, "Filter.4").elements_consumed() == 6912);
  CHECK(Stats(t, 0, "Filter.4").elements_produced() == 3456);
  CHECK(Stats(t, 0, "TextLine.5").storage_bytes_read() == 1382400 + 6912);
  CHECK(t.header().machine().cores() == 16);
  // Written as a number in the text too: just as ambiguous.
  CHECK(Import({"map_tf27.pbtxt"}).header().imported().autotune_algorithm() ==
        "1 (HILL_CLIMB in TF 2.8+, GRADIENT_DESCENT in TF 2.7)");
}

TEST_CASE("gap_times become the step time, a named algorithm is reported as named", "[tf_model]") {
  const schema::Trace t = Import({"map_gap_tf214.pbtxt"});
  CHECK(t.header().options().step_time_seconds() == Approx(0.012));
  CHECK(HasNote(t, "gap_times, microseconds"));
  CHECK(t.header().imported().autotune_algorithm() == "STAGE_BASED (named in the text dump)");
  CHECK(Import({"map_gap_tf214.pb"}).header().imported().autotune_algorithm() ==
        "4 (STAGE_BASED, TF 2.8+ numbering; the dump has gap_times, so it is not TF 2.7)");
  CHECK(ProgramNode(t, "ParallelBatch.3").batch().parallelism() == 2);
  CHECK(ProgramNode(t, "ParallelBatch.3").batch().batch_size() == 16);
  CHECK(ProgramNode(t, "Shuffle.5").op() == "shuffle");
  CHECK(ProgramNode(t, "Repeat.6").op() == "repeat");
  CHECK(ProgramNode(t, "ParallelMapV2.4").map().parallelism() == 6);
}

TEST_CASE("dataset_name rules out TF 2.7's numbering, no ram_budget means unknown memory", "[tf_model]") {
  const schema::Trace t = Import({"map_name_tf216.pb"});
  const auto& info = t.header().imported();
  CHECK(info.dataset_name() == "train_text");
  CHECK(t.header().program().name() == "train_text");
  CHECK(info.autotune_algorithm() == "1 (HILL_CLIMB, TF 2.8+ numbering; the dump has dataset_name, so it is not TF 2.7)");
  CHECK(info.ram_budget_bytes() == 0);
  CHECK(t.header().machine().memory_bytes() == 0);
  CHECK(HasNote(t, "memory is unknown"));
  CHECK(ProgramNode(t, "PaddedBatchV2.3").op() == "padded_batch");
  CHECK(ProgramNode(t, "PaddedBatchV2.3").padded_batch().batch_size() == 8);
  CHECK(ProgramNode(t, "MemoryCache.5").op() == "cache");
  CHECK_FALSE(ProgramNode(t, "Map.4").map().has_parallelism());
}

TEST_CASE("an interleave's open inputs fold into one function with summed counters", "[tf_model]") {
  const schema::Trace t = Import({"map_interleave.pbtxt"});
  const auto& p = t.header().program();
  CHECK(p.nodes_size() == 6);  // 8 nodes, three copies of the function folded
  const auto& il = ProgramNode(t, "ParallelInterleaveV4.4");
  CHECK(il.op() == "interleave");
  CHECK(il.interleave().function() == "TFRecord.7");
  CHECK(il.interleave().cycle_length() == 3);
  CHECK(il.interleave().parallelism() == 2);
  REQUIRE(il.inputs_size() == 1);
  CHECK(il.inputs(0) == "TensorSlice.5");
  CHECK(ProgramNode(t, "TensorSlice.5").op() == "opaque");
  const auto& f = Stats(t, 0, "TFRecord.7");
  CHECK(f.elements_produced() == 200);
  CHECK(f.active_cpu_ns() == 20000000);
  CHECK(f.bytes_produced() == 400000);
  CHECK(f.storage_bytes_read() == 400000 + 16 * 200);
  // The runtime charges an interleave with its input's and its function's
  // elements alike.
  CHECK(Stats(t, 0, "ParallelInterleaveV4.4").elements_consumed() == 205);
  CHECK(HasNote(t, "folded into one function"));
  CHECK(HasNote(t, "cores are unknown"));
  auto graph = ProgramGraph::Build(p, "interleave");
  REQUIRE(graph.ok());
  CHECK(graph->enclosing_interleave(graph->Find("TFRecord.7")) == graph->Find("ParallelInterleaveV4.4"));
}

TEST_CASE("types plumber has no op for stay as opaque nodes", "[tf_model]") {
  const schema::Trace t = Import({"map_opaque.pbtxt"});
  const auto& zip = ProgramNode(t, "Zip.3");
  CHECK(zip.op() == "opaque");
  CHECK(zip.imported_type() == "Zip");
  CHECK(zip.inputs_size() == 2);
  CHECK(ProgramNode(t, "Shard.6").op() == "opaque");
  CHECK(ProgramNode(t, "Range.5").op() == "opaque");
  CHECK(Stats(t, 0, "Zip.3").elements_consumed() == 54);
  CHECK(Stats(t, 0, "Shard.6").elements_consumed() == 108);
  CHECK(t.header().imported().autotune_algorithm() == "DEFAULT (named in the text dump)");
}

TEST_CASE("two dumps of one run are two snapshots of one program in time", "[tf_model]") {
  const schema::Trace t = Import({"run_a.pb", "run_b.pb"}, 10.0);
  REQUIRE(t.snapshots_size() == 2);
  CHECK(t.snapshots(0).wall_ns() == 10'000'000'000);
  CHECK(t.snapshots(1).wall_ns() == 20'000'000'000);
  CHECK(t.header().options().warmup_seconds() == 10.0);
  CHECK(t.header().imported().window_known());
  CHECK(t.header().imported().files_size() == 2);
  // The consumer's wait is not in the model: no root stats that would claim
  // it never waited.
  CHECK_FALSE(t.snapshots(0).has_root());
  CHECK(Stats(t, 1, "Root.1").elements_produced() == 300);
  CHECK(Stats(t, 1, "ParallelMapV2.4").active_cpu_ns() - Stats(t, 0, "ParallelMapV2.4").active_cpu_ns() ==
        40'000'000'000);
  CHECK(t.header().imported().autotune_algorithm() == "0 (DEFAULT in TF 2.8+, HILL_CLIMB in TF 2.7)");
  // Without --window and without file times the span is unknown.
  CHECK_FALSE(Import({"run_a.pb", "run_b.pb"}).header().imported().window_known());
}

TEST_CASE("dumps are placed in time by --window, else their files' modification times", "[tf_model][time]") {
  auto pair = [](std::optional<double> mtime_a, std::optional<double> mtime_b, std::optional<double> window) {
    std::vector<ImportInput> in = {Input("run_a.pb"), Input("run_b.pb")};
    in[0].mtime_seconds = mtime_a;
    in[1].mtime_seconds = mtime_b;
    ImportOptions options;
    options.window_seconds = window;
    auto t = ImportDumps(in, options);
    INFO(t.status().message());
    REQUIRE(t.ok());
    return *t;
  };
  auto noted = [](const schema::Trace& t, const std::string& text) {
    for (const auto& n : t.header().imported().notes()) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  // Written 10 s apart: the window is those 10 s, from the first dump (the
  // time from the run's start to it is unknown, so the warm-up skips it).
  const schema::Trace by_mtime = pair(1000.0, 1010.0, std::nullopt);
  const auto& info = by_mtime.header().imported();
  CHECK(info.window_known());
  CHECK(info.window_from() == "the dump files' modification times");
  CHECK(by_mtime.snapshots(1).wall_ns() - by_mtime.snapshots(0).wall_ns() == 10'000'000'000);
  CHECK(by_mtime.header().options().warmup_seconds() * 1e9 == Approx(by_mtime.snapshots(0).wall_ns()));
  // testdata/tfdata/README.md: 200 minibatches in the 10 s between them.
  auto analysed = analysis::AnalyzeTrace(by_mtime, {}, "pair");
  REQUIRE(analysed.ok());
  REQUIRE(analysed->observed_throughput);
  CHECK(*analysed->observed_throughput == Approx(20.0));

  // Under a second apart (a checkout, a copy): unknown, and the note says why.
  const schema::Trace close = pair(1000.0, 1000.5, std::nullopt);
  CHECK_FALSE(close.header().imported().window_known());
  CHECK(noted(close, "--window"));
  // Backwards: unknown as well.
  CHECK_FALSE(pair(1010.0, 1000.0, std::nullopt).header().imported().window_known());
  auto unknown = analysis::AnalyzeTrace(close, {}, "pair");
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->observed_throughput);
  CHECK(unknown->minibatches == 200);

  // --window wins over the files' times.
  const schema::Trace by_flag = pair(1000.0, 1010.0, 20.0);
  CHECK(by_flag.snapshots(1).wall_ns() - by_flag.snapshots(0).wall_ns() == 20'000'000'000);
  CHECK(by_flag.header().imported().window_from().rfind("--window", 0) == 0);

  // One dump and --window: its counters cover that long since the start.
  auto one = ImportDumps({Input("run_a.pb")}, ImportOptions{30.0});
  REQUIRE(one.ok());
  CHECK(one->snapshots(0).wall_ns() == 30'000'000'000);
  CHECK(one->header().options().warmup_seconds() == 0);
  CHECK(one->header().imported().window_known());

  // Three dumps with only --window: evenly spaced, and said so.
  auto three = ImportDumps({Input("run_a.pb"), Input("run_b.pb"), Input("run_b.pb")}, ImportOptions{20.0});
  REQUIRE(three.ok());
  CHECK(three->snapshots(1).wall_ns() - three->snapshots(0).wall_ns() == 10'000'000'000);
  CHECK(noted(*three, "evenly spaced"));
}

TEST_CASE("dumps of different forms are not one run", "[tf_model]") {
  auto trace = ImportDumps({Input("nested_tf26.pb"), Input("map_tf27.pb")}, {});
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().message().find("map_tf27.pb") != std::string::npos);
  auto other = ImportDumps({Input("run_a.pb"), Input("map_tf27.pb")}, {});
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("not of one pipeline") != std::string::npos);
}

TEST_CASE("detection claims model dumps only", "[tf_model]") {
  CHECK_FALSE(LooksLikeTfModel(""));
  CHECK_FALSE(LooksLikeTfModel("{\"header\": {}}"));
  CHECK_FALSE(LooksLikeTfModel("hello world\n"));
  CHECK_FALSE(LooksLikeTfModel(std::string("PLMTRACE\x01\0\0\0", 12)));
  // plumber's own binary trace and binary pipeline.
  schema::Trace trace;
  trace.mutable_header()->mutable_program()->set_name("p");
  auto* n = trace.mutable_header()->mutable_program()->add_nodes();
  n->set_name("src");
  n->set_op("range");
  trace.add_snapshots()->set_wall_ns(1);
  CHECK_FALSE(LooksLikeTfModel(SerializeTraceBinary(trace)));
  std::string pipeline;
  REQUIRE(trace.header().program().SerializeToString(&pipeline));
  CHECK_FALSE(LooksLikeTfModel(pipeline));
  for (const auto& example : {"cpu.json", "image.json"}) {
    const std::string json = Slurp(std::string(PLUMBER_SOURCE_DIR) + "/examples/" + example);
    CHECK_FALSE(LooksLikeTfModel(json));
    auto parsed = ParsePipeline(json, example);
    REQUIRE(parsed.ok());
    std::string bin;
    REQUIRE(parsed->SerializeToString(&bin));
    CHECK_FALSE(LooksLikeTfModel(bin));
    CHECK(DetectImportFormat(bin) == ImportFormat::kNone);
  }
  CHECK(DetectImportFormat(Slurp(Fixture("map_tf27.pb"))) == ImportFormat::kTfModel);
  // A map-form node without a name is not claimed.
  tfmodel::ModelProto m;
  auto* e = m.add_nodes();
  e->set_key(1);
  e->mutable_value()->set_id(1);
  std::string unnamed;
  REQUIRE(m.SerializeToString(&unnamed));
  CHECK_FALSE(LooksLikeTfModel(unnamed));
}

TEST_CASE("bad dumps name the file and the place", "[tf_model]") {
  struct Case {
    const char* file;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"node_class.pbtxt", {"node id 2 (Prefetch)", "node_class", "9"}},
      {"node_class.pb", {"node id 2 (Prefetch)", "node_class", "9"}},  // the same, encoded by protoc
      {"missing_output.pbtxt", {"output", "id 7 is not a node"}},
      {"cycle.pbtxt", {"cycle"}},
      {"repeated_id.pbtxt", {"node id 2", "appears twice"}},
      {"huge_count.pbtxt", {"node id 2 (Prefetch)", "num_elements", "out of range"}},
      {"huge_id.pbtxt", {"node id 1152921504606846976", "out of range"}},
      {"negative_time.pbtxt", {"node id 2 (Prefetch)", "processing_time", "negative time"}},
      {"unknown_input.pbtxt", {"node id 1 (Root)", "inputs[1]", "42"}},
      {"algorithm.pbtxt", {"optimization_params", "algorithm", "7"}},
      {"parallelism.pbtxt", {"node id 2 (ParallelMapV2)", "parallelism", "out of range"}},
      {"enum_name.pbtxt", {"line 3", "SOMETIMES_ASYNC"}},
      {"nested_repeated_id.pbtxt", {"node id 1", "appears twice"}},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    const std::string path = Fixture(std::string("bad/") + c.file);
    const std::string bytes = Slurp(path);
    CHECK(LooksLikeTfModel(bytes));
    auto trace = ImportDumps({{path, bytes, std::nullopt}}, {});
    REQUIRE_FALSE(trace.ok());
    const std::string& msg = trace.status().message();
    INFO(msg);
    CHECK(trace.status().code() == Status::Code::kInvalidArgument);
    CHECK(msg.find(path) != std::string::npos);
    for (const auto& part : c.parts) CHECK(msg.find(part) != std::string::npos);
  }
}

TEST_CASE("bad binary dumps are refused with the place, never trusted", "[tf_model]") {
  auto good = [] {
    tfmodel::ModelProto m;
    auto* root = m.add_nodes();
    root->set_key(1);
    root->mutable_value()->set_id(1);
    root->mutable_value()->set_name("Root");
    root->mutable_value()->add_inputs(2);
    root->mutable_value()->set_num_elements(10);
    auto* map = m.add_nodes();
    map->set_key(2);
    map->mutable_value()->set_id(2);
    map->mutable_value()->set_name("ParallelMapV2");
    map->mutable_value()->set_num_elements(10);
    m.set_output(1);
    return m;
  };
  auto bytes = [](const tfmodel::ModelProto& m) {
    std::string s;
    REQUIRE(m.SerializeToString(&s));
    return s;
  };
  REQUIRE(ImportTfModel({{"ok.pb", bytes(good()), std::nullopt}}, {}).ok());

  auto m = good();
  m.mutable_nodes(1)->mutable_value()->set_node_class(static_cast<tfmodel::NodeClass>(9));
  CHECK(ImportError("a.pb", bytes(m)).message().find("a.pb: node id 2 (ParallelMapV2): field 'node_class' is 9") !=
        std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_num_elements(-1);
  CHECK(ImportError("b.pb", bytes(m)).message().find("num_elements") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_bytes_produced(int64_t{1} << 62);
  CHECK(ImportError("c.pb", bytes(m)).message().find("bytes_produced") != std::string::npos);
  m = good();
  m.set_output(3);
  CHECK(ImportError("d.pb", bytes(m)).message().find("output") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->add_inputs(1);  // back to the root
  CHECK(ImportError("e.pb", bytes(m)).message().find("cycle") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->add_inputs(2);  // itself
  CHECK(ImportError("f.pb", bytes(m)).message().find("own input") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->set_key(7);
  CHECK(ImportError("g.pb", bytes(m)).message().find("key 7") != std::string::npos);
  m = good();
  *m.add_nodes() = m.nodes(1);
  CHECK(ImportError("h.pb", bytes(m)).message().find("appears twice") != std::string::npos);
  m = good();
  m.mutable_optimization_params()->set_algorithm(static_cast<tfmodel::ModelProto::AutotuneAlgorithm>(-1));
  CHECK(ImportError("i.pb", bytes(m)).message().find("algorithm") != std::string::npos);
  m = good();
  m.mutable_optimization_params()->set_cpu_budget(-4);
  CHECK(ImportError("j.pb", bytes(m)).message().find("cpu_budget") != std::string::npos);
  m = good();
  m.add_gap_times(~uint64_t{0});
  CHECK(ImportError("k.pb", bytes(m)).message().find("gap_times[0]") != std::string::npos);
  m = good();
  auto* p = m.mutable_nodes(1)->mutable_value()->add_parameters();
  p->set_name("parallelism");
  p->set_state_value(1e300);
  CHECK(ImportError("l.pb", bytes(m)).message().find("parallelism") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_processing_time(-1);
  CHECK(ImportError("m.pb", bytes(m)).message().find("negative time") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_processing_time(INT64_MAX);
  CHECK(ImportError("n.pb", bytes(m)).message().find("out of range (0 to 2^60)") != std::string::npos);
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_name("Map\x01");
  CHECK(ImportError("o.pb", bytes(m)).message().find("not printable ASCII") != std::string::npos);
  // Copies of a function whose counters sum past int64 are refused, not wrapped.
  m = good();
  m.mutable_nodes(1)->mutable_value()->set_name("FlatMap");
  for (int64_t id = 3; id < 40; ++id) {
    m.mutable_nodes(1)->mutable_value()->add_inputs(id);
    auto* e = m.add_nodes();
    e->set_key(id);
    e->mutable_value()->set_id(id);
    e->mutable_value()->set_name("TFRecord");
    e->mutable_value()->set_processing_time(int64_t{1} << 60);
  }
  CHECK(ImportError("p.pb", bytes(m)).message().find("pass 2^63") != std::string::npos);
  // Many entries holding empty nodes: more than a file that size can hold.
  std::string crafted;
  for (int i = 0; i < 500; ++i) crafted += std::string("\x0a\x02\x12\x00", 4);
  CHECK(ImportError("q.pb", crafted).message().find("too many for a file of 2000 bytes") != std::string::npos);
  // Truncated at every byte: an error or a smaller model, never a crash.
  const std::string whole = bytes(good());
  for (size_t n = 0; n < whole.size(); ++n) (void)ImportTfModel({{"t.pb", whole.substr(0, n), std::nullopt}}, {});
}

namespace {

// A map-form dump from (id, type, num_elements, inputs) rows; the output is
// the first row.
struct Row {
  int64_t id;
  const char* type;
  int64_t elements;
  std::vector<int64_t> inputs;
};

std::string MapDump(const std::vector<Row>& rows) {
  tfmodel::ModelProto m;
  for (const auto& r : rows) {
    auto* e = m.add_nodes();
    e->set_key(r.id);
    e->mutable_value()->set_id(r.id);
    e->mutable_value()->set_name(r.type);
    e->mutable_value()->set_num_elements(r.elements);
    e->mutable_value()->set_processing_time(r.elements * 1000);
    for (int64_t in : r.inputs) e->mutable_value()->add_inputs(in);
  }
  m.set_output(rows.front().id);
  std::string s;
  REQUIRE(m.SerializeToString(&s));
  return s;
}

}  // namespace

TEST_CASE("FlatMap is an interleave of one, an interleave with nothing open gets a stand-in function",
          "[tf_model]") {
  auto flat = ImportTfModel({{"f.pb", MapDump({{1, "Root", 10, {2}}, {2, "FlatMap", 10, {3, 4}},
                                               {3, "TensorSlice", 1, {}}, {4, "TextLine", 10, {}}}),
                              std::nullopt}},
                            {});
  REQUIRE(flat.ok());
  const auto& fm = ProgramNode(*flat, "FlatMap.2");
  CHECK(fm.op() == "interleave");
  CHECK(fm.interleave().cycle_length() == 1);
  CHECK(fm.interleave().function() == "TextLine.4");

  auto closed = ImportTfModel(
      {{"g.pb", MapDump({{1, "Root", 10, {2}}, {2, "Interleave", 10, {3}}, {3, "TensorSlice", 2, {}}}), std::nullopt}},
      {});
  REQUIRE(closed.ok());
  const auto& il = ProgramNode(*closed, "Interleave.2");
  CHECK(il.interleave().function() == "Interleave.2.function");
  CHECK(ProgramNode(*closed, "Interleave.2.function").op() == "opaque");
  CHECK(HasNote(*closed, "no input open in any dump"));
  CHECK(ProgramGraph::Build(closed->header().program(), "g").ok());
}

TEST_CASE("across dumps a function's copies change ids but keep their place", "[tf_model]") {
  // First dump: files 10 and 11 open; second: 11 finished (TensorFlow
  // dropped it) and 12 opened. One program; the function's counters sum
  // the copies open at each dump, and go down when a long one finished.
  const std::string a = MapDump({{1, "Root", 10, {2}}, {2, "ParallelInterleaveV4", 10, {3, 10, 11}},
                                 {3, "TensorSlice", 2, {}}, {10, "TFRecord", 4, {}}, {11, "TFRecord", 6, {}}});
  const std::string b = MapDump({{1, "Root", 30, {2}}, {2, "ParallelInterleaveV4", 30, {3, 10, 12}},
                                 {3, "TensorSlice", 3, {}}, {10, "TFRecord", 5, {}}, {12, "TFRecord", 1, {}}});
  ImportOptions options;
  options.window_seconds = 2.0;
  auto t = ImportTfModel({{"a.pb", a, std::nullopt}, {"b.pb", b, std::nullopt}}, options);
  REQUIRE(t.ok());
  CHECK(t->header().program().nodes_size() == 4);
  CHECK(Stats(*t, 0, "TFRecord.10").elements_produced() == 10);
  CHECK(Stats(*t, 1, "TFRecord.10").elements_produced() == 6);
  CHECK(HasNote(*t, "TFRecord.10: counters go down from a.pb to b.pb"));
  CHECK(ProgramNode(*t, "ParallelInterleaveV4.2").interleave().cycle_length() == 2);  // most open at once
  CHECK(HasNote(*t, "no cycle_length; taken as 2"));
  // A node only one dump has is zero in the other.
  const std::string c = MapDump({{1, "Root", 40, {2}}, {2, "ParallelInterleaveV4", 40, {3}}, {3, "TensorSlice", 4, {}}});
  auto u = ImportTfModel({{"a.pb", a, std::nullopt}, {"c.pb", c, std::nullopt}}, options);
  REQUIRE(u.ok());
  CHECK(Stats(*u, 1, "TFRecord.10").elements_produced() == 0);
}

TEST_CASE("a known type with inputs its op does not take stays opaque", "[tf_model]") {
  auto t = ImportTfModel({{"m.pb", MapDump({{1, "Map", 10, {2, 3}}, {2, "Range", 10, {}}, {3, "Range", 10, {}}}),
                           std::nullopt}},
                         {});
  REQUIRE(t.ok());
  CHECK(ProgramNode(*t, "Map.1").op() == "opaque");
  CHECK(ProgramNode(*t, "Map.1").imported_type() == "Map");
  CHECK(HasNote(*t, "kept as an opaque node"));
}

TEST_CASE("a deep chain imports in linear time", "[tf_model]") {
  // Keys stay short whatever the depth; 20000 nested maps would take
  // gigabytes if each node's key spelled its whole path.
  std::vector<Row> rows;
  for (int64_t id = 1; id <= 20000; ++id) {
    rows.push_back({id, "Map", 5, id < 20000 ? std::vector<int64_t>{id + 1} : std::vector<int64_t>{}});
  }
  rows.back().type = "Range";
  auto t = ImportTfModel({{"deep.pb", MapDump(rows), std::nullopt}}, {});
  REQUIRE(t.ok());
  CHECK(t->header().program().nodes_size() == 20000);
  CHECK(t->header().program().output() == "Map.1");
}
