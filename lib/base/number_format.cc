// The number formats of number_format.h.
#include "base/number_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace plumber {
namespace {

// Below this a magnitude is noise of double arithmetic (1 - 0.9 - 0.1) and
// reads 0; see number_format.h.
constexpr double kNoise = 1e-12;

// A positive finite magnitude rounded to `sig` significant digits: the
// digits ("253") and the power of ten of the first one (4 for 25250).
// printf's %e rounds, so 9999.5 to four digits is "1000" at power 4.
struct Rounded {
  std::string digits;
  int exp = 0;
};

Rounded Round(double magnitude, int sig) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", sig - 1, magnitude);
  Rounded r;
  const char* p = buf;
  for (; *p != '\0' && *p != 'e'; ++p) {
    if (std::isdigit(static_cast<unsigned char>(*p))) r.digits += *p;
  }
  if (*p == 'e') r.exp = std::atoi(p + 1);
  return r;
}

// The digits written out with the first one at power `point` of ten,
// trailing zeros after the point dropped: ("253", 1) "25.3", ("1", 2) "100",
// ("98", -6) "0.0000098".
std::string Written(const Rounded& r, int point) {
  std::string d = r.digits;
  std::string whole, frac;
  if (point >= 0) {
    if (static_cast<int>(d.size()) < point + 1) d.append(point + 1 - d.size(), '0');
    whole = d.substr(0, point + 1);
    frac = d.substr(point + 1);
  } else {
    whole = "0";
    frac = std::string(-point - 1, '0') + d;
  }
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return frac.empty() ? whole : whole + "." + frac;
}

// nan, inf, -inf, or "" for a finite value.
std::string NonFinite(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return "";
}

// "7526300" -> "7,526,300".
std::string Thousands(std::string digits) {
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

}  // namespace

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return NonFinite(v);
  const double a = std::fabs(v);
  if (a < kNoise) return "0";
  const std::string sign = v < 0 ? "-" : "";
  const Rounded four = Round(a, 4);
  if (four.exp >= -3 && four.exp <= 3) return sign + Written(four, four.exp);
  const Rounded three = Round(a, 3);
  if (four.exp < -3) return sign + Written(three, three.exp);
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  const int group = std::min(three.exp / 3, 6);
  return sign + Written(three, three.exp - 3 * group) + kPrefixes[group];
}

std::string FormatCount(double v, const std::string& one, const std::string& many, int digits) {
  const std::string n = digits > 0 ? FormatSignificant(v, digits) : FormatNumber(v);
  return n + " " + (n == "1" ? one : many);
}

std::string FormatWholeCount(long long n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string FormatPercent(double share) { return FormatNumber(100 * share) + "%"; }

std::string FormatSignificant(double v, int digits) {
  if (!std::isfinite(v)) return NonFinite(v);
  const double a = std::fabs(v);
  if (a < kNoise) return "0";
  const Rounded r = Round(a, std::clamp(digits, 1, 17));
  return (v < 0 ? "-" : "") + Written(r, r.exp);
}

std::string FormatFixed(double v, int decimals) {
  char buf[350];  // %f of 1e308 has 309 digits
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

std::string FormatRounded(double v) {
  const double a = std::fabs(v);
  return FormatFixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::string FormatChange(double share) {
  const double percent = share * 100;
  if (!std::isfinite(percent)) return (percent > 0 ? "+" : "") + NonFinite(percent) + "%";
  if (std::fabs(percent) < 999.95) {
    const std::string s = FormatFixed(percent, 1);
    return (s[0] == '-' ? "" : "+") + s + "%";
  }
  return (percent < 0 ? "-" : "+") + Thousands(FormatFixed(std::fabs(percent), 0)) + "%";
}

}  // namespace plumber
