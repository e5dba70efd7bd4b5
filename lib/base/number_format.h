// How plumber prints a number in every report: one home, so that the same
// quantity reads the same in analyze, rank, rewrite, check, diff and the
// pictures. Units (bytes, rates, durations) are in units.h and use these.
// JSON is not written here: it keeps the full double.
//
// The one rule (FormatNumber): a number people read never has an exponent.
//   - [0.001, 10^4): four significant digits, trailing zeros dropped, as
//     printf's %.4g: "0.001234", "0.5", "25.25", "9999".
//   - 10^4 and up: three significant digits with an SI prefix, trailing
//     zeros dropped: "10k", "25.3k", "102M", "1.5G", "3T", "1P", "2E";
//     past the last prefix the digits grow: 10^21 is "1000E".
//   - below 0.001: three significant digits written out in decimals:
//     9.796e-06 is "0.0000098", 1e-7 is "0.0000001". A caller that knows
//     the unit shows such a value in a smaller unit instead (FormatSeconds:
//     "9.80 us").
//   - magnitudes below 10^-12 are the rounding noise of arithmetic on
//     doubles and print "0"; zero never prints as "-0" (-0.0 and -1e-15
//     are "0").
//   - negatives are the same with a minus sign: "-25.3k", "-0.5".
//   - not a number and infinities: "nan", "inf", "-inf".
#pragma once

#include <string>
#include <type_traits>

namespace plumber {

// The rule above: the numbers of analyze's and rank's tables, the findings
// and the pictures.
std::string FormatNumber(double v);
// A count with its noun, singular exactly when the number reads "1":
// FormatCount(1, "core", "cores") is "1 core", FormatCount(0.5, ...)
// "0.5 cores", FormatCount(2e4, ...) "20k cores".
// The one helper for "N thing(s)": every report says "1 core", "2 cores",
// never "1 cores" nor "core(s)". With `digits`, the number is
// FormatSignificant's at that many digits: (6.2431, ..., 3) "6.24 cores".
std::string FormatCount(double v, const std::string& one, const std::string& many, int digits = 0);
// A whole count is written out in full, since it counts things a reader
// may look for (records, nodes, files): FormatCount(12345, "record",
// "records") is "12345 records", FormatCount(1, "node", "nodes") "1 node".
std::string FormatWholeCount(long long n, const std::string& one, const std::string& many);
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
std::string FormatCount(T n, const std::string& one, const std::string& many) {
  return FormatWholeCount(static_cast<long long>(n), one, many);
}
// A share as a percentage by FormatNumber: 0.125 -> "12.5%".
std::string FormatPercent(double share);
// <digits> significant digits written out, trailing zeros dropped, never an
// exponent nor a prefix: (1234.5, 4) "1235", (1.5e6, 4) "1500000", (5e-4, 2)
// "0.0005". For values a reader may type back (a target, a price); the
// same noise floor and no "-0" as FormatNumber.
std::string FormatSignificant(double v, int digits = 4);
// printf's %.<decimals>f, but never "-0" ("-0.00" is "0.00").
std::string FormatFixed(double v, int decimals);
// About three significant digits, never an exponent: 0 decimals from 100,
// 1 from 10, else 2 ("412", "41.2", "4.12").
std::string FormatRounded(double v);
// A relative change: 0.125 -> "+12.5%"; from +-1000% whole percents with
// thousands separators (75263 -> "+7,526,300%"); no change, or one that
// rounds to none, is "+0.0%", never "-0.0%".
std::string FormatChange(double share);

}  // namespace plumber
