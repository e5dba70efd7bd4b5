// Fuzzes the pipeline reader (JSON and binary), the validator and the
// program graph. A pipeline that validates must survive a JSON round trip
// unchanged and build a graph whose order puts every node after its
// children; one that does not validate must not build a graph.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pipeline/program_graph.h"
#include "pipeline/validate.h"
#include "traceio/pipeline_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto pipeline = ParsePipeline(bytes, "fuzz");
  if (!pipeline.ok()) return 0;
  (void)OutputNodeName(*pipeline);
  const bool valid = ValidatePipeline(*pipeline).empty();
  auto graph = ProgramGraph::Build(*pipeline, "fuzz");
  if (graph.ok() != valid) std::abort();
  if (!valid) return 0;
  const std::string json = SerializePipeline(*pipeline, Encoding::kJson);
  auto again = ParsePipeline(json, "fuzz.json");
  if (!again.ok() || SerializePipeline(*again, Encoding::kJson) != json) std::abort();
  std::vector<int> position(graph->size(), -1);
  int k = 0;
  for (int i : graph->topological_order()) position[i] = k++;
  for (int i = 0; i < graph->size(); ++i) {
    for (int j : graph->children(i)) {
      if (position[j] < 0 || position[j] >= position[i]) std::abort();
    }
  }
  return 0;
}
