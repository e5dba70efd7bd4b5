// CRC32C: slicing-by-8 with tables computed at compile time, and on x86-64
// the SSE4.2 crc32 instruction over three interleaved streams.
#include "crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PLUMBER_CRC32C_X86 1
#include <nmmintrin.h>
#endif

namespace plumber::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reversed Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s) {
    for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint32_t LoadLE32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

#ifdef PLUMBER_CRC32C_X86

// The register state after a block B, begun from state s, is the state B
// gives from 0 xor s moved through |B| zero bytes (CRCs are linear over
// GF(2)). Three streams of kStride bytes run at once, since the
// instruction takes three cycles and issues every cycle; their states are
// joined with the zero-byte operator for kStride bytes, applied a byte of
// the state at a time by table. Shorter buffers use the kShort stride.
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;

using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

struct HardwareTables {
  ShiftTable long_shift;
  ShiftTable short_shift;
};

[[gnu::target("sse4.2")]] inline uint64_t Crc64(uint64_t c, const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // unaligned
  return _mm_crc32_u64(c, v);
}

// The operator's image of every byte value in every byte position of the
// state, computed by running the instruction over `bytes` zero bytes.
[[gnu::target("sse4.2")]] void MakeShiftTable(size_t bytes, ShiftTable* t) {
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint64_t c = uint64_t{b} << (8 * k);
      for (size_t i = 0; i < bytes; i += 8) c = _mm_crc32_u64(c, 0);
      (*t)[static_cast<size_t>(k)][b] = static_cast<uint32_t>(c);
    }
  }
}

const HardwareTables& GetHardwareTables() {
  static const HardwareTables tables = [] {
    HardwareTables t;
    MakeShiftTable(kLong, &t.long_shift);
    MakeShiftTable(kShort, &t.short_shift);
    return t;
  }();
  return tables;
}

inline uint32_t Shift(const ShiftTable& t, uint32_t c) {
  return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

// `c` is the raw register state (no inversion); returns the state after
// n bytes of p, in strides of three streams of `stride` bytes.
[[gnu::target("sse4.2")]] uint64_t Streams(uint64_t c, const unsigned char*& p, size_t& n, size_t stride,
                                           const ShiftTable& shift) {
  while (n >= 3 * stride) {
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    const unsigned char* end = p + stride;
    do {
      c = Crc64(c, p);
      c1 = Crc64(c1, p + stride);
      c2 = Crc64(c2, p + 2 * stride);
      p += 8;
    } while (p < end);
    c = Shift(shift, static_cast<uint32_t>(c)) ^ c1;
    c = Shift(shift, static_cast<uint32_t>(c)) ^ c2;
    p += 2 * stride;
    n -= 3 * stride;
  }
  return c;
}

#endif  // PLUMBER_CRC32C_X86

bool DetectHardware() {
#ifdef PLUMBER_CRC32C_X86
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo = LoadLE32(p) ^ c;
    uint32_t hi = LoadLE32(p + 4);
    c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = kTables[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

#ifdef PLUMBER_CRC32C_X86
[[gnu::target("sse4.2")]] uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t c = static_cast<uint32_t>(~crc);
  const HardwareTables& t = GetHardwareTables();
  c = Streams(c, p, n, kLong, t.long_shift);
  c = Streams(c, p, n, kShort, t.short_shift);
  for (; n >= 8; n -= 8, p += 8) c = Crc64(c, p);
  auto c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}
#else
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) { return ExtendPortable(crc, data, n); }
#endif

bool HardwareAvailable() {
  static const bool available = DetectHardware();
  return available;
}

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  return HardwareAvailable() ? ExtendHardware(crc, data, n) : ExtendPortable(crc, data, n);
}

}  // namespace plumber::crc32c
