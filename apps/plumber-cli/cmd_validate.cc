// plumber validate FILE: says what the file is (pipeline or trace), lists
// its nodes (and for a trace its machine and snapshots), and reports every
// problem found. Exit 0 when valid, 2 with one line per problem otherwise.
// --format json says the same as one object for scripts.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/units.h"
#include "command.h"
#include "pipeline/op_table.h"
#include "pipeline/validate.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_check.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

const char* EncodingName(Encoding e) { return e == Encoding::kJson ? "JSON" : "binary"; }

std::string Inputs(const schema::Node& n) {
  std::string out;
  for (const auto& in : n.inputs()) out += (out.empty() ? "" : ",") + in;
  if (const std::string* fn = NodeFunction(n)) out += (out.empty() ? "" : ",") + std::string("fn=") + *fn;
  return out.empty() ? "-" : out;
}

void PrintNodes(const schema::Pipeline& p) {
  size_t width = 4;
  for (const auto& n : p.nodes()) width = std::max(width, n.name().size());
  std::printf("  %-*s  %-12s  %-11s  %s\n", static_cast<int>(width), "NODE", "OP", "PARALLELISM", "INPUTS");
  for (const auto& n : p.nodes()) {
    std::printf("  %-*s  %-12s  %-11d  %s\n", static_cast<int>(width), n.name().c_str(), n.op().c_str(),
                NodeParallelism(n), Inputs(n).c_str());
  }
}

int Report(const std::string& path, const std::vector<Problem>& problems) {
  if (problems.empty()) {
    std::printf("valid\n");
    return kExitOk;
  }
  std::fflush(stdout);
  for (const auto& p : problems) std::cerr << "plumber: error: " << path << ": " << p.ToString() << "\n";
  std::cerr << "plumber: error: " << path << ": " << problems.size() << " problem(s)\n";
  return kExitBadInput;
}

int ValidatePipelineFile(const std::string& path, std::string_view bytes) {
  auto pipeline = ParsePipeline(bytes, path);
  if (!pipeline.ok()) return ReportError(pipeline.status());
  std::printf("%s: pipeline '%s' (%s), %d node(s), output '%s'\n", path.c_str(), pipeline->name().c_str(),
              EncodingName(DetectEncoding(bytes)), pipeline->nodes_size(), OutputNodeName(*pipeline).c_str());
  PrintNodes(*pipeline);
  return Report(path, ValidatePipeline(*pipeline));
}

int ValidateTraceFile(const std::string& path, std::string_view bytes) {
  TraceReadReport report;
  auto trace = ParseTrace(bytes, path, &report);
  if (!trace.ok()) return ReportError(trace.status());
  const auto& h = trace->header();
  std::printf("%s: trace (%s), %llu record(s), written by plumber %s\n", path.c_str(), EncodingName(report.encoding),
              static_cast<unsigned long long>(report.records),
              h.tool_version().empty() ? "?" : h.tool_version().c_str());
  if (trace->has_header()) {
    std::printf("  program: '%s', %d node(s), output '%s'\n", h.program().name().c_str(), h.program().nodes_size(),
                OutputNodeName(h.program()).c_str());
    std::printf("  machine: %d core(s), %s memory (%s available)", h.machine().cores(),
                units::FormatBytes(static_cast<double>(h.machine().memory_bytes())).c_str(),
                units::FormatBytes(static_cast<double>(h.machine().available_memory_bytes())).c_str());
    if (h.machine().read_bandwidth_bytes_per_s() > 0) {
      std::printf(", reads throttled to %s", units::FormatRate(h.machine().read_bandwidth_bytes_per_s()).c_str());
    }
    if (h.machine().read_latency_ns() > 0) {
      std::printf(", read latency %s", units::FormatSeconds(h.machine().read_latency_ns() * 1e-9).c_str());
    }
    std::printf("\n");
    const int n = trace->snapshots_size();
    const double span = n > 0 ? trace->snapshots(n - 1).wall_ns() * 1e-9 : 0.0;
    std::printf("  snapshots: %d, the last at %s; end: %s\n", n, units::FormatSeconds(span).c_str(),
                trace->has_end() ? trace->end().status().c_str() : "none (the run did not finish its trace)");
    PrintNodes(h.program());
  }
  if (!report.warning.empty()) {
    std::fflush(stdout);
    Warn(report.warning);
  }
  return Report(path, ValidateTrace(*trace));
}

nlohmann::ordered_json NodesJson(const schema::Pipeline& p) {
  auto nodes = nlohmann::ordered_json::array();
  for (const auto& n : p.nodes()) {
    nodes.push_back({{"name", n.name()}, {"op", n.op()}, {"parallelism", NodeParallelism(n)},
                     {"inputs", std::vector<std::string>(n.inputs().begin(), n.inputs().end())}});
    if (const std::string* fn = NodeFunction(n)) nodes.back()["function"] = *fn;
  }
  return nodes;
}

// {"path", "kind", "encoding", "valid", "problems": [...], "program": {"name", "output", "nodes": [...]}}
// plus "machine", "snapshots", "end" and "warning" for traces. Exit codes as for text.
int ValidateJson(const std::string& path, std::string_view bytes) {
  nlohmann::ordered_json j;
  j["path"] = path;
  std::vector<Problem> problems;
  const schema::Pipeline* program = nullptr;
  schema::Trace trace;
  schema::Pipeline pipeline;
  if (IsTraceContent(bytes)) {
    TraceReadReport report;
    auto t = ParseTrace(bytes, path, &report);
    if (!t.ok()) return ReportError(t.status());
    trace = std::move(*t);
    j["kind"] = "trace";
    j["encoding"] = EncodingName(report.encoding);
    const auto& m = trace.header().machine();
    j["machine"] = {{"cores", m.cores()},
                    {"memory_bytes", m.memory_bytes()},
                    {"available_memory_bytes", m.available_memory_bytes()},
                    {"read_bandwidth_bytes_per_s", m.read_bandwidth_bytes_per_s()}};
    j["snapshots"] = trace.snapshots_size();
    j["end"] = trace.has_end() ? nlohmann::ordered_json(trace.end().status()) : nlohmann::ordered_json(nullptr);
    j["warning"] = report.warning.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(report.warning);
    problems = ValidateTrace(trace);
    program = &trace.header().program();
  } else {
    auto p = ParsePipeline(bytes, path);
    if (!p.ok()) return ReportError(p.status());
    pipeline = std::move(*p);
    j["kind"] = "pipeline";
    j["encoding"] = EncodingName(DetectEncoding(bytes));
    problems = ValidatePipeline(pipeline);
    program = &pipeline;
  }
  j["valid"] = problems.empty();
  j["problems"] = nlohmann::ordered_json::array();
  for (const auto& p : problems) j["problems"].push_back(p.ToString());
  j["program"] = {{"name", program->name()}, {"output", OutputNodeName(*program)}, {"nodes", NodesJson(*program)}};
  std::cout << j.dump(2) << "\n";
  return problems.empty() ? kExitOk : kExitBadInput;
}

}  // namespace

Handler SetupValidate(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  app.add_option("FILE", *path, "Pipeline or trace (JSON or binary)")->required();
  app.add_option("--format", *format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [path, format] {
    auto bytes = ReadFileToString(Env::Default(), *path);
    if (!bytes.ok()) return ReportError(bytes.status());
    if (bytes->empty()) return ReportError(Status::InvalidArgument(*path + ": the file is empty"));
    if (*format == "json") return ValidateJson(*path, *bytes);
    return IsTraceContent(*bytes) ? ValidateTraceFile(*path, *bytes) : ValidatePipelineFile(*path, *bytes);
  };
}

}  // namespace plumber::cli
