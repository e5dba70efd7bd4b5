// Fuzzes the tf.data model importer (detection, both forms, text and
// binary, and the rebuilding of the program): any input is refused with a
// Status or becomes a trace whose program is valid and which serializes and
// parses back to itself. The input is imported alone and as two dumps of
// one run, so the merging of dumps is fuzzed too.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pipeline/program_graph.h"
#include "traceio/tf_model_import.h"
#include "traceio/trace_io.h"

namespace {

void Check(const plumber::StatusOr<plumber::schema::Trace>& trace) {
  using namespace plumber;
  if (!trace.ok()) return;
  if (!ProgramGraph::Build(trace->header().program(), "fuzz").ok()) std::abort();
  const std::string binary = SerializeTraceBinary(*trace);
  auto again = ParseTrace(binary, "fuzz.pb");
  if (!again.ok() || SerializeTraceBinary(*again) != binary) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)LooksLikeTfModel(bytes);
  Check(ImportTfModel({{"a.pb", bytes, std::nullopt}}, {}));
  ImportOptions window;
  window.window_seconds = 1.0;
  Check(ImportTfModel({{"a.pb", bytes, std::nullopt}, {"b.pb", bytes, std::nullopt}}, window));
  return 0;
}
