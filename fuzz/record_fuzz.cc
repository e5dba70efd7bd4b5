// Fuzzes TFRecord framing: no crash, no allocation beyond the input, and
// every record returned lies inside the input.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "traceio/record_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = NewMemorySequentialFile(bytes, "fuzz.tfrecord");
  RecordReader reader(file.get(), size, 0);
  std::string record;
  size_t total = 0;
  while (reader.Read(&record)) {
    total += record.size() + kRecordHeaderBytes + kRecordFooterBytes;
    if (total > size) std::abort();
  }
  if (reader.torn() && reader.torn_offset() > size) std::abort();
  return 0;
}
