// Sizes that come from files or pipelines (shapes in a cache file, a JPEG
// header, a padded_shape, a resize target, a compressed stream, UDF
// arguments) never drive an unbounded allocation or an undefined cast:
// each becomes a clear error before anything is allocated.
#include <cmath>

#include "harness.h"
#include "runtime/compression.h"
#include "runtime/datagen.h"
#include "runtime/udf.h"

namespace plumber::runtime::testing {
namespace {

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

TEST_CASE("CheckTensorSize bounds the bytes and catches overflowing shapes", "[limits]") {
  CHECK(CheckTensorSize(DType::kUint8, {1024, 1024, 3}, "t").ok());
  CHECK(CheckTensorSize(DType::kFloat32, {0, int64_t{1} << 62, int64_t{1} << 62}, "t").ok());
  const Status big = CheckTensorSize(DType::kUint8, {65535, 65535, 3}, "decode_jpeg");
  CHECK(big.code() == Status::Code::kResourceExhausted);
  CHECK_THAT(big.message(), Catch::Contains("decode_jpeg") && Catch::Contains("[65535,65535,3]"));
  // 2^32 * 2^32 wraps to 0 in 64 bits; it must still be refused.
  CHECK(CheckTensorSize(DType::kUint8, {int64_t{1} << 32, int64_t{1} << 32}, "t").code() ==
        Status::Code::kResourceExhausted);
  CHECK(CheckTensorSize(DType::kInt64, {-1}, "t").code() == Status::Code::kInvalidArgument);
  // Exactly at the limit is allowed; one more element is not.
  CHECK(CheckTensorSize(DType::kUint8, {static_cast<int64_t>(kMaxTensorBytes)}, "t").ok());
  CHECK_FALSE(CheckTensorSize(DType::kUint8, {static_cast<int64_t>(kMaxTensorBytes) + 1}, "t").ok());
}

TEST_CASE("a cache element claiming a huge shape is refused, not allocated", "[limits]") {
  Element good{Tensor::FromVector(DType::kInt64, std::vector<int64_t>{1, 2, 3}, {3})};
  Element back;
  REQUIRE(ParseElement(SerializeElement(good), &back).ok());
  CHECK(back == good);

  // One float32 tensor of shape [2^40, 2^40] backed by 4 bytes: the old
  // parser multiplied the dims (overflow) and allocated before comparing.
  std::string bad;
  PutU64(&bad, 1);
  PutU64(&bad, static_cast<uint64_t>(DType::kFloat32));
  PutU64(&bad, 2);
  PutU64(&bad, uint64_t{1} << 40);
  PutU64(&bad, uint64_t{1} << 40);
  PutU64(&bad, 4);
  bad += "abcd";
  CHECK(ParseElement(bad, &back).code() == Status::Code::kCorruption);

  // A string tensor of 2^30 strings in a few bytes.
  std::string strings;
  PutU64(&strings, 1);
  PutU64(&strings, static_cast<uint64_t>(DType::kString));
  PutU64(&strings, 1);
  PutU64(&strings, uint64_t{1} << 30);
  PutU64(&strings, 0);
  CHECK(ParseElement(strings, &back).code() == Status::Code::kCorruption);
}

// Rewrites the size in a JPEG's start-of-frame marker.
std::string WithClaimedSize(std::string jpeg, int height, int width) {
  for (size_t i = 0; i + 8 < jpeg.size(); ++i) {
    const auto m = static_cast<unsigned char>(jpeg[i + 1]);
    if (static_cast<unsigned char>(jpeg[i]) == 0xFF && (m == 0xC0 || m == 0xC1 || m == 0xC2)) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xFF);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xFF);
      return jpeg;
    }
  }
  FAIL("no start-of-frame marker");
  return jpeg;
}

TEST_CASE("a JPEG whose header claims 60000x60000 pixels is refused before decoding", "[limits]") {
  auto jpeg = MakeJpeg(32, 16, 1, 0, 90);
  REQUIRE(jpeg.ok());
  schema::UdfOp spec;
  spec.set_op("decode_jpeg");
  auto op = MakeUdfOp(spec);
  REQUIRE(op.ok());
  Element e{Tensor::ScalarString(WithClaimedSize(*jpeg, 60000, 60000))};
  const Status s = (*op)->Apply(&e, {});
  CHECK(s.code() == Status::Code::kResourceExhausted);
  CHECK_THAT(s.message(), Catch::Contains("decode_jpeg") && Catch::Contains("[60000,60000,3]"));
}

TEST_CASE("decompression stops at its output ceiling", "[limits]") {
  const std::string zeros(4 << 20, '\0');
  for (Codec codec : {Codec::kGzip, Codec::kZlib, Codec::kZstd}) {
    auto packed = Compress(codec, zeros);
    REQUIRE(packed.ok());
    CHECK(packed->size() < 64 << 10);  // a small bomb: 4 MiB from a few KiB
    auto whole = Decompress(codec, *packed);
    REQUIRE(whole.ok());
    CHECK(whole->size() == zeros.size());
    auto capped = Decompress(codec, *packed, 1 << 20);
    CHECK(capped.status().code() == Status::Code::kResourceExhausted);
    CHECK_THAT(capped.status().message(), Catch::Contains("1 MiB"));
  }
}

TEST_CASE("UDF arguments cast to integers must be whole and in range", "[limits]") {
  auto build = [](const std::string& op, const char* key, double v) {
    schema::UdfOp spec;
    spec.set_op(op);
    (*spec.mutable_args())["height"].set_number_value(8);
    (*spec.mutable_args())["width"].set_number_value(8);
    (*spec.mutable_args())["micros"].set_number_value(1);
    (*spec.mutable_args())[key].set_number_value(v);
    return MakeUdfOp(spec).status();
  };
  CHECK(build("resize", "height", 64).ok());
  CHECK_THAT(build("resize", "height", 1e300).message(), Catch::Contains("'height'") && Catch::Contains("whole"));
  CHECK_FALSE(build("resize", "width", 2.5).ok());
  CHECK_FALSE(build("random_crop", "seed", -1).ok());
  CHECK_FALSE(build("random_crop", "seed", std::nan("")).ok());
  CHECK_FALSE(build("decode_jpeg", "component", 1e12).ok());
  CHECK_FALSE(build("tokenize", "vocab_size", 1e30).ok());
  CHECK(build("cpu_burn", "micros", 2.5).ok());  // fractional microseconds are fine
  CHECK_FALSE(build("cpu_burn", "micros", 1e300).ok());
  CHECK_FALSE(build("sleep", "micros", std::nan("")).ok());
}

TEST_CASE("padded_batch refuses a padded_shape no memory could hold", "[limits]") {
  auto p = Chain({R"({"name":"r","op":"range","range":{"stop":8}})",
                  R"({"name":"b","op":"batch","batch":{"batch_size":2}})",
                  R"({"name":"pb","op":"padded_batch","padded_batch":{"batch_size":2,"padded_shape":[4000000000000]}})"});
  Harness h(p);
  REQUIRE(h.build_status().ok());
  std::vector<Element> out;
  const Status s = h.Collect(&out);
  CHECK(s.code() == Status::Code::kResourceExhausted);
  CHECK_THAT(s.message(), Catch::Contains("node 'pb'"));
}

// A chain of `maps` add maps over a range of 3.
schema::Pipeline AddChain(int maps) {
  std::vector<std::string> nodes{R"({"name":"r","op":"range","range":{"stop":3}})"};
  for (int i = 0; i < maps; ++i) {
    nodes.push_back(R"({"name":"m)" + std::to_string(i) + R"(","op":"map","map":{"udf":[{"op":"add"}]}})");
  }
  return Chain(nodes);
}

TEST_CASE("pipelines deeper than the runtime's stack allows are refused when built", "[limits]") {
  // Each level is a nested GetNext per element; 500 levels run (under the
  // sanitizers too), 1,500 are refused with the reason.
  Harness ok(AddChain(500));
  REQUIRE(ok.build_status().ok());
  std::vector<Element> out;
  REQUIRE(ok.Collect(&out).ok());
  REQUIRE(out.size() == 3);
  CHECK(out[2][0].data<int64_t>()[0] == 2 + 500);

  Harness deep(AddChain(1500));
  CHECK(deep.build_status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(deep.build_status().message(), Catch::Contains("more than 1000 nodes deep"));
}

}  // namespace
}  // namespace plumber::runtime::testing
