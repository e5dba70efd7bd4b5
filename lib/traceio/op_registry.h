// What plumber knows about each dataset op and each UDF op without running
// it: arity, parameters, whether it can use more than one core, whether it
// is random. Validation, analysis and the rewriter ask these tables instead
// of switching on op names; the runtime supplies the implementations and a
// test checks that every op listed here has one.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "pipeline.pb.h"

namespace plumber {

enum class ArgType { kNumber, kString, kBool, kStringList, kNumberList };

struct UdfArgDef {
  std::string_view name;
  ArgType type;
  bool required;
};

struct UdfOpDef {
  std::string_view name;
  std::string_view help;
  std::span<const UdfArgDef> args;
  // Output depends on a random draw (augmentations): nothing above it can be
  // cached, since a cache would replay one draw forever.
  bool random;
  // Yields a boolean verdict; only allowed as the last op of a filter.
  bool predicate;
};

// How a dataset op turns the cardinality (elements per pass) of its input
// into its own; the analysis propagates dataset sizes with it.
enum class CardinalityRule {
  kPreserves,      // one out per one in (map, prefetch, shuffle, cache)
  kFromParams,     // a source whose parameters say it (range, list_files)
  kFilesTimesRecords,  // files read x records per file observed
  kMeasuredRatio,  // data-dependent (filter): measured out/in ratio
  kBatches,        // ceil or floor of input / batch_size
  kTakes,          // min(input, count)
  kSkips,          // max(0, input - count)
  kRepeats,        // input x count; infinite when count is -1
  kFlattens,       // input x elements per opened dataset (interleave)
};

struct OpDef {
  std::string_view name;
  std::string_view help;
  schema::Node::ParamsCase params_case;
  int min_inputs;
  int max_inputs;
  // Reads files itself (tfrecord, text_line) and so is charged storage bytes.
  bool reads_storage;
  // Can spread its own work over several cores through a parallelism
  // parameter; otherwise it is capped at one core.
  bool parallelizable;
  CardinalityRule cardinality = CardinalityRule::kPreserves;
};

// Every dataset op, in a stable order.
std::span<const OpDef> AllOps();
// nullptr when unknown.
const OpDef* FindOp(std::string_view name);

std::span<const UdfOpDef> AllUdfOps();
const UdfOpDef* FindUdfOp(std::string_view name);

// Properties of a configured node that depend on its parameters.
// Parallelism the node runs with (1 for sequential ops).
int NodeParallelism(const schema::Node& node);
// The node's own output order or content is random: shuffle, list_files with
// shuffle, a map or filter whose UDF has a random op.
bool NodeIsRandom(const schema::Node& node);
// The UDF of a map or filter node (empty for other ops).
const google::protobuf::RepeatedPtrField<schema::UdfOp>* NodeUdf(const schema::Node& node);

// "a", "b" and "c" -> "a, b, c": for messages that list what is known.
std::string JoinNames(std::span<const std::string_view> names);

}  // namespace plumber
