// Fuzzes the trace reader (binary framing and JSON) and the trace checks.
// Whatever parses must serialize and parse back to the same records.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "traceio/trace_check.h"
#include "traceio/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  TraceReadReport report;
  auto trace = ParseTrace(bytes, "fuzz", &report);
  if (!trace.ok()) return 0;
  (void)ValidateTrace(*trace);
  if (!trace->has_header()) return 0;
  const std::string binary = SerializeTraceBinary(*trace);
  auto again = ParseTrace(binary, "fuzz.pb");
  if (!again.ok() || SerializeTraceBinary(*again) != binary) std::abort();
  return 0;
}
