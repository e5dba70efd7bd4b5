// Fuzzes the analysis on strange traces: everything analyze, rank, rewrite
// and provision (one machine and --workers) do after reading (program
// graph, window, model, GLPK programs, the rewriter, every report format).
//
// Input: one byte n, then n edits of three bytes each, then the trace (JSON,
// or the raw protobuf encoding of a Trace, which lets the mutator reach odd
// counter values: binary trace files are framed with CRCs that mutations
// almost never get past). The edits rewire the traced program (an input,
// the declared output, an interleave's function) to another node's name or
// to a name no node has, so that the mutator reaches cycles, self loops and
// dangling edges, which byte flips inside names almost never produce. Only
// crashes, sanitizer reports and hangs are findings: odd data may be refused
// with a Status.
#include <cstdint>
#include <string_view>

#include "analysis/analyze.h"
#include "analysis/plan.h"
#include "analysis/service_plan.h"
#include "pipeline/op_table.h"
#include "report/analysis_format.h"
#include "report/graph.h"
#include "report/rewrite_format.h"
#include "report/service_format.h"
#include "rewrite/rewriter.h"
#include "traceio/trace_io.h"

namespace {

using namespace plumber;

void Rewire(schema::Pipeline* p, uint8_t kind, uint8_t a, uint8_t b) {
  const int n = p->nodes_size();
  if (n == 0) return;
  schema::Node* node = p->mutable_nodes(a % n);
  const std::string name = b % (n + 1) == n ? "no-such-node" : p->nodes(b % (n + 1)).name();
  switch (kind % 4) {
    case 0:  // one of its inputs, or a new one
      if (node->inputs_size() > 0) {
        node->set_inputs(b % node->inputs_size(), name);
      } else {
        node->add_inputs(name);
      }
      break;
    case 1: p->set_output(name); break;
    case 2:
      if (const OpDef* op = FindOp(node->op()); op != nullptr && op->has_function()) op->set_function(node, name);
      break;
    case 3: node->clear_inputs(); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t edits = data[0] % 8;
  if (size < 1 + 3 * edits) return 0;
  const uint8_t* edit = data + 1;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1 + 3 * edits), size - 1 - 3 * edits);
  schema::Trace trace;
  if (IsTraceContent(bytes)) {
    auto parsed = ParseTrace(bytes, "fuzz");
    if (!parsed.ok()) return 0;
    trace = std::move(*parsed);
  } else if (!trace.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return 0;
  }
  // Programs past this size only slow the fuzzer; huge DAGs have their own
  // tests.
  if (trace.header().program().nodes_size() > 200 || trace.snapshots_size() > 200) return 0;
  for (size_t e = 0; e < edits; ++e) {
    Rewire(trace.mutable_header()->mutable_program(), edit[3 * e], edit[3 * e + 1], edit[3 * e + 2]);
  }
  analysis::AnalysisOptions options;
  options.solve_programs = true;
  auto a = analysis::AnalyzeTrace(trace, options, "fuzz");
  if (!a.ok()) return 0;
  (void)report::FormatAnalysisText(*a);
  (void)report::FormatAnalysisJson(*a);
  (void)report::FormatAnalysisMarkdown(*a);
  (void)report::FormatRankJson(*a, 5);
  (void)report::FormatDot(*a);
  (void)report::FormatHtml(*a);
  if (!a->predicted_throughput) return 0;
  auto rewritten = rewrite::Rewrite(*a);
  if (rewritten.ok()) (void)report::RewriteText(*a, *rewritten, "fuzz", "");
  (void)analysis::PlanProvisioning(*a, 2 * *a->predicted_throughput, lp::ResourcePrices{});
  analysis::ServiceRequest service;
  service.target = 10 * *a->predicted_throughput;
  service.worker_network_bytes_per_s = 1.25e9;
  if (auto plan = analysis::PlanService(*a, *a, service); plan.ok()) {
    (void)report::FormatServiceText("fuzz", *plan);
    (void)report::FormatServiceJson("fuzz", *plan);
  }
  return 0;
}
