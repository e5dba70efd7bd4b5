// The UDF ops on small inputs with known answers; random ops are
// reproducible from (seed, element index, epoch).
#include "harness.h"
#include "runtime/compression.h"
#include "runtime/datagen.h"
#include "runtime/udf.h"

namespace plumber::runtime::testing {
namespace {

std::unique_ptr<UdfOp> Op(const std::string& name, std::initializer_list<std::pair<const char*, double>> nums = {},
                          std::initializer_list<std::pair<const char*, const char*>> strs = {}) {
  schema::UdfOp spec;
  spec.set_op(name);
  for (const auto& [k, v] : nums) (*spec.mutable_args())[k].set_number_value(v);
  for (const auto& [k, v] : strs) (*spec.mutable_args())[k].set_string_value(v);
  auto op = MakeUdfOp(spec);
  INFO(op.status().ToString());
  REQUIRE(op.ok());
  return std::move(op).value();
}

// A 2x3 RGB image whose value at (y, x, c) is 100*y + 10*x + c.
Tensor SmallImage() {
  Tensor t(DType::kUint8, {2, 3, 3});
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 3; ++c) t.SetDouble((y * 3 + x) * 3 + c, 100 * y + 10 * x + c);
  return t;
}

TEST_CASE("decode_jpeg decodes real JPEG bytes to uint8 HWC", "[udf]") {
  auto jpeg = MakeJpeg(40, 24, 1, 0, 90);
  REQUIRE(jpeg.ok());
  Element e{Tensor::ScalarString(*jpeg)};
  REQUIRE(Op("decode_jpeg")->Apply(&e, {}).ok());
  CHECK(e[0].dtype() == DType::kUint8);
  CHECK(e[0].shape() == std::vector<int64_t>{24, 40, 3});
  Element gray{Tensor::ScalarString(*jpeg)};
  REQUIRE(Op("decode_jpeg", {{"channels", 1}})->Apply(&gray, {}).ok());
  CHECK(gray[0].shape() == std::vector<int64_t>{24, 40, 1});
  Element junk{Tensor::ScalarString("not a jpeg")};
  CHECK(Op("decode_jpeg")->Apply(&junk, {}).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("generated JPEGs vary in size with the seed", "[udf][gen]") {
  std::set<size_t> sizes;
  for (uint64_t i = 0; i < 8; ++i) sizes.insert(MakeJpeg(64, 64, 3, i, 90)->size());
  CHECK(sizes.size() >= 6);
  CHECK(*MakeJpeg(64, 64, 3, 1, 90) == *MakeJpeg(64, 64, 3, 1, 90));
}

TEST_CASE("random_crop takes a window reproducibly", "[udf]") {
  auto crop = Op("random_crop", {{"height", 1}, {"width", 2}, {"seed", 7}});
  Element a{SmallImage()}, b{SmallImage()};
  REQUIRE(crop->Apply(&a, UdfCtx{5, 0}).ok());
  REQUIRE(crop->Apply(&b, UdfCtx{5, 0}).ok());
  CHECK(a == b);
  REQUIRE(a[0].shape() == std::vector<int64_t>{1, 2, 3});
  // The window is contiguous: x advances by one between its two pixels.
  CHECK(a[0].GetInt(3) - a[0].GetInt(0) == 10);
  std::set<int64_t> corners;
  for (uint64_t i = 0; i < 32; ++i) {
    Element e{SmallImage()};
    REQUIRE(crop->Apply(&e, UdfCtx{i, 0}).ok());
    corners.insert(e[0].GetInt(0));
  }
  CHECK(corners == std::set<int64_t>{0, 10, 100, 110});
  Element tiny{Tensor(DType::kUint8, {1, 1, 3})};
  CHECK(crop->Apply(&tiny, {}).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("random_flip_left_right mirrors about half the time", "[udf]") {
  auto flip = Op("random_flip_left_right", {{"seed", 1}});
  int flipped = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    Element e{SmallImage()};
    REQUIRE(flip->Apply(&e, UdfCtx{i, 0}).ok());
    if (e[0].GetInt(0) == 20) {
      ++flipped;
      CHECK(e[0].GetInt(6) == 0);   // the old first column is now last
      CHECK(e[0].GetInt(3) == 10);  // the middle stays
    } else {
      CHECK(e[0] == SmallImage());
    }
  }
  CHECK(flipped > 60);
  CHECK(flipped < 140);
}

TEST_CASE("resize is bilinear and keeps flat images flat", "[udf]") {
  Tensor flat(DType::kUint8, {4, 4, 1});
  for (int i = 0; i < 16; ++i) flat.SetDouble(i, 77);
  Element e{flat};
  REQUIRE(Op("resize", {{"height", 3}, {"width", 7}})->Apply(&e, {}).ok());
  REQUIRE(e[0].shape() == std::vector<int64_t>{3, 7, 1});
  for (int i = 0; i < 21; ++i) CHECK(e[0].GetInt(i) == 77);
  Element g{SmallImage()};
  REQUIRE(Op("resize", {{"height", 2}, {"width", 6}})->Apply(&g, {}).ok());
  // Doubling the width interpolates between neighbours.
  CHECK(g[0].GetInt(0) == 0);
  CHECK(g[0].GetInt(5 * 3) == 20);
  CHECK(g[0].GetInt(2 * 3) > 0);
  CHECK(g[0].GetInt(2 * 3) < 10);
}

TEST_CASE("normalize turns uint8 HWC into float32 CHW", "[udf]") {
  schema::UdfOp spec;
  spec.set_op("normalize");
  for (double m : {0.0, 1.0, 2.0}) (*spec.mutable_args())["mean"].mutable_list_value()->add_values()->set_number_value(m);
  (*spec.mutable_args())["std"].mutable_list_value()->add_values()->set_number_value(2.0);
  auto op = MakeUdfOp(spec);
  REQUIRE(op.ok());
  Element e{SmallImage()};
  REQUIRE((*op)->Apply(&e, {}).ok());
  REQUIRE(e[0].dtype() == DType::kFloat32);
  REQUIRE(e[0].shape() == std::vector<int64_t>{3, 2, 3});
  // Channel c, y=1, x=2 held 100 + 20 + c.
  for (int c = 0; c < 3; ++c) CHECK(e[0].GetDouble(c * 6 + 1 * 3 + 2) == Approx((120.0 + c - c) / 2.0));
}

TEST_CASE("decompress undoes gzip, zlib and zstd", "[udf]") {
  const std::string text(5000, 'q');
  for (auto [codec, name] : {std::pair{Codec::kGzip, "gzip"}, {Codec::kZlib, "zlib"}, {Codec::kZstd, "zstd"}}) {
    auto packed = Compress(codec, text + name);
    REQUIRE(packed.ok());
    CHECK(packed->size() < text.size());
    Element e{Tensor::ScalarString(*packed)};
    REQUIRE(Op("decompress", {}, {{"format", name}})->Apply(&e, {}).ok());
    CHECK(e[0].strings()[0] == text + name);
    Element bad{Tensor::ScalarString(packed->substr(0, packed->size() / 2))};
    CHECK_FALSE(Op("decompress", {}, {{"format", name}})->Apply(&bad, {}).ok());
  }
}

TEST_CASE("tokenize hashes whitespace-separated words, length_filter tests lengths", "[udf]") {
  Element e{Tensor::ScalarString("  the cat\tthe\n")};
  REQUIRE(Op("tokenize", {{"vocab_size", 50}})->Apply(&e, {}).ok());
  REQUIRE(e[0].dtype() == DType::kInt32);
  REQUIRE(e[0].shape() == std::vector<int64_t>{3});
  CHECK(e[0].GetInt(0) == e[0].GetInt(2));
  for (int i = 0; i < 3; ++i) CHECK(e[0].GetInt(i) < 50);
  auto keep = Op("length_filter", {{"min", 2}, {"max", 3}});
  CHECK(*keep->Test(e) == true);
  CHECK(*Op("length_filter", {{"min", 4}})->Test(e) == false);
  CHECK(*Op("length_filter", {{"max", 5}})->Test(Element{Tensor::ScalarString("abcdef")}) == false);
}

TEST_CASE("add adds to every value, sleep waits", "[udf]") {
  Element e{Tensor::Scalar(40), Tensor::FromVector(DType::kFloat32, std::vector<float>{1, 2}, {2})};
  REQUIRE(Op("add", {{"value", 2}})->Apply(&e, {}).ok());
  CHECK(e[0].GetInt(0) == 42);
  REQUIRE(Op("add", {{"value", 0.5}, {"component", 1}})->Apply(&e, {}).ok());
  CHECK(e[1].GetDouble(1) == Approx(2.5));
  CHECK(Op("add", {{"component", 5}})->Apply(&e, {}).code() == Status::Code::kInvalidArgument);
  const int64_t t0 = MonoNanos();
  REQUIRE(Op("sleep", {{"micros", 3000}})->Apply(&e, {}).ok());
  CHECK(MonoNanos() - t0 >= 3'000'000);
}

TEST_CASE("cpu_burn does the calibrated amount of thread CPU work", "[udf]") {
  auto burn = Op("cpu_burn", {{"micros", 2000}});
  Element e;
  // The best of fifteen over ~30 ms: a loaded machine can only slow a trial
  // down, and a disturbance can last through several trials.
  int64_t best = INT64_MAX;
  for (int i = 0; i < 15; ++i) {
    const int64_t t0 = ThreadCpuNanos();
    REQUIRE(burn->Apply(&e, {}).ok());
    best = std::min(best, ThreadCpuNanos() - t0);
  }
  CHECK(best > 2'000'000 * 0.6);
  CHECK(best < 2'000'000 * 1.4);
}

TEST_CASE("ops reject bad arguments when built", "[udf]") {
  schema::UdfOp spec;
  spec.set_op("decompress");
  (*spec.mutable_args())["format"].set_string_value("lz4");
  CHECK(MakeUdfOp(spec).status().code() == Status::Code::kInvalidArgument);
  spec.set_op("nope");
  CHECK_THAT(MakeUdfOp(spec).status().message(), Catch::Contains("nope"));
  schema::UdfOp crop;
  crop.set_op("random_crop");
  CHECK_THAT(MakeUdfOp(crop).status().message(), Catch::Contains("height"));
}

// "Train on a subset of classes": keep an element whose label is one of a
// set, or lies in a range; a one-value int64 feature (parse_example's) is
// a scalar.
TEST_CASE("label_in keeps a label in a set or a range, and refuses what would keep nothing", "[udf]") {
  auto label = [](int64_t v) {
    return Element{Tensor::ScalarString("image"), Tensor::FromVector(DType::kInt64, std::vector<int64_t>{v}, {1})};
  };
  schema::UdfOp set;
  set.set_op("label_in");
  (*set.mutable_args())["component"].set_number_value(1);
  auto* values = (*set.mutable_args())["values"].mutable_list_value();
  for (const double v : {3.0, 7.0}) values->add_values()->set_number_value(v);
  auto in_set = MakeUdfOp(set);
  REQUIRE(in_set.ok());
  CHECK(*(*in_set)->Test(label(3)) == true);
  CHECK(*(*in_set)->Test(label(7)) == true);
  CHECK(*(*in_set)->Test(label(4)) == false);

  auto range = Op("label_in", {{"component", 1}, {"min", 2}, {"max", 4}});
  CHECK(*range->Test(label(2)) == true);
  CHECK(*range->Test(label(4)) == true);
  CHECK(*range->Test(label(5)) == false);
  CHECK(*Op("label_in", {{"min", 10}})->Test(Element{Tensor::Scalar(12)}) == true);
  CHECK(*Op("label_in", {{"max", 10}})->Test(Element{Tensor::Scalar(12)}) == false);

  // Not a scalar, or no such component: an error naming the op.
  CHECK_THAT(range->Test(Element{Tensor::ScalarString("x"), Tensor::ScalarString("y")}).status().message(),
             Catch::Contains("label_in: expected a numeric scalar"));
  CHECK_THAT(range->Test(Element{Tensor::Scalar(1)}).status().message(), Catch::Contains("no component 1"));

  auto refused = [](schema::UdfOp spec) { return MakeUdfOp(spec).status().message(); };
  schema::UdfOp neither;
  neither.set_op("label_in");
  CHECK_THAT(refused(neither), Catch::Contains("either values (a list) or a range (min, max), not neither"));
  schema::UdfOp both = set;
  (*both.mutable_args())["min"].set_number_value(0);
  CHECK_THAT(refused(both), Catch::Contains("not both"));
  schema::UdfOp empty;
  empty.set_op("label_in");
  (*empty.mutable_args())["values"].mutable_list_value();
  CHECK_THAT(refused(empty), Catch::Contains("values must not be empty"));
  schema::UdfOp upside_down;
  upside_down.set_op("label_in");
  (*upside_down.mutable_args())["min"].set_number_value(5);
  (*upside_down.mutable_args())["max"].set_number_value(2);
  CHECK_THAT(refused(upside_down), Catch::Contains("min is above max"));
}

}  // namespace
}  // namespace plumber::runtime::testing
