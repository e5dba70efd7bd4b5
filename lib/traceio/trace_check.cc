// Trace consistency checks.
#include "traceio/trace_check.h"

#include <map>
#include <set>

namespace plumber {
namespace {

struct Counter {
  const char* name;
  int64_t (schema::NodeStats::*get)() const;
};

constexpr Counter kCumulative[] = {
    {"elements_produced", &schema::NodeStats::elements_produced},
    {"elements_consumed", &schema::NodeStats::elements_consumed},
    {"bytes_produced", &schema::NodeStats::bytes_produced},
    {"bytes_consumed", &schema::NodeStats::bytes_consumed},
    {"active_cpu_ns", &schema::NodeStats::active_cpu_ns},
    {"wall_ns", &schema::NodeStats::wall_ns},
    {"storage_bytes_read", &schema::NodeStats::storage_bytes_read},
    {"files_opened", &schema::NodeStats::files_opened},
    {"files_completed", &schema::NodeStats::files_completed},
    {"completed_file_bytes", &schema::NodeStats::completed_file_bytes},
    {"completed_file_records", &schema::NodeStats::completed_file_records},
};

}  // namespace

std::vector<Problem> ValidateTrace(const schema::Trace& trace) {
  std::vector<Problem> problems;
  if (!trace.has_header()) {
    problems.push_back({"", "header", "the trace has no header (the run wrote nothing complete)"});
    return problems;
  }
  for (Problem p : ValidatePipeline(trace.header().program())) {
    p.field = p.field.empty() ? "header.program" : p.field;
    p.message = "in the traced program: " + p.message;
    problems.push_back(std::move(p));
  }
  std::set<std::string> names;
  for (const auto& n : trace.header().program().nodes()) names.insert(n.name());

  std::map<std::string, const schema::NodeStats*> previous;
  int64_t previous_wall = -1;
  for (int i = 0; i < trace.snapshots_size(); ++i) {
    const auto& snap = trace.snapshots(i);
    const std::string at = "snapshots[" + std::to_string(i) + "]";
    if (snap.wall_ns() < 0 || snap.wall_ns() <= previous_wall) {
      problems.push_back({"", at + ".wall_ns",
                          "time does not move forward (" + std::to_string(snap.wall_ns()) + " ns after " +
                              std::to_string(previous_wall) + " ns)"});
    }
    previous_wall = std::max(previous_wall, snap.wall_ns());
    std::set<std::string> seen;
    for (int j = 0; j < snap.nodes_size(); ++j) {
      const auto& stats = snap.nodes(j);
      const std::string field = at + ".nodes[" + std::to_string(j) + "]";
      if (!names.count(stats.name())) {
        problems.push_back({stats.name(), field + ".name", "counters for a node the program does not have"});
        continue;
      }
      if (!seen.insert(stats.name()).second) {
        problems.push_back({stats.name(), field + ".name", "the node appears twice in one snapshot"});
        continue;
      }
      for (const auto& c : kCumulative) {
        const int64_t v = (stats.*c.get)();
        if (v < 0) {
          problems.push_back({stats.name(), field + "." + c.name, "negative counter " + std::to_string(v)});
        } else if (auto it = previous.find(stats.name()); it != previous.end() && v < (it->second->*c.get)()) {
          problems.push_back({stats.name(), field + "." + c.name,
                              "cumulative counter goes backwards (" + std::to_string((it->second->*c.get)()) +
                                  " -> " + std::to_string(v) + ")"});
        }
      }
      previous[stats.name()] = &stats;
    }
  }
  return problems;
}

}  // namespace plumber
