// The op tables. Adding a dataset op means a row here, a params message in
// schemas/pipeline.proto, validation rules in validate.cc and an
// implementation in lib/runtime.
#include "op_registry.h"

#include <array>

namespace plumber {
namespace {

using PC = schema::Node::ParamsCase;
using CR = CardinalityRule;

constexpr std::array kOps = {
    OpDef{"range", "int64 scalars start..stop by step", PC::kRange, 0, 0, false, false, CR::kFromParams},
    OpDef{"list_files", "file names from a list or a glob", PC::kListFiles, 0, 0, false, false, CR::kFromParams},
    OpDef{"tfrecord", "records of TFRecord files", PC::kTfrecord, 0, 1, true, false, CR::kFilesTimesRecords},
    OpDef{"text_line", "lines of text files", PC::kTextLine, 0, 1, true, false, CR::kFilesTimesRecords},
    OpDef{"map", "applies a UDF to each element", PC::kMap, 1, 1, false, true},
    OpDef{"filter", "keeps elements whose predicate holds", PC::kFilter, 1, 1, false, false, CR::kMeasuredRatio},
    OpDef{"interleave", "interleaves datasets opened per input element", PC::kInterleave, 1, 1, false, true,
          CR::kFlattens},
    OpDef{"shuffle", "random order within a buffer", PC::kShuffle, 1, 1, false, false},
    OpDef{"repeat", "repeats its input count times or forever", PC::kRepeat, 1, 1, false, false, CR::kRepeats},
    OpDef{"batch", "stacks consecutive elements", PC::kBatch, 1, 1, false, true, CR::kBatches},
    OpDef{"padded_batch", "stacks consecutive elements, padding to the longest", PC::kPaddedBatch, 1, 1, false,
          false, CR::kBatches},
    OpDef{"prefetch", "produces ahead of the consumer", PC::kPrefetch, 1, 1, false, false},
    OpDef{"cache", "replays the first epoch from memory or a file", PC::kCache, 1, 1, false, false},
    OpDef{"take", "the first count elements", PC::kTake, 1, 1, false, false, CR::kTakes},
    OpDef{"skip", "all but the first count elements", PC::kSkip, 1, 1, false, false, CR::kSkips},
};

constexpr UdfArgDef kComponent{"component", ArgType::kNumber, false};
constexpr std::array kParseExampleArgs = {UdfArgDef{"features", ArgType::kStringList, false}};
constexpr std::array kDecodeJpegArgs = {kComponent, UdfArgDef{"channels", ArgType::kNumber, false}};
constexpr std::array kCropArgs = {kComponent, UdfArgDef{"height", ArgType::kNumber, true},
                                  UdfArgDef{"width", ArgType::kNumber, true},
                                  UdfArgDef{"seed", ArgType::kNumber, false}};
constexpr std::array kFlipArgs = {kComponent, UdfArgDef{"seed", ArgType::kNumber, false}};
constexpr std::array kResizeArgs = {kComponent, UdfArgDef{"height", ArgType::kNumber, true},
                                    UdfArgDef{"width", ArgType::kNumber, true}};
constexpr std::array kNormalizeArgs = {kComponent, UdfArgDef{"mean", ArgType::kNumberList, false},
                                       UdfArgDef{"std", ArgType::kNumberList, false}};
constexpr std::array kDecompressArgs = {kComponent, UdfArgDef{"format", ArgType::kString, true}};
constexpr std::array kTokenizeArgs = {kComponent, UdfArgDef{"vocab_size", ArgType::kNumber, false}};
constexpr std::array kLengthFilterArgs = {kComponent, UdfArgDef{"min", ArgType::kNumber, false},
                                          UdfArgDef{"max", ArgType::kNumber, false}};
constexpr std::array kMicrosArgs = {UdfArgDef{"micros", ArgType::kNumber, true}};
constexpr std::array kAddArgs = {kComponent, UdfArgDef{"value", ArgType::kNumber, false}};

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

template <typename Table>
auto FindByName(const Table& table, std::string_view name) -> decltype(&table[0]) {
  for (const auto& row : table) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

}  // namespace

std::span<const OpDef> AllOps() { return kOps; }
const OpDef* FindOp(std::string_view name) { return FindByName(kOps, name); }
std::span<const UdfOpDef> AllUdfOps() { return kUdfOps; }
const UdfOpDef* FindUdfOp(std::string_view name) { return FindByName(kUdfOps, name); }

int NodeParallelism(const schema::Node& node) {
  switch (node.params_case()) {
    case PC::kMap: return node.map().has_parallelism() ? node.map().parallelism() : 1;
    case PC::kInterleave: return node.interleave().has_parallelism() ? node.interleave().parallelism() : 1;
    case PC::kBatch: return node.batch().has_parallelism() ? node.batch().parallelism() : 1;
    default: return 1;
  }
}

const google::protobuf::RepeatedPtrField<schema::UdfOp>* NodeUdf(const schema::Node& node) {
  if (node.op() == "map") return &node.map().udf();
  if (node.op() == "filter") return &node.filter().predicate();
  return nullptr;
}

bool NodeIsRandom(const schema::Node& node) {
  if (node.op() == "shuffle") return true;
  if (node.op() == "list_files") return node.list_files().shuffle();
  if (const auto* udf = NodeUdf(node)) {
    for (const auto& step : *udf) {
      const UdfOpDef* def = FindUdfOp(step.op());
      if (def != nullptr && def->random) return true;
    }
  }
  return false;
}

std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace plumber
