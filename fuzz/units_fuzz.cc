// Fuzzes the size, rate and duration parsers: no crash, and every accepted
// value is finite and non-negative.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)units::ParseBytes(text);
  if (auto r = units::ParseRate(text); r.ok() && !(std::isfinite(*r) && *r >= 0)) std::abort();
  if (auto s = units::ParseSeconds(text); s.ok() && !(std::isfinite(*s) && *s >= 0)) std::abort();
  return 0;
}
