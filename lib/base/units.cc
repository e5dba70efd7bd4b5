// Parsing and formatting of sizes, rates and durations.
#include "units.h"

#include "number_format.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace plumber::units {
namespace {

struct Split {
  double number = 0;
  std::string suffix;
};

// Splits "12.5GiB" into 12.5 and "GiB"; rejects empty, negative, non-finite.
Status SplitNumber(std::string_view text, const char* what, Split* out) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.' || t[i] == 'e' ||
                          ((t[i] == '+' || t[i] == '-') && i > 0 && t[i - 1] == 'e'))) {
    // 'e' only counts as an exponent when a digit follows it.
    if (t[i] == 'e' && (i + 1 >= t.size() || !(std::isdigit(static_cast<unsigned char>(t[i + 1])) ||
                                               t[i + 1] == '+' || t[i + 1] == '-'))) {
      break;
    }
    ++i;
  }
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + i, out->number);
  if (i == 0 || ec != std::errc() || ptr != t.data() + i || !std::isfinite(out->number) || out->number < 0) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a " + what);
  }
  while (i < t.size() && t[i] == ' ') ++i;
  out->suffix = std::string(t.substr(i));
  return Status::OK();
}

// Multiplier of a size suffix, or 0 when unknown.
double SizeMultiplier(std::string s) {
  if (!s.empty() && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  if (s.empty()) return 1;
  bool binary = false;
  if (s.size() == 2 && (s[1] == 'i' || s[1] == 'I')) {
    binary = true;
    s.pop_back();
  }
  if (s.size() != 1) return 0;
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  const double base = binary ? 1024.0 : 1000.0;
  switch (c) {
    case 'K': return base;
    case 'M': return base * base;
    case 'G': return base * base * base;
    case 'T': return base * base * base * base;
    case 'P': return base * base * base * base * base;
    default: return 0;
  }
}

std::string ThreeDigits(double v, const char* const* names, int count, double step) {
  int i = 0;
  // 999.7 kB would round to "1000 kB": that is 1.00 MB.
  while (i + 1 < count && std::fabs(v) >= step - 0.5) {
    v /= step;
    ++i;
  }
  return FormatRounded(v) + " " + names[i];
}

}  // namespace

StatusOr<uint64_t> ParseBytes(std::string_view text) {
  Split s;
  PLUMBER_RETURN_IF_ERROR(SplitNumber(text, "size (expected e.g. 300G, 512MiB, 1048576)", &s));
  double mult = SizeMultiplier(s.suffix);
  if (mult == 0) {
    return Status::InvalidArgument("'" + std::string(text) + "': unknown size unit '" + s.suffix +
                                   "' (expected B, K, M, G, T, KiB, MiB, GiB, TiB)");
  }
  double v = std::round(s.number * mult);
  if (v >= 1.8e19) return Status::InvalidArgument("'" + std::string(text) + "' is too large a size");
  return static_cast<uint64_t>(v);
}

StatusOr<double> ParseRate(std::string_view text) {
  Split s;
  PLUMBER_RETURN_IF_ERROR(SplitNumber(text, "rate (expected e.g. 100MB/s)", &s));
  std::string suffix = s.suffix;
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "/s") suffix.resize(suffix.size() - 2);
  // Networks are sold in bits: "10Gb/s", "10Gbit/s" and "10Gbps" are
  // 1.25 GB/s. Reading them as bytes would plan for 8 times the network.
  bool bits = false;
  for (const char* unit : {"bps", "bit", "b"}) {
    const std::string u = unit;
    if (suffix.size() >= u.size() && suffix.compare(suffix.size() - u.size(), u.size(), u) == 0) {
      suffix.resize(suffix.size() - u.size());
      bits = true;
      break;
    }
  }
  double mult = SizeMultiplier(suffix);
  // SizeMultiplier would take a trailing "b" or "B" for bytes again.
  if (bits && !suffix.empty() && (suffix.back() == 'b' || suffix.back() == 'B')) mult = 0;
  if (bits) mult /= 8;
  if (mult == 0) {
    return Status::InvalidArgument("'" + std::string(text) + "': unknown rate unit '" + s.suffix +
                                   "' (expected e.g. MB/s, GiB/s, Gb/s)");
  }
  const double rate = s.number * mult;
  if (!std::isfinite(rate)) return Status::InvalidArgument("'" + std::string(text) + "' is too large a rate");
  return rate;
}

StatusOr<double> ParseSeconds(std::string_view text) {
  Split s;
  PLUMBER_RETURN_IF_ERROR(SplitNumber(text, "duration (expected e.g. 30s, 2m, 5ms)", &s));
  const std::string& u = s.suffix;
  double mult = 0;
  if (u.empty() || u == "s" || u == "sec") mult = 1;
  else if (u == "ms") mult = 1e-3;
  else if (u == "us") mult = 1e-6;
  else if (u == "ns") mult = 1e-9;
  else if (u == "m" || u == "min") mult = 60;
  else if (u == "h") mult = 3600;
  if (mult == 0) {
    return Status::InvalidArgument("'" + std::string(text) + "': unknown duration unit '" + u +
                                   "' (expected ns, us, ms, s, m, h)");
  }
  const double seconds = s.number * mult;
  if (!std::isfinite(seconds)) return Status::InvalidArgument("'" + std::string(text) + "' is too long a duration");
  return seconds;
}

StatusOr<double> ParseFraction(std::string_view text) {
  Split s;
  PLUMBER_RETURN_IF_ERROR(SplitNumber(text, "share (expected e.g. 10% or 0.1)", &s));
  if (s.suffix == "%") return s.number / 100;
  if (!s.suffix.empty()) {
    return Status::InvalidArgument("'" + std::string(text) + "': unknown unit '" + s.suffix +
                                   "' for a share (expected % or a fraction such as 0.1)");
  }
  if (s.number > 1) {
    // A bare number above 1 is a percentage without its sign or a
    // multiple: the message offers both readings, as percentages.
    return Status::InvalidArgument("'" + std::string(text) + "' is not a fraction from 0 to 1: write a percentage ('" +
                                   std::string(text) + "%', or '" + FormatSignificant(s.number * 100, 6) + "%' for " +
                                   std::string(text) + " times) or a fraction such as 0.1");
  }
  return s.number;
}

std::string FormatBytes(double bytes) {
  static const char* const kNames[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  if (std::fabs(bytes) < 999.5) return FormatFixed(bytes, 0) + " B";
  return ThreeDigits(bytes, kNames, 6, 1000);
}

std::string FormatRate(double bytes_per_s) { return FormatBytes(bytes_per_s) + "/s"; }

std::string FormatMinibatchRate(double minibatches_per_s) {
  return FormatNumber(minibatches_per_s) + " minibatches/s";
}

std::string FormatSeconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  // From under three hours, hours: 12345 s is "3.43 h", not "12300 s".
  if (a >= 1e4) {
    const double hours = seconds / 3600;
    return (a < 3.6e7 ? FormatSignificant(hours, 3) : FormatNumber(hours)) + " h";
  }
  struct Unit {
    double seconds;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
  int i = 0;
  while (i < 3 && a >= kUnits[i + 1].seconds) ++i;
  // 999.7 us rounds to 1000 at three digits: that is 1 ms.
  if (i < 3 && a / kUnits[i].seconds >= 999.5) ++i;
  return FormatSignificant(seconds / kUnits[i].seconds, 3) + " " + kUnits[i].name;
}

StatusOr<double> ParsePositiveRate(std::string_view text) {
  const size_t first = text.find_first_not_of(' ');
  const auto not_positive = [&] { return Status::OutOfRange("'" + std::string(text) + "' is not a positive rate"); };
  if (first != std::string_view::npos && text[first] == '-') return not_positive();
  PLUMBER_ASSIGN_OR_RETURN(double rate, ParseRate(text));
  if (!(rate > 0)) return not_positive();
  return rate;
}

}  // namespace plumber::units
