// Validation summaries; see validate_format.h.
#include "report/validate_format.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"
#include "pipeline/op_table.h"
#include "pipeline/validate.h"

namespace plumber::report {
namespace {

using Json = nlohmann::ordered_json;

const char* EncodingName(Encoding e) { return e == Encoding::kJson ? "JSON" : "binary"; }

std::string Inputs(const schema::Node& n) {
  std::string out;
  for (const auto& in : n.inputs()) out += (out.empty() ? "" : ",") + in;
  if (const std::string* fn = NodeFunction(n)) out += (out.empty() ? "" : ",") + std::string("fn=") + *fn;
  return out.empty() ? "-" : out;
}

std::string Printf(const char* format, auto... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  std::string out(static_cast<size_t>(std::max(n, 0)), '\0');
  std::snprintf(out.data(), out.size() + 1, format, args...);
  return out;
}

std::string NodeTable(const schema::Pipeline& p) {
  size_t width = 4;
  for (const auto& n : p.nodes()) width = std::max(width, n.name().size());
  std::string out = Printf("  %-*s  %-12s  %-11s  %s\n", static_cast<int>(width), "NODE", "OP", "PARALLELISM", "INPUTS");
  for (const auto& n : p.nodes()) {
    out += Printf("  %-*s  %-12s  %-11d  %s\n", static_cast<int>(width), n.name().c_str(), n.op().c_str(),
                  NodeParallelism(n), Inputs(n).c_str());
  }
  return out;
}

Json NodesJson(const schema::Pipeline& p) {
  auto nodes = Json::array();
  for (const auto& n : p.nodes()) {
    nodes.push_back({{"name", n.name()}, {"op", n.op()}, {"parallelism", NodeParallelism(n)},
                     {"inputs", std::vector<std::string>(n.inputs().begin(), n.inputs().end())}});
    if (const std::string* fn = NodeFunction(n)) nodes.back()["function"] = *fn;
  }
  return nodes;
}

}  // namespace

std::string FormatPipelineSummary(const std::string& path, const schema::Pipeline& pipeline, Encoding encoding) {
  return Printf("%s: pipeline '%s' (%s), %s, output '%s'\n", path.c_str(), pipeline.name().c_str(),
                EncodingName(encoding), FormatCount(pipeline.nodes_size(), "node", "nodes").c_str(),
                OutputNodeName(pipeline).c_str()) +
         NodeTable(pipeline);
}

std::string FormatTraceSummary(const std::string& path, const schema::Trace& trace, const TraceReadReport& read) {
  const auto& h = trace.header();
  // An imported dump was written by another system, not by a plumber run.
  // A DataLoader's trace is written by plumber_torch as it runs: snapshots.
  std::string out = h.has_imported()
                        ? Printf("%s: imported from %s, %s\n", path.c_str(), h.imported().format().c_str(),
                                 h.imported().has_dataloader()
                                     ? FormatCount(trace.snapshots_size(), "snapshot", "snapshots").c_str()
                                     : FormatCount(trace.snapshots_size(), "dump", "dumps").c_str())
                        : Printf("%s: trace (%s), %s, written by plumber %s\n", path.c_str(),
                                 EncodingName(read.encoding), FormatCount(read.records, "record", "records").c_str(),
                                 h.tool_version().empty() ? "?" : h.tool_version().c_str());
  if (!trace.has_header()) return out;
  out += Printf("  program: '%s', %s, output '%s'\n", h.program().name().c_str(),
                FormatCount(h.program().nodes_size(), "node", "nodes").c_str(), OutputNodeName(h.program()).c_str());
  out += Printf("  machine: %s, %s memory (%s available)", FormatCount(h.machine().cores(), "core", "cores").c_str(),
                units::FormatBytes(static_cast<double>(h.machine().memory_bytes())).c_str(),
                units::FormatBytes(static_cast<double>(h.machine().available_memory_bytes())).c_str());
  if (h.machine().read_bandwidth_bytes_per_s() > 0) {
    out += ", reads throttled to " + units::FormatRate(h.machine().read_bandwidth_bytes_per_s());
  }
  if (h.machine().read_latency_ns() > 0) {
    out += ", read latency " + units::FormatSeconds(h.machine().read_latency_ns() * 1e-9);
  }
  out += "\n";
  const int n = trace.snapshots_size();
  const double span = n > 0 ? trace.snapshots(n - 1).wall_ns() * 1e-9 : 0.0;
  if (h.has_imported()) {
    out += Printf("  snapshots: %d; their time: %s\n", n,
                  h.imported().window_known() ? h.imported().window_from().c_str() : "unknown");
  } else {
    out += Printf("  snapshots: %d, the last at %s; end: %s\n", n, units::FormatSeconds(span).c_str(),
                  trace.has_end() ? trace.end().status().c_str() : "none (the run did not finish its trace)");
  }
  return out + NodeTable(h.program());
}

std::string FormatValidationJson(const std::string& path, const schema::Pipeline& program, Encoding encoding,
                                 const std::vector<Problem>& problems, const schema::Trace* trace,
                                 const TraceReadReport* read) {
  Json j;
  j["path"] = path;
  j["kind"] = trace != nullptr ? "trace" : "pipeline";
  j["encoding"] = EncodingName(encoding);
  if (trace != nullptr) {
    const auto& m = trace->header().machine();
    j["machine"] = {{"cores", m.cores()},
                    {"memory_bytes", m.memory_bytes()},
                    {"available_memory_bytes", m.available_memory_bytes()},
                    {"read_bandwidth_bytes_per_s", m.read_bandwidth_bytes_per_s()}};
    j["snapshots"] = trace->snapshots_size();
    j["end"] = trace->has_end() ? Json(trace->end().status()) : Json(nullptr);
    j["warning"] = read == nullptr || read->warning.empty() ? Json(nullptr) : Json(read->warning);
  }
  j["valid"] = problems.empty();
  j["problems"] = Json::array();
  for (const auto& p : problems) j["problems"].push_back(p.ToString());
  j["program"] = {{"name", program.name()}, {"output", OutputNodeName(program)}, {"nodes", NodesJson(program)}};
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
