// zlib and zstd behind one pair of functions.
#include "runtime/compression.h"

#include <zlib.h>
#include <zstd.h>

namespace plumber::runtime {

StatusOr<Codec> ParseCodec(std::string_view name) {
  if (name.empty()) return Codec::kNone;
  if (name == "GZIP" || name == "gzip") return Codec::kGzip;
  if (name == "ZLIB" || name == "zlib") return Codec::kZlib;
  if (name == "ZSTD" || name == "zstd") return Codec::kZstd;
  return Status::InvalidArgument("unknown compression '" + std::string(name) + "' (expected gzip, zlib or zstd)");
}

namespace {

// windowBits: 15 with +16 for a gzip wrapper.
int WindowBits(Codec codec) { return codec == Codec::kGzip ? 15 + 16 : 15; }

Status TooLarge(const char* codec, uint64_t max_bytes) {
  return Status::ResourceExhausted(std::string(codec) + " data: decompresses to more than " +
                                   std::to_string(max_bytes >> 20) +
                                   " MiB, the limit for data decompressed whole in memory");
}

StatusOr<std::string> Inflate(Codec codec, std::string_view data, uint64_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, WindowBits(codec)) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string msg = zs.msg ? zs.msg : "truncated or corrupt stream";
      inflateEnd(&zs);
      return Status::Corruption(std::string(codec == Codec::kGzip ? "gzip" : "zlib") + " data: " + msg +
                                " (at input byte " + std::to_string(zs.total_in) + ")");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      return TooLarge(codec == Codec::kGzip ? "gzip" : "zlib", max_bytes);
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return Status::Corruption(std::string(codec == Codec::kGzip ? "gzip" : "zlib") +
                                " data: the stream is truncated");
    }
  }
  inflateEnd(&zs);
  return out;
}

StatusOr<std::string> Deflate(Codec codec, std::string_view data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, WindowBits(codec), 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("deflate failed");
  return out;
}

}  // namespace

StatusOr<std::string> Decompress(Codec codec, std::string_view data, uint64_t max_bytes) {
  switch (codec) {
    case Codec::kNone:
      if (data.size() > max_bytes) return TooLarge("uncompressed", max_bytes);
      return std::string(data);
    case Codec::kGzip:
    case Codec::kZlib: return Inflate(codec, data, max_bytes);
    case Codec::kZstd: {
      ZSTD_DStream* ds = ZSTD_createDStream();
      ZSTD_initDStream(ds);
      ZSTD_inBuffer in{data.data(), data.size(), 0};
      std::string out;
      std::string buf(ZSTD_DStreamOutSize(), '\0');
      size_t rc = 1;
      while (in.pos < in.size) {
        ZSTD_outBuffer o{buf.data(), buf.size(), 0};
        rc = ZSTD_decompressStream(ds, &o, &in);
        if (ZSTD_isError(rc)) {
          std::string msg = ZSTD_getErrorName(rc);
          ZSTD_freeDStream(ds);
          return Status::Corruption("zstd data: " + msg);
        }
        out.append(buf.data(), o.pos);
        if (out.size() > max_bytes) {
          ZSTD_freeDStream(ds);
          return TooLarge("zstd", max_bytes);
        }
      }
      // Drain what the decoder still holds.
      while (rc != 0) {
        ZSTD_outBuffer o{buf.data(), buf.size(), 0};
        rc = ZSTD_decompressStream(ds, &o, &in);
        if (ZSTD_isError(rc) || o.pos == 0) break;
        out.append(buf.data(), o.pos);
        if (out.size() > max_bytes) {
          ZSTD_freeDStream(ds);
          return TooLarge("zstd", max_bytes);
        }
      }
      ZSTD_freeDStream(ds);
      if (rc != 0) return Status::Corruption("zstd data: the stream is truncated");
      return out;
    }
  }
  return Status::Internal("unknown codec");
}

StatusOr<std::string> Compress(Codec codec, std::string_view data) {
  switch (codec) {
    case Codec::kNone: return std::string(data);
    case Codec::kGzip:
    case Codec::kZlib: return Deflate(codec, data);
    case Codec::kZstd: {
      std::string out(ZSTD_compressBound(data.size()), '\0');
      const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
      if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return out;
    }
  }
  return Status::Internal("unknown codec");
}

}  // namespace plumber::runtime
