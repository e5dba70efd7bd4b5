// TFRecord framing as the runtime reads it (CRC32C vectors, corruption and
// truncation errors naming file and offset), and tf.train.Example decoding
// of hand-encoded bytes, packed and unpacked.
#include "base/crc32c.h"
#include "harness.h"
#include "runtime/example.h"
#include "runtime/udf.h"
#include "traceio/record_io.h"

namespace plumber::runtime::testing {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST_CASE("CRC32C matches the RFC 3720 vectors TFRecord relies on", "[formats]") {
  CHECK(crc32c::Value("123456789") == 0xE3069283u);
  CHECK(crc32c::Value(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(crc32c::Value(std::string(32, '\xff')) == 0x62A8AB43u);
  CHECK(crc32c::Unmask(crc32c::Mask(0x12345678u)) == 0x12345678u);
  // The frame of "abc": length 3 little-endian, masked CRCs around it.
  const std::string f = FrameRecord("abc");
  REQUIRE(f.size() == 12 + 3 + 4);
  CHECK(f.substr(0, 8) == Bytes({3, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(f.substr(12, 3) == "abc");
}

std::string Records(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += FrameRecord("record-" + std::to_string(i));
  return out;
}

TEST_CASE("a corrupted TFRecord fails with the file, record and offset", "[formats]") {
  TempDir dir;
  std::string data = Records(3);
  const size_t second = FrameRecord("record-0").size();
  data[second + 12 + 2] ^= 0x40;  // a payload byte of record 1
  WriteText(dir.File("bad.tfrecord"), data);
  Harness h(Chain({R"({"name":"src","op":"tfrecord","tfrecord":{"files":[")" + dir.File("bad.tfrecord") + R"("]}})"}));
  std::vector<Element> out;
  Status s = h.Collect(&out);
  CHECK(out.size() == 1);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("node 'src'") && Catch::Contains(dir.File("bad.tfrecord")) &&
                              Catch::Contains("record 1") && Catch::Contains("offset " + std::to_string(second)));
}

TEST_CASE("a truncated TFRecord fails naming where the cut record starts", "[formats]") {
  TempDir dir;
  std::string data = Records(3);
  const size_t third = 2 * FrameRecord("record-0").size();
  WriteText(dir.File("cut.tfrecord"), data.substr(0, data.size() - 5));
  Harness h(Chain({R"({"name":"src","op":"tfrecord","tfrecord":{"files":[")" + dir.File("cut.tfrecord") + R"("]}})"}));
  std::vector<Element> out;
  Status s = h.Collect(&out);
  CHECK(out.size() == 2);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("cut.tfrecord") && Catch::Contains("offset " + std::to_string(third)));
  // A file with an error is not counted as completed.
  CHECK(h.Stats("src").files_completed() == 0);
}

TEST_CASE("a missing TFRecord file fails naming the node and the file", "[formats]") {
  Harness h(Chain({R"({"name":"src","op":"tfrecord","tfrecord":{"files":["/nonexistent/x.tfrecord"]}})"}));
  std::vector<Element> out;
  Status s = h.Collect(&out);
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK_THAT(s.message(), Catch::Contains("node 'src'") && Catch::Contains("/nonexistent/x.tfrecord"));
}

// Example { features { feature { key: "x" value { int64_list { 1, 300 } } } } }
// built byte by byte; `packed` picks the list encoding.
std::string HandInt64Example(bool packed) {
  const std::string list = packed ? Bytes({0x0A, 0x03, 0x01, 0xAC, 0x02}) : Bytes({0x08, 0x01, 0x08, 0xAC, 0x02});
  const std::string feature = Bytes({0x1A, 0x05}) + list;
  const std::string entry = Bytes({0x0A, 0x01, 'x', 0x12, 0x07}) + feature;
  const std::string features = Bytes({0x0A, 0x0C}) + entry;
  return Bytes({0x0A, 0x0E}) + features;
}

TEST_CASE("DecodeExample reads hand-encoded packed and unpacked int64 lists", "[formats][example]") {
  for (bool packed : {true, false}) {
    auto f = DecodeExample(HandInt64Example(packed));
    REQUIRE(f.ok());
    REQUIRE(f->count("x") == 1);
    CHECK(std::get<std::vector<int64_t>>(f->at("x")) == std::vector<int64_t>{1, 300});
  }
}

TEST_CASE("DecodeExample reads hand-encoded floats and bytes", "[formats][example]") {
  // float_list { 1.5 } packed and unpacked; bytes_list { "abc" }.
  const std::string packed_floats = Bytes({0x12, 0x06, 0x0A, 0x04, 0x00, 0x00, 0xC0, 0x3F});
  const std::string unpacked_floats = Bytes({0x12, 0x05, 0x0D, 0x00, 0x00, 0xC0, 0x3F});
  const std::string bytes_feature = Bytes({0x0A, 0x05, 0x0A, 0x03, 'a', 'b', 'c'});
  for (const auto& floats : {packed_floats, unpacked_floats}) {
    const std::string e1 = Bytes({0x0A, 0x01, 'f', 0x12, static_cast<int>(floats.size())}) + floats;
    const std::string e2 = Bytes({0x0A, 0x01, 'b', 0x12, static_cast<int>(bytes_feature.size())}) + bytes_feature;
    const std::string features = Bytes({0x0A, static_cast<int>(e1.size())}) + e1 + Bytes({0x0A, static_cast<int>(e2.size())}) + e2;
    const std::string example = Bytes({0x0A, static_cast<int>(features.size())}) + features;
    auto f = DecodeExample(example);
    REQUIRE(f.ok());
    CHECK(std::get<std::vector<float>>(f->at("f")) == std::vector<float>{1.5f});
    CHECK(std::get<std::vector<std::string>>(f->at("b")) == std::vector<std::string>{"abc"});
  }
}

TEST_CASE("EncodeExample round-trips, negative numbers included, both encodings", "[formats][example]") {
  Features in;
  in["ints"] = std::vector<int64_t>{-1, 0, 1LL << 40};
  in["floats"] = std::vector<float>{-2.5f, 3.25f};
  in["bytes"] = std::vector<std::string>{"", std::string("\0x", 2)};
  for (bool packed : {true, false}) {
    auto out = DecodeExample(EncodeExample(in, packed));
    REQUIRE(out.ok());
    CHECK(*out == in);
  }
  CHECK_FALSE(DecodeExample(HandInt64Example(true).substr(0, 9)).ok());
}

TEST_CASE("parse_example turns a serialized Example into tensors", "[formats][example]") {
  Features in;
  in["image/encoded"] = std::vector<std::string>{"jpegbytes"};
  in["label"] = std::vector<int64_t>{7};
  in["box"] = std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f};
  schema::UdfOp spec;
  spec.set_op("parse_example");
  auto* list = (*spec.mutable_args())["features"].mutable_list_value();
  for (const char* n : {"image/encoded", "label", "box"}) list->add_values()->set_string_value(n);
  auto op = MakeUdfOp(spec);
  REQUIRE(op.ok());
  for (bool packed : {true, false}) {
    Element e{Tensor::ScalarString(EncodeExample(in, packed))};
    REQUIRE((*op)->Apply(&e, {}).ok());
    REQUIRE(e.size() == 3);
    CHECK(e[0].strings()[0] == "jpegbytes");
    CHECK(e[1].dtype() == DType::kInt64);
    CHECK(e[1].shape().empty());
    CHECK(e[1].GetInt(0) == 7);
    CHECK(e[2].dtype() == DType::kFloat32);
    CHECK(e[2].shape() == std::vector<int64_t>{4});
    CHECK(e[2].GetDouble(2) == Approx(0.3));
  }
  list->add_values()->set_string_value("missing");
  auto strict = MakeUdfOp(spec);
  Element e{Tensor::ScalarString(EncodeExample(in))};
  Status s = (*strict)->Apply(&e, {});
  CHECK_THAT(s.message(), Catch::Contains("missing"));
}

TEST_CASE("elements survive the cache encoding", "[formats]") {
  Element e{Tensor::Scalar(-5), Tensor::StringVector({"a", "", "ccc"}),
            Tensor::FromVector(DType::kFloat32, std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})};
  Element back;
  REQUIRE(ParseElement(SerializeElement(e), &back).ok());
  CHECK(back == e);
  CHECK_FALSE(ParseElement(SerializeElement(e).substr(3), &back).ok());
}

}  // namespace
}  // namespace plumber::runtime::testing
