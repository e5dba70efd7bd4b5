// Sizes ("300G", "512MiB"), rates ("100MB/s") and durations ("30s", "2m",
// "5ms"), parsed one way everywhere. Decimal suffixes (K, M, G, T, with or
// without B) are powers of 1000; binary ones (Ki, Mi, Gi, Ti, with or without
// B) are powers of 1024. A bare number is bytes, bytes per second, or
// seconds. In a rate a lowercase b (or "bit", "bps") means bits, as
// networks are sold: "10Gb/s" is 1.25 GB/s. Errors quote the text and say
// what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "status.h"

namespace plumber::units {

StatusOr<uint64_t> ParseBytes(std::string_view text);
// Bytes per second; the "/s" is optional.
StatusOr<double> ParseRate(std::string_view text);
StatusOr<double> ParseSeconds(std::string_view text);
// A share such as a tolerance: "10%" is 0.1; a bare number must be a
// fraction in [0, 1] ("0.1"), so "10" is refused rather than read as 1000%.
StatusOr<double> ParseFraction(std::string_view text);

// Human forms with three significant digits, never an exponent: "1.50 GB",
// "412 MB/s", "2.35 ms", "9.8 us"; durations from 10^4 s are in hours
// ("3.43 h").
std::string FormatBytes(double bytes);
std::string FormatRate(double bytes_per_s);
std::string FormatSeconds(double seconds);
// A pipeline's throughput by FormatNumber: "12.5 minibatches/s",
// "25.3k minibatches/s".
std::string FormatMinibatchRate(double minibatches_per_s);

// A rate that must be above zero, such as a network's. A number at or below
// zero ("0", "-1GB/s") is OutOfRange, so that the caller can say "must be
// positive" where ParseRate would call a sign "not a rate"; text that is no
// rate is InvalidArgument as for ParseRate.
StatusOr<double> ParsePositiveRate(std::string_view text);

}  // namespace plumber::units
