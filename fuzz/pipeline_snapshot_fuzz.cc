// Fuzzes the PipelineSnapshot importer (detection, the graph walk, the
// number checks) on arbitrary bytes: it must never crash, and whatever it
// imports must be a trace whose program is valid, that serializes and
// parses back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pipeline/program_graph.h"
#include "traceio/import.h"
#include "traceio/pipeline_snapshot_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!LooksLikePipelineSnapshot(bytes)) return 0;
  auto trace = ImportDumps({{"fuzz.pb", bytes, std::nullopt}}, {});
  if (!trace.ok()) return 0;
  if (!ProgramGraph::Build(trace->header().program(), "fuzz.pb").ok()) std::abort();
  const std::string out = trace->SerializeAsString();
  schema::Trace again;
  if (!again.ParseFromString(out) || again.SerializeAsString() != out) std::abort();
  return 0;
}
