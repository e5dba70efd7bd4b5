// The TensorFlow dataset types plumber knows, one row each: what the
// importers (a tf.data model dump, a PipelineSnapshot's dataset graph) make
// of the type, and the tf.data call the advice writes for its knobs. Both
// importers and the advice look a type up here, so a type is added once.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace plumber {

// The flavours of TF dataset an importer tells apart: one op row may stand
// for several (map and parallel map), and each format reads its own
// parameters for each.
enum class TfKind {
  kMap, kParallelMap, kFilter, kBatch, kParallelBatch, kMapAndBatch, kPaddedBatch, kPrefetch, kShuffle,
  kShuffleAndRepeat, kRepeat, kCache, kMemoryCache, kTake, kSkip, kTfRecord, kTextLine, kInterleave,
  kParallelInterleave, kFlatMap,
};

struct TfTypeDef {
  // The type without "Dataset" and its version suffix, e.g. "ParallelMap".
  std::string_view base;
  TfKind kind;
  // The op row (op_table.h) it becomes.
  std::string_view op;
  // How users write the transformation when the rewrite turns its knobs:
  // {p} stands for the parallelism, {c} for the cycle length. Empty when
  // the rewrite turns none of its knobs.
  std::string_view call;
};

// The calls several rows share.
inline constexpr std::string_view kTfMapCall = ".map(f, num_parallel_calls={p})";
inline constexpr std::string_view kTfBatchCall = ".batch(b, num_parallel_calls={p})";
inline constexpr std::string_view kTfMapAndBatchCall =
    ".map(f, num_parallel_calls={p}).batch(b): map_and_batch is deprecated; tf.data fuses them";
inline constexpr std::string_view kTfInterleaveCall = ".interleave(f, cycle_length={c}, num_parallel_calls={p})";

// The rows, here beside TfKind so that a new type is one edit of one file.
inline constexpr std::array kTfTypes = {
    TfTypeDef{"Map", TfKind::kMap, "map", kTfMapCall},
    TfTypeDef{"ParallelMap", TfKind::kParallelMap, "map", kTfMapCall},
    TfTypeDef{"Filter", TfKind::kFilter, "filter", ""},
    TfTypeDef{"Batch", TfKind::kBatch, "batch", kTfBatchCall},
    TfTypeDef{"ParallelBatch", TfKind::kParallelBatch, "batch", kTfBatchCall},
    TfTypeDef{"MapAndBatch", TfKind::kMapAndBatch, "batch", kTfMapAndBatchCall},
    TfTypeDef{"ExperimentalMapAndBatch", TfKind::kMapAndBatch, "batch", kTfMapAndBatchCall},
    TfTypeDef{"PaddedBatch", TfKind::kPaddedBatch, "padded_batch", ""},
    TfTypeDef{"Prefetch", TfKind::kPrefetch, "prefetch", ""},
    TfTypeDef{"Shuffle", TfKind::kShuffle, "shuffle", ""},
    TfTypeDef{"ShuffleAndRepeat", TfKind::kShuffleAndRepeat, "shuffle", ""},
    TfTypeDef{"Repeat", TfKind::kRepeat, "repeat", ""},
    TfTypeDef{"Cache", TfKind::kCache, "cache", ""},
    TfTypeDef{"MemoryCache", TfKind::kMemoryCache, "cache", ""},
    TfTypeDef{"Take", TfKind::kTake, "take", ""},
    TfTypeDef{"Skip", TfKind::kSkip, "skip", ""},
    TfTypeDef{"TFRecord", TfKind::kTfRecord, "tfrecord", ""},
    TfTypeDef{"TextLine", TfKind::kTextLine, "text_line", ""},
    TfTypeDef{"Interleave", TfKind::kInterleave, "interleave", kTfInterleaveCall},
    TfTypeDef{"ParallelInterleave", TfKind::kParallelInterleave, "interleave", kTfInterleaveCall},
    TfTypeDef{"LegacyParallelInterleave", TfKind::kParallelInterleave, "interleave", kTfInterleaveCall},
    // An interleave of one input at a time.
    TfTypeDef{"FlatMap", TfKind::kFlatMap, "interleave",
              ".interleave(f, cycle_length={c}, num_parallel_calls={p}) in place of .flat_map(f)"},
};

// A TF op or iterator type in its parts: "ParallelMapDatasetV2" (or
// "ParallelMapV2") has type "ParallelMapV2", base "ParallelMap", version "V2".
struct TfTypeName {
  std::string type;
  std::string base;
  std::string version;
};
TfTypeName SplitTfType(std::string_view op);

// The row of a type, given with or without "Dataset" and version; nullptr
// for a type plumber has no op for (it is imported as opaque).
const TfTypeDef* FindTfType(std::string_view type);

// Every row, in a stable order.
std::span<const TfTypeDef> AllTfTypes();

}  // namespace plumber
