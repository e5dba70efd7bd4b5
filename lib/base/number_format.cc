// The number formats of number_format.h.
#include "base/number_format.h"

#include <cmath>
#include <cstdio>

namespace plumber {

std::string FormatNumber(double v) {
  char buf[64];
  if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.3e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

std::string FormatSignificant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string FormatFixed(double v, int decimals) {
  char buf[350];  // %f of 1e308 has 309 digits
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string FormatRounded(double v) {
  const double a = std::fabs(v);
  return FormatFixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::string FormatChange(double share) {
  char buf[350];
  std::snprintf(buf, sizeof buf, "%+.1f%%", share * 100);
  return buf;
}

}  // namespace plumber
