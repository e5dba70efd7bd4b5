// The UDF op rows; see udf_table.h.
#include "pipeline/udf_table.h"

#include <array>

namespace plumber {
namespace {

constexpr double kAny = -std::numeric_limits<double>::infinity();
constexpr std::array<std::string_view, 3> kFormats = {"gzip", "zlib", "zstd"};

constexpr UdfArgDef kComponent{"component", ArgType::kNumber, false};
using T = Touches;
using C = CostFollows;
constexpr std::array kParseExampleArgs = {kComponent, UdfArgDef{"features", ArgType::kStringList, false}};
constexpr std::array kDecodeJpegArgs = {kComponent, UdfArgDef{"channels", ArgType::kNumber, false}};
constexpr std::array kCropArgs = {kComponent, UdfArgDef{"height", ArgType::kNumber, true, 1},
                                  UdfArgDef{"width", ArgType::kNumber, true, 1},
                                  UdfArgDef{"seed", ArgType::kNumber, false}};
constexpr std::array kFlipArgs = {kComponent, UdfArgDef{"seed", ArgType::kNumber, false}};
constexpr std::array kResizeArgs = {kComponent, UdfArgDef{"height", ArgType::kNumber, true, 1},
                                    UdfArgDef{"width", ArgType::kNumber, true, 1}};
constexpr std::array kNormalizeArgs = {kComponent, UdfArgDef{"mean", ArgType::kNumberList, false},
                                       UdfArgDef{"std", ArgType::kNumberList, false}};
constexpr std::array kDecompressArgs = {kComponent, UdfArgDef{"format", ArgType::kString, true, 0, kFormats}};
constexpr std::array kTokenizeArgs = {kComponent, UdfArgDef{"vocab_size", ArgType::kNumber, false, 1}};
constexpr std::array kLengthFilterArgs = {kComponent, UdfArgDef{"min", ArgType::kNumber, false},
                                          UdfArgDef{"max", ArgType::kNumber, false}};
constexpr std::array kMicrosArgs = {UdfArgDef{"micros", ArgType::kNumber, true}};
constexpr std::array kLabelInArgs = {kComponent, UdfArgDef{"values", ArgType::kNumberList, false},
                                     UdfArgDef{"min", ArgType::kNumber, false, kAny},
                                     UdfArgDef{"max", ArgType::kNumber, false, kAny}};
constexpr std::array kAddArgs = {kComponent, UdfArgDef{"value", ArgType::kNumber, false, kAny}};

constexpr std::array kUdfOps = {
    // name, help, args, random, predicate, reads, writes, can_fail, one_to_one, cost
    UdfOpDef{"parse_example", "tf.train.Example -> one tensor per feature", kParseExampleArgs, false, false,
             T::kComponent, T::kElement, true, true, C::kBytes},
    UdfOpDef{"decode_jpeg", "JPEG bytes -> uint8 HWC image", kDecodeJpegArgs, false, false, T::kComponent,
             T::kComponent, true, true, C::kBytes},
    // Fails on an image smaller than the crop, which depends on the image.
    UdfOpDef{"random_crop", "random height x width window", kCropArgs, true, false, T::kComponent, T::kComponent,
             true, true, C::kBytes},
    UdfOpDef{"random_flip_left_right", "mirrors the image with probability 1/2", kFlipArgs, true, false,
             T::kComponent, T::kComponent, false, true, C::kBytes},
    UdfOpDef{"resize", "bilinear resize to height x width", kResizeArgs, false, false, T::kComponent, T::kComponent,
             false, true, C::kBytes},
    UdfOpDef{"normalize", "uint8 HWC -> float32 CHW, (x - mean) / std", kNormalizeArgs, false, false,
             T::kComponent, T::kComponent, false, true, C::kBytes},
    UdfOpDef{"decompress", "gzip, zlib or zstd bytes -> bytes", kDecompressArgs, false, false, T::kComponent,
             T::kComponent, true, true, C::kBytes},
    UdfOpDef{"tokenize", "whitespace split, hashed to int32 ids", kTokenizeArgs, false, false, T::kComponent,
             T::kComponent, false, true, C::kBytes},
    UdfOpDef{"length_filter", "true when min <= length <= max", kLengthFilterArgs, false, true, T::kComponent,
             T::kNothing, false, false, C::kElements},
    UdfOpDef{"label_in", "true when a scalar (a label) is in values, or else within min..max", kLabelInArgs, false,
             true, T::kComponent, T::kNothing, false, false, C::kElements},
    // Synthetic work: it reads and writes nothing of the element.
    UdfOpDef{"cpu_burn", "deterministic CPU work for micros microseconds", kMicrosArgs, false, false, T::kNothing,
             T::kNothing, false, true, C::kElements},
    UdfOpDef{"sleep", "sleeps micros microseconds", kMicrosArgs, false, false, T::kNothing, T::kNothing, false, true,
             C::kElements},
    UdfOpDef{"add", "adds value to a numeric tensor", kAddArgs, false, false, T::kComponent, T::kComponent, false,
             true, C::kBytes},
};

}  // namespace

std::span<const UdfOpDef> AllUdfOps() { return kUdfOps; }

const UdfOpDef* FindUdfOp(std::string_view name) {
  for (const auto& row : kUdfOps) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool UdfIsRandom(const google::protobuf::RepeatedPtrField<schema::UdfOp>& udf) {
  for (const auto& step : udf) {
    const UdfOpDef* def = FindUdfOp(step.op());
    if (def != nullptr && def->random) return true;
  }
  return false;
}

int UdfStepComponent(const schema::UdfOp& step) {
  const auto it = step.args().find("component");
  if (it == step.args().end() || it->second.kind_case() != google::protobuf::Value::kNumberValue) return 0;
  return static_cast<int>(it->second.number_value());
}

}  // namespace plumber
