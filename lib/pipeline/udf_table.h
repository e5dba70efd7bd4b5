// The UDF op table: the ops a map's or filter's function is made of, one row
// per op with its arguments (type, whether required, allowed values),
// whether it is random and whether it is a predicate, and what it does to
// an element (which components it reads and writes, whether bad data can
// make it fail, what its cost grows with), which is what a rewrite that
// moves or fuses ops must know to keep the output. Validation checks UDFs
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

// Which of an element's components a UDF op reads or writes.
enum class Touches {
  kNothing,    // none (cpu_burn, sleep: synthetic work)
  kComponent,  // the one its "component" argument names, 0 by default
  kElement,    // the whole element: it may change which components there are
};

// What a UDF op's cost grows with: the bytes of the component it works on
// (a decode, a resize) or only the number of elements (a fixed amount of
// work, a test of one scalar).
enum class CostFollows { kBytes, kElements };

struct UdfOpDef {
  std::string_view name;
  std::string_view help;
  std::span<const UdfArgDef> args;
  // Output depends on a random draw (augmentations): nothing above it can be
  // cached, since a cache would replay one draw forever.
  bool random;
  // Yields a boolean verdict; only allowed as the last op of a filter.
  bool predicate;
  Touches reads;
  Touches writes;
  // Bad data can make it fail on one element and not on another (bytes that
  // are no JPEG or no Example, a corrupt stream, an image smaller than the
  // crop). A filter moved above it would hide some of those failures.
  // Wrong types or a missing component fail on every element alike and do
  // not count.
  bool can_fail;
  // One element in, one element out. A predicate is not: it keeps or drops.
  bool one_to_one;
  CostFollows cost;
};

std::span<const UdfOpDef> AllUdfOps();
// nullptr when unknown.
const UdfOpDef* FindUdfOp(std::string_view name);

// Some step of the UDF is a random op.
bool UdfIsRandom(const google::protobuf::RepeatedPtrField<schema::UdfOp>& udf);

// The component a step reads or writes when its row says kComponent: its
// "component" argument, 0 when absent.
int UdfStepComponent(const schema::UdfOp& step);

}  // namespace plumber
