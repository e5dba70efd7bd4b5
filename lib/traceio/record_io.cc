// TFRecord framing, read and write.
#include "traceio/record_io.h"

#include <cstring>

#include "base/crc32c.h"

namespace plumber {
namespace {

void PutLE64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutLE32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t GetLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string FrameRecord(std::string_view payload) {
  std::string out(kRecordHeaderBytes + payload.size() + kRecordFooterBytes, '\0');
  PutLE64(out.data(), payload.size());
  PutLE32(out.data() + 8, crc32c::Mask(crc32c::Value(out.data(), 8)));
  std::memcpy(out.data() + kRecordHeaderBytes, payload.data(), payload.size());
  PutLE32(out.data() + kRecordHeaderBytes + payload.size(), crc32c::Mask(crc32c::Value(payload)));
  return out;
}

Status RecordWriter::AddRecord(std::string_view payload) {
  char header[kRecordHeaderBytes];
  PutLE64(header, payload.size());
  PutLE32(header + 8, crc32c::Mask(crc32c::Value(header, 8)));
  char footer[kRecordFooterBytes];
  PutLE32(footer, crc32c::Mask(crc32c::Value(payload)));
  PLUMBER_RETURN_IF_ERROR(file_->Append(std::string_view(header, sizeof(header))));
  PLUMBER_RETURN_IF_ERROR(file_->Append(payload));
  return file_->Append(std::string_view(footer, sizeof(footer)));
}

RecordReader::RecordReader(SequentialFile* file, uint64_t file_size, uint64_t start_offset)
    : file_(file), file_size_(file_size), offset_(start_offset) {}

bool RecordReader::Torn() {
  torn_ = true;
  torn_offset_ = record_offset_;
  return false;
}

bool RecordReader::Fail(Status s) {
  status_ = std::move(s);
  return false;
}

Status RecordReader::ReadExactly(size_t n, std::string_view* out) {
  if (scratch_.size() < n) scratch_.resize(n);
  // Gathers short reads (env.h): only the end of the file stops it.
  PLUMBER_RETURN_IF_ERROR(ReadFully(file_, n, out, scratch_.data()));
  if (out->size() != n) {
    // file_size_ said the record was all there when the reader began.
    return Status::Corruption(file_->path() + ": record " + std::to_string(index_) + " at offset " +
                              std::to_string(record_offset_) + ": the file ends inside it (it shrank from " +
                              std::to_string(file_size_) + " bytes while being read)");
  }
  return Status::OK();
}

bool RecordReader::Read(std::string* payload) {
  if (!status_.ok() || torn_) return false;
  record_offset_ = offset_;
  const uint64_t left = file_size_ - offset_;
  if (left == 0) return false;
  const std::string where =
      file_->path() + ": record " + std::to_string(index_) + " at offset " + std::to_string(record_offset_);
  if (left < kRecordHeaderBytes) return Torn();
  std::string_view header;
  if (Status s = ReadExactly(kRecordHeaderBytes, &header); !s.ok()) return Fail(s);
  const uint64_t length = GetLE64(header.data());
  if (crc32c::Unmask(GetLE32(header.data() + 8)) != crc32c::Value(header.data(), 8)) {
    return Fail(Status::Corruption(where + ": the length field's checksum does not match"));
  }
  // Checked without overflow: a huge length is a torn tail, never an
  // allocation.
  if (length > left - kRecordHeaderBytes || left - kRecordHeaderBytes - length < kRecordFooterBytes) {
    return Torn();
  }
  if (length > max_payload_) {
    return Fail(Status::ResourceExhausted(where + ": the record holds " + std::to_string(length) +
                                          " bytes, more than the " + std::to_string(max_payload_) +
                                          " this reader may hold in memory"));
  }
  std::string_view body;
  if (Status s = ReadExactly(length + kRecordFooterBytes, &body); !s.ok()) return Fail(s);
  const uint32_t expected = crc32c::Unmask(GetLE32(body.data() + length));
  if (expected != crc32c::Value(body.data(), length)) {
    return Fail(Status::Corruption(where + ": the payload's checksum does not match"));
  }
  payload->assign(body.data(), length);
  offset_ += kRecordHeaderBytes + length + kRecordFooterBytes;
  ++index_;
  return true;
}

}  // namespace plumber
