// Whole-buffer compression and decompression: gzip and zlib (zlib), zstd
// (libzstd). Used by the readers' compression option, the decompress UDF op,
// and tests that build compressed inputs.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace plumber::runtime {

enum class Codec { kNone, kGzip, kZlib, kZstd };

// "", "GZIP"/"gzip", "ZLIB"/"zlib", "zstd"/"ZSTD".
StatusOr<Codec> ParseCodec(std::string_view name);

// Errors say what is wrong with the stream; callers add the file name.
StatusOr<std::string> Decompress(Codec codec, std::string_view data);
StatusOr<std::string> Compress(Codec codec, std::string_view data);

}  // namespace plumber::runtime
