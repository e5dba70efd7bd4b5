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
