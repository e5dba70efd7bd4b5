// The cardinality helpers of cardinality.h.
#include "pipeline/cardinality.h"

namespace plumber {

using Kind = Cardinality::Kind;

Cardinality Cardinality::Exact(double v) {
  Cardinality c;
  c.kind = Kind::kFinite;
  c.value = c.lo = c.hi = v;
  c.exact = true;
  return c;
}

Cardinality Cardinality::Infinite(std::string why) {
  Cardinality c;
  c.kind = Kind::kInfinite;
  c.why = std::move(why);
  return c;
}

Cardinality Cardinality::Unknown(std::string why) {
  Cardinality c;
  c.why = std::move(why);
  return c;
}

Cardinality MapCardinality(const Cardinality& in, const std::function<double(double)>& f) {
  if (!in.finite()) return in;
  Cardinality c = in;
  c.value = f(in.value);
  c.lo = f(in.lo);
  c.hi = f(in.hi);
  return c;
}

Cardinality MultiplyCardinalities(const Cardinality& a, const Cardinality& b) {
  if ((a.finite() && a.hi == 0) || (b.finite() && b.hi == 0)) return Cardinality::Exact(0);
  if (a.kind == Kind::kUnknown) return a;
  if (b.kind == Kind::kUnknown) return b;
  if (!a.finite()) return a;
  if (!b.finite()) return b;
  Cardinality c;
  c.kind = Kind::kFinite;
  c.value = a.value * b.value;
  c.lo = a.lo * b.lo;
  c.hi = a.hi * b.hi;
  c.exact = a.exact && b.exact;
  c.interval_known = a.interval_known && b.interval_known;
  return c;
}

}  // namespace plumber
