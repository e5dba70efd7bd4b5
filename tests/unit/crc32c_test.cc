// CRC32C against the RFC 3720 (iSCSI) test vectors, and the TFRecord mask.
#include <catch2/catch.hpp>

#include <string>

#include "base/crc32c.h"

using namespace plumber;

TEST_CASE("crc32c matches the RFC 3720 test vectors", "[crc32c]") {
  std::string buf(32, '\0');
  CHECK(crc32c::Value(buf) == 0x8a9136aau);
  buf.assign(32, '\xff');
  CHECK(crc32c::Value(buf) == 0x62a8ab43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(i);
  CHECK(crc32c::Value(buf) == 0x46dd794eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(31 - i);
  CHECK(crc32c::Value(buf) == 0x113fdb5cu);
  // An iSCSI SCSI Read (10) command PDU.
  const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  CHECK(crc32c::Value(reinterpret_cast<const char*>(pdu), sizeof(pdu)) == 0xd9963a56u);
}

TEST_CASE("crc32c of the standard check string", "[crc32c]") {
  CHECK(crc32c::Value(std::string("123456789")) == 0xe3069283u);
}

TEST_CASE("crc32c extends across split buffers", "[crc32c]") {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const uint32_t whole = crc32c::Value(data);
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    uint32_t part = crc32c::Value(data.data(), cut);
    CHECK(crc32c::Extend(part, data.data() + cut, data.size() - cut) == whole);
  }
}

TEST_CASE("crc32c mask round trips and changes the value", "[crc32c]") {
  for (uint32_t crc : {0u, 1u, 0x8a9136aau, 0xffffffffu}) {
    CHECK(crc32c::Unmask(crc32c::Mask(crc)) == crc);
    CHECK(crc32c::Mask(crc) != crc);
  }
  // TFRecord's mask: rotate right by 15, add 0xa282ead8.
  CHECK(crc32c::Mask(0x00008000u) == 0x00000001u + 0xa282ead8u);
}

TEST_CASE("crc32c: the hardware and portable versions agree on every length and alignment", "[crc32c]") {
  if (!crc32c::HardwareAvailable()) {
    WARN("no crc32 instruction on this machine: only the portable version is checked");
    return;
  }
  // Long enough for the three 8 KiB streams, the 256-byte ones and the
  // tails, from every offset modulo 8.
  std::string data(3 * 8192 * 2 + 3 * 256 + 64, '\0');
  uint32_t x = 12345;
  for (auto& ch : data) {
    x = x * 1103515245u + 12345u;
    ch = static_cast<char>(x >> 24);
  }
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{255}, size_t{768}, size_t{769},
                     size_t{3 * 256 + 15}, size_t{3 * 8192}, size_t{3 * 8192 + 3 * 256 + 9},
                     data.size() - offset}) {
      INFO("offset " << offset << ", length " << n);
      const uint32_t seed = static_cast<uint32_t>(n * 2654435761u);
      CHECK(crc32c::ExtendHardware(seed, data.data() + offset, n) ==
            crc32c::ExtendPortable(seed, data.data() + offset, n));
    }
  }
  // The RFC's check value through the hardware path alone.
  CHECK(crc32c::ExtendHardware(0, "123456789", 9) == 0xe3069283u);
}
