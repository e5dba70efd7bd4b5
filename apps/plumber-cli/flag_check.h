// The checks of numeric flags, attached to each flag where it is declared
// (`->check(WholeNumber(1, kMaxCores))`), so that every subcommand refuses a
// value the same way and before it does any work: CLI11 prints
// "--cores: must be a whole number from 1 to 4096, got '2.5'" and plumber
// exits 2. The limits are what a run could use, and keep every duration
// within int64 nanoseconds (the traces' clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "base/status.h"

namespace plumber::cli {

// Cores a plan or a worker may have: more than any machine plumber plans
// for, and small enough that the rewrite's budget stays an int.
inline constexpr int64_t kMaxCores = 4096;
// The most minibatches a run may be asked for (run --batches).
inline constexpr int64_t kMaxBatches = 1'000'000'000'000;
// What gen writes at most: files, records (or lines) per file, records in
// all, pixels on each side of an image and pixels in all (ten million
// images at the default 256x256 are 0.66 of it). Test data past these is a
// typo more often than a wish, and a typo should not fill the disk.
inline constexpr int64_t kMaxGenFiles = 10'000;
inline constexpr int64_t kMaxGenRecordsPerFile = 1'000'000;
inline constexpr int64_t kMaxGenRecords = 10'000'000;
inline constexpr int kMaxGenImageSide = 8192;
inline constexpr double kMaxGenPixels = 1e12;
// The longest duration a flag takes: 100 days.
inline constexpr double kMaxFlagSeconds = 100 * 24 * 3600.0;
// The largest size (memory) and rate (bandwidth) a flag takes: 1 PB, 1 PB/s.
inline constexpr double kMaxFlagBytes = 1e15;

// Digits only, from lo to hi.
CLI::Validator WholeNumber(int64_t lo, int64_t hi);
// A duration as units::ParseSeconds reads it ("30s", "2m", "5ms"), above 0
// (or from 0 with `zero_ok`) and at most kMaxFlagSeconds.
CLI::Validator Duration(bool zero_ok = false);
// A size as units::ParseBytes reads it ("512M", "64G"), from 1 B to kMaxFlagBytes.
CLI::Validator Size();
// A rate as units::ParseRate reads it ("100MB/s", "10Gb/s"), above 0 and at most kMaxFlagBytes per second.
CLI::Validator Rate();
// Minibatches per second ("30", "30/s", "1.5K/s"), above 0 and at most a billion.
CLI::Validator MinibatchRate();
// A --window: START:END in seconds (either side may be left out), or one
// duration above 0; every time at most kMaxFlagSeconds.
CLI::Validator Window();
// A share as units::ParseFraction reads it ("10%", "0.1").
CLI::Validator Share();

// The value of a flag whose validator above accepted it, read with the same
// units:: parser (so it cannot fail then); nullopt when the flag was not
// given. Handlers convert with it instead of checking again.
template <typename T>
std::optional<T> Given(const std::string& text, StatusOr<T> (*parse)(std::string_view)) {
  if (text.empty()) return std::nullopt;
  auto v = parse(text);
  return v.ok() ? std::optional<T>(*v) : std::nullopt;
}

}  // namespace plumber::cli
