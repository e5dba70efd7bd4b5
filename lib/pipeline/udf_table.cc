// The UDF op rows; see udf_table.h.
#include "pipeline/udf_table.h"

#include <array>

namespace plumber {
namespace {

constexpr double kAny = -std::numeric_limits<double>::infinity();
constexpr std::array<std::string_view, 3> kFormats = {"gzip", "zlib", "zstd"};

constexpr UdfArgDef kComponent{"component", ArgType::kNumber, false};
constexpr std::array kParseExampleArgs = {UdfArgDef{"features", ArgType::kStringList, false}};
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
constexpr std::array kAddArgs = {kComponent, UdfArgDef{"value", ArgType::kNumber, false, kAny}};

constexpr std::array kUdfOps = {
    UdfOpDef{"parse_example", "tf.train.Example -> one tensor per feature", kParseExampleArgs, false, false},
    UdfOpDef{"decode_jpeg", "JPEG bytes -> uint8 HWC image", kDecodeJpegArgs, false, false},
    UdfOpDef{"random_crop", "random height x width window", kCropArgs, true, false},
    UdfOpDef{"random_flip_left_right", "mirrors the image with probability 1/2", kFlipArgs, true, false},
    UdfOpDef{"resize", "bilinear resize to height x width", kResizeArgs, false, false},
    UdfOpDef{"normalize", "uint8 HWC -> float32 CHW, (x - mean) / std", kNormalizeArgs, false, false},
    UdfOpDef{"decompress", "gzip, zlib or zstd bytes -> bytes", kDecompressArgs, false, false},
    UdfOpDef{"tokenize", "whitespace split, hashed to int32 ids", kTokenizeArgs, false, false},
    UdfOpDef{"length_filter", "true when min <= length <= max", kLengthFilterArgs, false, true},
    UdfOpDef{"cpu_burn", "deterministic CPU work for micros microseconds", kMicrosArgs, false, false},
    UdfOpDef{"sleep", "sleeps micros microseconds", kMicrosArgs, false, false},
    UdfOpDef{"add", "adds value to a numeric tensor", kAddArgs, false, false},
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

}  // namespace plumber
