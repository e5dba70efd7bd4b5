// Fuzzes the pipeline reader (JSON and binary) and the validator. A pipeline
// that validates must survive a JSON round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "traceio/pipeline_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto pipeline = ParsePipeline(bytes, "fuzz");
  if (!pipeline.ok()) return 0;
  if (!ValidatePipeline(*pipeline).empty()) return 0;
  const std::string json = SerializePipeline(*pipeline, Encoding::kJson);
  auto again = ParsePipeline(json, "fuzz.json");
  if (!again.ok() || SerializePipeline(*again, Encoding::kJson) != json) std::abort();
  (void)OutputNodeName(*pipeline);
  return 0;
}
