// Trace files: writer, streaming and whole reads, JSON <-> binary round
// trips, torn tails at every byte, corruption by record, order checks.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <utility>
#include <vector>
#include <google/protobuf/util/message_differencer.h>

#include "sample.h"
#include "traceio/trace_check.h"
#include "traceio/trace_io.h"

using namespace plumber;
using google::protobuf::util::MessageDifferencer;
namespace fs = std::filesystem;

namespace {

std::string TempPath(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("plumber_trace_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// A field number no version of the schema uses, as a newer writer's field.
void AddUnknownField(google::protobuf::Message* m) {
  m->GetReflection()->MutableUnknownFields(m)->AddVarint(999, 1);
}

}  // namespace

TEST_CASE("trace pb -> json -> pb is byte-identical", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace();
  const std::string binary = SerializeTraceBinary(trace);
  auto parsed = ParseTrace(binary, "t.pb");
  REQUIRE(parsed.ok());
  CHECK(MessageDifferencer::Equals(trace, *parsed));
  const std::string json = MessageToJson(*parsed);
  TraceReadReport report;
  auto from_json = ParseTrace(json, "t.json", &report);
  REQUIRE(from_json.ok());
  CHECK(report.encoding == Encoding::kJson);
  CHECK(SerializeTraceBinary(*from_json) == binary);
}

TEST_CASE("the writer's file reads back record by record", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace(3);
  const std::string path = TempPath("written.pb");
  {
    auto writer = TraceWriter::Create(Env::Default(), path, trace.header());
    REQUIRE(writer.ok());
    for (const auto& s : trace.snapshots()) REQUIRE((*writer)->Append(s).ok());
    REQUIRE((*writer)->Finish(trace.end()).ok());
  }
  CHECK(*ReadFileToString(Env::Default(), path) == SerializeTraceBinary(trace));
  auto reader = TraceFileReader::Open(Env::Default(), path);
  REQUIRE(reader.ok());
  schema::TraceRecord record;
  std::vector<schema::TraceRecord::KindCase> kinds;
  while ((*reader)->Next(&record)) kinds.push_back(record.kind_case());
  CHECK((*reader)->status().ok());
  CHECK_FALSE((*reader)->report().torn);
  using K = schema::TraceRecord::KindCase;
  CHECK(kinds == std::vector<K>{K::kHeader, K::kSnapshot, K::kSnapshot, K::kSnapshot, K::kEnd});
}

TEST_CASE("a trace cut at every byte returns exactly the complete records", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace(3);
  const std::string bytes = SerializeTraceBinary(trace);
  // Record boundaries: preamble, then each framed record.
  std::vector<size_t> ends;
  {
    schema::Trace partial;
    *partial.mutable_header() = trace.header();
    ends.push_back(SerializeTraceBinary(partial).size());
    for (const auto& s : trace.snapshots()) {
      *partial.add_snapshots() = s;
      ends.push_back(SerializeTraceBinary(partial).size());
    }
    ends.push_back(bytes.size());
  }
  for (size_t cut = 1; cut <= bytes.size(); ++cut) {
    TraceReadReport report;
    auto t = ParseTrace(std::string_view(bytes).substr(0, cut), "cut.pb", &report);
    INFO("cut at " << cut);
    REQUIRE(t.ok());
    size_t complete = 0;
    while (complete < ends.size() && ends[complete] <= cut) ++complete;
    CHECK(report.records == complete);
    CHECK(t->has_header() == (complete >= 1));
    const int snaps = static_cast<int>(std::min<size_t>(complete > 0 ? complete - 1 : 0, 3));
    REQUIRE(t->snapshots_size() == snaps);
    for (int i = 0; i < snaps; ++i) CHECK(MessageDifferencer::Equals(t->snapshots(i), trace.snapshots(i)));
    CHECK(t->has_end() == (cut == bytes.size()));
    const bool boundary = cut == kTracePreambleBytes || std::find(ends.begin(), ends.end(), cut) != ends.end();
    CHECK(report.torn == !boundary);
    if (report.torn) CHECK_THAT(report.warning, Catch::Contains("cut.pb") && Catch::Contains("offset"));
  }
}

TEST_CASE("a corrupt snapshot is an error naming the record and offset", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace(3);
  std::string bytes = SerializeTraceBinary(trace);
  schema::Trace partial;
  *partial.mutable_header() = trace.header();
  const size_t second_record = SerializeTraceBinary(partial).size();
  bytes[second_record + kRecordHeaderBytes + 3] ^= 0x10;
  auto t = ParseTrace(bytes, "bad.pb");
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Status::Code::kCorruption);
  CHECK_THAT(t.status().message(), Catch::Contains("bad.pb: record 1 at offset " + std::to_string(second_record)));
}

TEST_CASE("records out of order are corruption", "[trace_io]") {
  schema::TraceRecord snap;
  snap.mutable_snapshot()->set_wall_ns(1);
  std::string payload;
  snap.SerializeToString(&payload);
  std::string bytes(kTraceMagic, 8);
  bytes += std::string("\x01\x00\x00\x00", 4);
  bytes += FrameRecord(payload);
  auto t = ParseTrace(bytes, "nohead.pb");
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.status().message(), Catch::Contains("must start with its header"));
}

TEST_CASE("foreign files and future versions are refused clearly", "[trace_io]") {
  auto t = ParseTrace("PLMTRACX\x01\x00\x00\x00", "x.pb");
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.status().message(), Catch::Contains("not a plumber trace"));
  auto v = ParseTrace(std::string("PLMTRACE\x07\x00\x00\x00", 12), "v.pb");
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(v.status().message(), Catch::Contains("version 7"));
  CHECK_FALSE(ParseTrace(R"({"snapshots": []})", "nohead.json").ok());
}

TEST_CASE("trace validation finds counters going backwards and unknown nodes", "[trace_check]") {
  schema::Trace trace = testing::SampleTrace(3);
  CHECK(ValidateTrace(trace).empty());
  trace.mutable_snapshots(2)->mutable_nodes(1)->set_elements_produced(5);
  trace.mutable_snapshots(1)->add_nodes()->set_name("ghost");
  trace.mutable_snapshots(2)->set_wall_ns(1);
  auto problems = ValidateTrace(trace);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].node == "ghost");
  CHECK(problems[0].field == "snapshots[1].nodes[3].name");
  CHECK(problems[1].field == "snapshots[2].wall_ns");
  CHECK(problems[2].node == "burn");
  CHECK(problems[2].field == "snapshots[2].nodes[1].elements_produced");
  CHECK_THAT(problems[2].message, Catch::Contains("goes backwards (1920 -> 5)"));
}

TEST_CASE("WriteTrace in either encoding reads back equal", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace(2);
  for (Encoding e : {Encoding::kJson, Encoding::kBinary}) {
    const std::string path = TempPath(e == Encoding::kJson ? "w.json" : "w.pb");
    REQUIRE(WriteTrace(Env::Default(), path, trace, e).ok());
    auto back = ReadTrace(Env::Default(), path);
    REQUIRE(back.ok());
    CHECK(MessageDifferencer::Equals(trace, *back));
  }
}

TEST_CASE("a trace writer over an existing file replaces it only once published", "[trace_io]") {
  const schema::Trace trace = testing::SampleTrace(2);
  const std::string path = TempPath("kept.pb");
  REQUIRE(WriteFileAtomically(Env::Default(), path, "a trace kept from before").ok());
  {
    auto writer = TraceWriter::Create(Env::Default(), path, trace.header());
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(trace.snapshots(0)).ok());
    REQUIRE((*writer)->Finish(trace.end()).ok());
    CHECK_FALSE((*writer)->published());
  }
  CHECK(*ReadFileToString(Env::Default(), path) == "a trace kept from before");
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    CHECK(e.path().filename().string().rfind("kept.pb.tmp", 0) == std::string::npos);
  }
  {
    auto writer = TraceWriter::Create(Env::Default(), path, trace.header());
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(trace.snapshots(0)).ok());
    REQUIRE((*writer)->Publish().ok());
    REQUIRE((*writer)->Append(trace.snapshots(1)).ok());
    REQUIRE((*writer)->Finish(trace.end()).ok());
  }
  CHECK(*ReadFileToString(Env::Default(), path) == SerializeTraceBinary(trace));
}

TEST_CASE("a trace cut right after its magic is torn at offset 8", "[trace_io]") {
  const std::string path = TempPath("magic_only.pb");
  const std::string bytes = SerializeTraceBinary(testing::SampleTrace(1));
  REQUIRE(WriteFileAtomically(Env::Default(), path, bytes.substr(0, 8)).ok());
  auto reader = TraceFileReader::Open(Env::Default(), path);
  REQUIRE(reader.ok());
  schema::TraceRecord record;
  CHECK_FALSE((*reader)->Next(&record));
  CHECK((*reader)->report().torn);
  CHECK((*reader)->report().torn_offset == 8);
  CHECK_THAT((*reader)->report().warning, Catch::Contains("offset 8"));
}

// A field this version does not know, at any depth of any record, is
// dropped on reading: the snapshot path skips the reflection walk only for
// records none of whose messages holds one.
TEST_CASE("fields a newer writer added are dropped on reading, at every depth", "[trace_io]") {
  schema::Trace trace = testing::SampleTrace(1);
  REQUIRE(trace.snapshots_size() == 1);
  REQUIRE(trace.snapshots(0).nodes_size() > 1);
  using Adder = std::function<void(schema::Trace&)>;
  const std::vector<std::pair<std::string, Adder>> places = {
      {"the header", [](schema::Trace& t) { AddUnknownField(t.mutable_header()); }},
      {"a snapshot", [](schema::Trace& t) { AddUnknownField(t.mutable_snapshots(0)); }},
      {"the last node of a snapshot",
       [](schema::Trace& t) {
         auto* nodes = t.mutable_snapshots(0)->mutable_nodes();
         AddUnknownField(nodes->Mutable(nodes->size() - 1));
       }},
      {"a snapshot's root", [](schema::Trace& t) { AddUnknownField(t.mutable_snapshots(0)->mutable_root()); }},
      {"a snapshot's DataLoader counters",
       [](schema::Trace& t) {
         AddUnknownField(t.mutable_snapshots(0)->mutable_dataloader());
       }},
      {"the end", [](schema::Trace& t) { AddUnknownField(t.mutable_end()); }},
  };
  for (const auto& [where, add] : places) {
    INFO(where);
    schema::Trace newer = trace;
    add(newer);
    schema::Trace known = newer;
    known.DiscardUnknownFields();
    const std::string path = TempPath("newer.pb");
    REQUIRE(WriteFileAtomically(Env::Default(), path, SerializeTraceBinary(newer)).ok());
    auto read = ReadTrace(Env::Default(), path);
    REQUIRE(read.ok());
    CHECK(SerializeTraceBinary(*read) == SerializeTraceBinary(known));
    CHECK(SerializeTraceBinary(*read) != SerializeTraceBinary(newer));
  }
}

// MayHoldUnknownFields checks a snapshot's messages by hand: the snapshot,
// its nodes, its root and its DataLoader counters. A message field added
// to any of them would escape that check; this fails first.
TEST_CASE("a snapshot's messages are the ones the unknown-field check looks at", "[trace_io]") {
  using google::protobuf::FieldDescriptor;
  auto message_fields = [](const google::protobuf::Descriptor* d) {
    std::vector<std::string> names;
    for (int i = 0; i < d->field_count(); ++i) {
      if (d->field(i)->type() == FieldDescriptor::TYPE_MESSAGE || d->field(i)->type() == FieldDescriptor::TYPE_GROUP) {
        names.push_back(d->field(i)->name());
      }
    }
    return names;
  };
  CHECK(message_fields(schema::Snapshot::descriptor()) == std::vector<std::string>{"nodes", "root", "dataloader"});
  CHECK(message_fields(schema::NodeStats::descriptor()).empty());
  CHECK(message_fields(schema::RootStats::descriptor()).empty());
  CHECK(message_fields(schema::DataLoaderCounters::descriptor()).empty());
}
