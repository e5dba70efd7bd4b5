// Fuzzes the analysis on strange traces: everything the CLI's analyze,
// rank and rewrite do after reading (window, model, GLPK programs, the
// rewriter, every report format). The input is a JSON trace, or the raw
// protobuf encoding of a Trace, which lets the mutator reach odd counter
// values directly (binary trace files are framed with CRCs, which
// mutations almost never get past). Only crashes, sanitizer reports and
// hangs are findings: odd data may be refused with a Status.
#include <cstdint>
#include <string_view>

#include "analysis/model.h"
#include "analysis/report.h"
#include "rewrite/planner.h"
#include "rewrite/rewriter.h"
#include "traceio/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  schema::Trace trace;
  if (IsTraceContent(bytes)) {
    auto parsed = ParseTrace(bytes, "fuzz");
    if (!parsed.ok()) return 0;
    trace = std::move(*parsed);
  } else if (!trace.ParseFromArray(data, static_cast<int>(size))) {
    return 0;
  }
  // Programs past this size only slow the fuzzer; huge DAGs have their own
  // tests.
  if (trace.header().program().nodes_size() > 200 || trace.snapshots_size() > 200) return 0;
  analysis::AnalysisOptions options;
  auto report = analysis::AnalyzeTrace(trace, options, "fuzz");
  if (!report.ok()) return 0;
  (void)analysis::FormatReportText(*report);
  (void)analysis::FormatReportJson(*report);
  (void)analysis::FormatReportMarkdown(*report);
  (void)analysis::FormatRankJson(*report, 5);
  if (!report->predicted_throughput) return 0;
  rewrite::PlanOptions as_traced;
  as_traced.structural_caps = false;
  as_traced.allow_cache = false;
  (void)rewrite::MakePlan(trace.header(), *report, as_traced);
  (void)rewrite::Rewrite(trace.header(), *report);
  return 0;
}
