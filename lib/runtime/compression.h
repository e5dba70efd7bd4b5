// Whole-buffer compression and decompression: gzip and zlib (zlib), zstd
// (libzstd). Used by the readers' compression option, the decompress UDF op,
// and tests that build compressed inputs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace plumber::runtime {

enum class Codec { kNone, kGzip, kZlib, kZstd };

// "", "GZIP"/"gzip", "ZLIB"/"zlib", "zstd"/"ZSTD".
StatusOr<Codec> ParseCodec(std::string_view name);

// Data is decompressed whole in memory, so its size is bounded: a few
// kilobytes of hostile gzip can expand to terabytes.
inline constexpr uint64_t kMaxDecompressedBytes = uint64_t{4} << 30;

// Errors say what is wrong with the stream; callers add the file name.
// Output beyond max_bytes is ResourceExhausted.
StatusOr<std::string> Decompress(Codec codec, std::string_view data,
                                 uint64_t max_bytes = kMaxDecompressedBytes);
StatusOr<std::string> Compress(Codec codec, std::string_view data);

}  // namespace plumber::runtime
