// The UDF op table: the ops a map's or filter's function is made of, one row
// per op with its arguments (type, whether required, allowed values),
// whether it is random and whether it is a predicate. Validation checks UDFs
// against it; the runtime implements each row (lib/runtime/udf.cc) and a
// test checks that every row has an implementation.
#pragma once

#include <limits>
#include <span>
#include <string_view>

#include "pipeline.pb.h"

namespace plumber {

enum class ArgType { kNumber, kString, kBool, kStringList, kNumberList };

struct UdfArgDef {
  std::string_view name;
  ArgType type;
  bool required;
  // Numbers: the least value allowed (sizes and counts are at least 1).
  double min = 0;
  // Strings: the values allowed; empty means any.
  std::span<const std::string_view> choices = {};
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

std::span<const UdfOpDef> AllUdfOps();
// nullptr when unknown.
const UdfOpDef* FindUdfOp(std::string_view name);

// Some step of the UDF is a random op.
bool UdfIsRandom(const google::protobuf::RepeatedPtrField<schema::UdfOp>& udf);

}  // namespace plumber
