// Pipeline files: JSON and binary round trips, detection by content.
#include <catch2/catch.hpp>

#include <google/protobuf/util/message_differencer.h>

#include "pipeline/validate.h"
#include "sample.h"
#include "traceio/trace_io.h"

using namespace plumber;
using google::protobuf::util::MessageDifferencer;

TEST_CASE("every testdata pipeline round trips json -> pb -> json", "[pipeline_io]") {
  for (const char* name : {"pipelines/image.json", "pipelines/text.json", "pipelines/cpu.json"}) {
    INFO(name);
    schema::Pipeline original = testing::LoadTestPipeline(name);
    const std::string json = SerializePipeline(original, Encoding::kJson);
    const std::string binary = SerializePipeline(original, Encoding::kBinary);
    REQUIRE(DetectEncoding(binary) == Encoding::kBinary);
    auto from_binary = ParsePipeline(binary, "mem.pb");
    REQUIRE(from_binary.ok());
    CHECK(MessageDifferencer::Equals(original, *from_binary));
    CHECK(SerializePipeline(*from_binary, Encoding::kJson) == json);
    auto from_json = ParsePipeline(json, "mem.json");
    REQUIRE(from_json.ok());
    CHECK(SerializePipeline(*from_json, Encoding::kBinary) == binary);
  }
}

TEST_CASE("JSON syntax errors give line and column", "[pipeline_io]") {
  auto r = ParsePipeline("{\n  \"name\": \"x\",\n  \"nodes\": [ }\n", "bad.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().rfind("bad.json:3:", 0) == 0);
}

TEST_CASE("JSON nested deeper than any schema is refused at once, with its place", "[pipeline_io]") {
  // 100,000 nested lists in a UDF argument kept protobuf's JSON parser busy
  // for over ten minutes (it is quadratic in the depth).
  const int depth = 100000;
  const std::string json = R"({"nodes": [{"name": "m", "op": "map", "map": {"udf": [{"op": "add", "args": {"value": )" +
                           std::string(depth, '[') + std::string(depth, ']') + "}}]}}]}";
  auto r = ParsePipeline(json, "deep.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsBadInput());
  CHECK_THAT(r.status().message(), Catch::StartsWith("deep.json:1:") && Catch::Contains("more than 64 levels"));
  // Brackets inside strings are text, not nesting.
  const std::string in_string = R"({"name": ")" + std::string(1000, '[') + R"(", "nodes": []})";
  CHECK(ParsePipeline(in_string, "s.json").ok());
  // Traces go through the same parser.
  auto t = ParseTrace(R"({"header": {"program": )" + json + "}}", "deep-trace.json");
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.status().message(), Catch::StartsWith("deep-trace.json:1:") && Catch::Contains("more than 64 levels"));
}

TEST_CASE("unknown JSON fields are rejected, naming the field", "[pipeline_io]") {
  auto r = ParsePipeline(R"({"nodes": [{"name": "a", "op": "range", "range": {"stopp": 3}}]})", "typo.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("typo.json") != std::string::npos);
  CHECK(r.status().message().find("stopp") != std::string::npos);
}

TEST_CASE("binary garbage is rejected, not misread", "[pipeline_io]") {
  auto r = ParsePipeline(std::string("\xff\xff\xff\xff\x0f", 5), "junk.pb");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("junk.pb") != std::string::npos);
  CHECK_FALSE(ParsePipeline("", "empty.pb").ok());
}

TEST_CASE("the output node is the one nothing consumes", "[pipeline_io]") {
  CHECK(OutputNodeName(testing::LoadTestPipeline("pipelines/image.json")) == "prefetch");
  CHECK(OutputNodeName(testing::LoadTestPipeline("pipelines/cpu.json")) == "batch");
}

TEST_CASE("unknown binary fields are dropped so JSON and binary agree (fuzz finding)", "[pipeline_io]") {
  const std::string binary = SerializePipeline(testing::LoadTestPipeline("pipelines/cpu.json"), Encoding::kBinary);
  // Field 99 (varint 1), which no version of the schema has.
  const std::string with_unknown = binary + std::string("\x98\x06\x01", 3);
  auto parsed = ParsePipeline(with_unknown, "future.pb");
  REQUIRE(parsed.ok());
  CHECK(SerializePipeline(*parsed, Encoding::kBinary) == binary);
  const std::string json = SerializePipeline(*parsed, Encoding::kJson);
  auto again = ParsePipeline(json, "future.json");
  REQUIRE(again.ok());
  CHECK(SerializePipeline(*again, Encoding::kJson) == json);
}
