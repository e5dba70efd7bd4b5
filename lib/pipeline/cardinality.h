// Cardinality: how many elements one pass over a dataset yields, as the
// analysis knows it (exact, estimated with an interval, infinite, or
// unknown with the reason). Each op's row in op_table.h says how its own
// cardinality follows from its inputs' with these helpers, so the rules live
// beside the op and the analysis only propagates them.
#pragma once

#include <functional>
#include <string>

namespace plumber {

struct Cardinality {
  enum class Kind { kFinite, kInfinite, kUnknown };
  Kind kind = Kind::kUnknown;
  double value = 0;
  // Interval when the value is estimated from a sample of files; equal to
  // value when exact.
  double lo = 0;
  double hi = 0;
  bool exact = false;
  // False when estimated from a single file: one file shows no spread, so
  // lo and hi mean nothing.
  bool interval_known = true;
  // Why it is unknown or infinite, in plain language.
  std::string why;

  bool finite() const { return kind == Kind::kFinite; }

  static Cardinality Exact(double v);
  static Cardinality Infinite(std::string why);
  static Cardinality Unknown(std::string why);
};

// Applies a monotone map to the value and both ends of the interval;
// infinite and unknown pass through.
Cardinality MapCardinality(const Cardinality& in, const std::function<double(double)>& f);

// Product of two cardinalities (an interleave: datasets opened x elements
// each). Zero wins over everything; unknown over infinite.
Cardinality MultiplyCardinalities(const Cardinality& a, const Cardinality& b);

}  // namespace plumber
