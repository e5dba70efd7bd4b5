// TFRecord framing: u64 little-endian length, masked CRC32C of those 8
// bytes, the payload, masked CRC32C of the payload. Used by trace files
// (after their magic) and by the runtime's TFRecord datasets.
//
// The reader never trusts a length it has not checksummed, and never
// allocates a length larger than what is left in the file: a file cut at
// any byte yields every complete record and then reports a torn tail.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/env.h"
#include "base/status.h"

namespace plumber {

constexpr size_t kRecordHeaderBytes = 12;  // length + its CRC
constexpr size_t kRecordFooterBytes = 4;   // payload CRC

// The framed bytes of one record.
std::string FrameRecord(std::string_view payload);

// Appends framed records to a file it does not own.
class RecordWriter {
 public:
  explicit RecordWriter(WritableFile* file) : file_(file) {}
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record; the caller decides when to Flush the file.
  Status AddRecord(std::string_view payload);

 private:
  WritableFile* file_;
};

// Reads framed records from a file it does not own.
class RecordReader {
 public:
  // `file` is positioned at `start_offset`; `file_size` bounds every length.
  RecordReader(SequentialFile* file, uint64_t file_size, uint64_t start_offset);
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record into *payload and returns true. Returns false at
  // the end of the file, at a torn tail (torn() is then true), or on
  // corruption or a read error (status() is then not OK, and names the
  // record's index and byte offset).
  bool Read(std::string* payload);

  // Refuses (ResourceExhausted) any record longer than `bytes` before it is
  // read: a reader that must hold records in memory sets its ceiling here.
  void set_max_payload(uint64_t bytes) { max_payload_ = bytes; }

  const Status& status() const { return status_; }
  bool torn() const { return torn_; }
  // Where the incomplete record starts, when torn().
  uint64_t torn_offset() const { return torn_offset_; }
  // Records returned so far.
  uint64_t records_read() const { return index_; }
  // Offset of the record last returned (or being read when an error struck).
  uint64_t record_offset() const { return record_offset_; }
  // Offset just past the last complete record.
  uint64_t offset() const { return offset_; }

 private:
  bool Torn();
  bool Fail(Status s);
  // Reads exactly n bytes into scratch_, or reports a short read.
  Status ReadExactly(size_t n, std::string_view* out);

  SequentialFile* file_;
  uint64_t file_size_;
  uint64_t offset_;
  uint64_t record_offset_ = 0;
  uint64_t index_ = 0;
  bool torn_ = false;
  uint64_t torn_offset_ = 0;
  uint64_t max_payload_ = UINT64_MAX;
  Status status_;
  std::string scratch_;
};

}  // namespace plumber
