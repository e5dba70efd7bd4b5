// CRC32C (Castagnoli), as used by TFRecord framing, and the TFRecord mask
// that keeps a CRC of data containing CRCs from being trivially zero.
// Debian has no crc32c package; this is a portable slicing-by-8 version
// checked against the RFC 3720 vectors in tests/unit/crc32c_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace plumber::crc32c {

// CRC32C of data appended to a stream whose CRC so far is `crc`.
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

constexpr uint32_t kMaskDelta = 0xa282ead8u;

// Rotate right by 15 bits, then add a constant (TFRecord's masking).
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace plumber::crc32c
