// The numeric flag checks; see flag_check.h.
#include "flag_check.h"

#include <charconv>
#include <cmath>
#include <string>

#include "base/units.h"

namespace plumber::cli {
namespace {

std::string Got(const std::string& text) { return ", got '" + text + "'"; }

}  // namespace

CLI::Validator WholeNumber(int64_t lo, int64_t hi) {
  const std::string want = "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, want](std::string& text) -> std::string {
        int64_t v = 0;
        const char* begin = text.data();
        const char* end = text.data() + text.size();
        if (begin != end && *begin == '+') ++begin;
        auto [ptr, ec] = std::from_chars(begin, end, v);
        // Out of int64 or off the range alike: the message gives the range,
        // never the number as a double.
        if (begin == end || ec != std::errc() || ptr != end || v < lo || v > hi) return want + Got(text);
        return std::string();
      },
      "", "whole number");
}

CLI::Validator Duration(bool zero_ok) {
  const std::string want = std::string("must be a duration ") + (zero_ok ? "from 0" : "above 0") +
                           " up to 100 days, e.g. 30s, 2m or 5ms";
  return CLI::Validator(
      [zero_ok, want](std::string& text) -> std::string {
        auto s = units::ParseSeconds(text);
        if (!s.ok() || !(*s >= 0) || (!zero_ok && *s == 0) || *s > kMaxFlagSeconds) return want + Got(text);
        return std::string();
      },
      "", "duration");
}

CLI::Validator Size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto b = units::ParseBytes(text);
        if (!b.ok() || *b == 0 || static_cast<double>(*b) > kMaxFlagBytes) {
          return "must be a size from 1 B to 1 PB, e.g. 512M or 64G" + Got(text);
        }
        return std::string();
      },
      "", "size");
}

CLI::Validator Rate() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto r = units::ParseRate(text);
        if (!r.ok() || !(*r > 0) || *r > kMaxFlagBytes) {
          return "must be a rate above 0 up to 1 PB/s, e.g. 100MB/s or 10Gb/s" + Got(text);
        }
        return std::string();
      },
      "", "rate");
}

CLI::Validator MinibatchRate() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto r = units::ParseRate(text);
        if (!r.ok() || !(*r > 0) || *r > 1e9) {
          return "must be minibatches per second above 0 up to a billion, e.g. 30 or 30/s" + Got(text);
        }
        return std::string();
      },
      "", "minibatch rate");
}

CLI::Validator Window() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto in_range = [](std::string_view t, bool zero_ok) {
          auto s = units::ParseSeconds(t);
          return s.ok() && *s >= 0 && (zero_ok || *s > 0) && *s <= kMaxFlagSeconds;
        };
        const size_t colon = text.find(':');
        const std::string_view t = text;
        const bool ok = colon == std::string::npos
                            ? in_range(t, false)
                            : (colon == 0 || in_range(t.substr(0, colon), true)) &&
                                  (colon + 1 == t.size() || in_range(t.substr(colon + 1), true));
        if (!ok) {
          return "must be START:END in seconds, e.g. 2:10, or for an imported dump the time its counters cover, "
                 "e.g. 30s; times up to 100 days" +
                 Got(text);
        }
        return std::string();
      },
      "", "window");
}

CLI::Validator Share() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto s = units::ParseFraction(text);
        if (!s.ok()) return s.status().message();
        return std::string();
      },
      "", "share");
}

}  // namespace plumber::cli
