// TFRecord framing: every complete record survives a cut at any byte; any
// flipped payload byte is reported as corruption of that record; a lying
// length never drives an allocation.
#include <catch2/catch.hpp>

#include "base/crc32c.h"
#include "traceio/record_io.h"

using namespace plumber;

namespace {

std::vector<std::string> Payloads() {
  return {"", "a", std::string(100, 'x'), "hello world", std::string(3000, '\x7f')};
}

struct ReadAll {
  std::vector<std::string> records;
  bool torn = false;
  uint64_t torn_offset = 0;
  Status status;
};

ReadAll Read(const std::string& bytes) {
  auto file = NewMemorySequentialFile(bytes, "mem.tfrecord");
  RecordReader reader(file.get(), bytes.size(), 0);
  ReadAll out;
  std::string rec;
  while (reader.Read(&rec)) out.records.push_back(rec);
  out.torn = reader.torn();
  out.torn_offset = reader.torn_offset();
  out.status = reader.status();
  return out;
}

}  // namespace

TEST_CASE("framing matches the TFRecord layout", "[record_io]") {
  const std::string framed = FrameRecord("abc");
  REQUIRE(framed.size() == 8 + 4 + 3 + 4);
  CHECK(framed[0] == 3);
  for (int i = 1; i < 8; ++i) CHECK(framed[i] == 0);
  uint32_t len_crc = 0;
  for (int i = 3; i >= 0; --i) len_crc = (len_crc << 8) | static_cast<unsigned char>(framed[8 + i]);
  CHECK(crc32c::Unmask(len_crc) == crc32c::Value(framed.data(), 8));
  CHECK(framed.substr(12, 3) == "abc");
}

TEST_CASE("a file cut at every byte yields exactly the complete records", "[record_io]") {
  std::string bytes;
  std::vector<size_t> ends;
  for (const auto& p : Payloads()) {
    bytes += FrameRecord(p);
    ends.push_back(bytes.size());
  }
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    ReadAll r = Read(bytes.substr(0, cut));
    size_t complete = 0;
    while (complete < ends.size() && ends[complete] <= cut) ++complete;
    INFO("cut at " << cut);
    REQUIRE(r.status.ok());
    REQUIRE(r.records.size() == complete);
    for (size_t i = 0; i < complete; ++i) CHECK(r.records[i] == Payloads()[i]);
    const bool at_boundary = cut == 0 || (complete > 0 && ends[complete - 1] == cut);
    CHECK(r.torn == !at_boundary);
    if (r.torn) CHECK(r.torn_offset == (complete == 0 ? 0 : ends[complete - 1]));
  }
}

TEST_CASE("flipping any payload byte is corruption of that record", "[record_io]") {
  std::string bytes = FrameRecord("first record") + FrameRecord("second record payload") + FrameRecord("third");
  const size_t second_start = FrameRecord("first record").size();
  const size_t payload_start = second_start + kRecordHeaderBytes;
  const size_t payload_len = std::string("second record payload").size();
  for (size_t i = payload_start; i < payload_start + payload_len; ++i) {
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      ReadAll r = Read(bad);
      INFO("byte " << i);
      REQUIRE(r.records.size() == 1);
      REQUIRE(r.status.code() == Status::Code::kCorruption);
      CHECK_THAT(r.status.message(),
                 Catch::Contains("record 1 at offset " + std::to_string(second_start)) &&
                     Catch::Contains("payload's checksum"));
    }
  }
}

TEST_CASE("flipping a length byte is corruption, not a huge read", "[record_io]") {
  std::string bytes = FrameRecord("payload");
  for (size_t i = 0; i < 12; ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x40);
    ReadAll r = Read(bad);
    INFO("byte " << i);
    CHECK(r.records.empty());
    CHECK(r.status.code() == Status::Code::kCorruption);
    CHECK_THAT(r.status.message(), Catch::Contains("record 0 at offset 0"));
  }
}

TEST_CASE("a checksummed length larger than the file is a torn tail", "[record_io]") {
  // A valid header announcing 2^60 bytes: the reader must not try to
  // allocate it (under ASan this would abort).
  std::string header(12, '\0');
  const uint64_t huge = uint64_t{1} << 60;
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((huge >> (8 * i)) & 0xff);
  uint32_t masked = crc32c::Mask(crc32c::Value(header.data(), 8));
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((masked >> (8 * i)) & 0xff);
  ReadAll r = Read(FrameRecord("ok") + header + "tail");
  CHECK(r.status.ok());
  CHECK(r.records.size() == 1);
  CHECK(r.torn);
  CHECK(r.torn_offset == FrameRecord("ok").size());
}
