// CRC32C (Castagnoli), as used by TFRecord framing, and the TFRecord mask
// that keeps a CRC of data containing CRCs from being trivially zero.
// Debian has no crc32c package. On x86-64 with SSE4.2 (checked at run time)
// three streams of the CPU's crc32 instruction run interleaved; elsewhere a
// portable slicing-by-8 version. Reading TFRecords checks every byte, and
// at about a byte a cycle the portable version was over half the CPU of a
// reader (perf, 2026-12-02); tf.data's reader uses the instruction too, so
// the runtime would misstate what reading costs without it. Both paths are
// checked against the RFC 3720 vectors and each other in
// tests/unit/crc32c_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace plumber::crc32c {

// CRC32C of data appended to a stream whose CRC so far is `crc`.
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

// The two implementations Extend picks from, for tests and benchmarks:
// ExtendHardware may only be called when HardwareAvailable().
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n);
bool HardwareAvailable();

constexpr uint32_t kMaskDelta = 0xa282ead8u;

// Rotate right by 15 bits, then add a constant (TFRecord's masking).
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace plumber::crc32c
