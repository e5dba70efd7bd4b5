// The step table of the optimize loop; see optimize_format.h.
#include "report/optimize_format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::report {
namespace {

using optimize::OptimizeResult;
using optimize::Step;

std::string ChangeText(const rewrite::Change& c) {
  if (c.before.empty()) return c.node + ": " + c.what + " " + c.after;
  return c.node + " " + c.what + " " + c.before + "->" + c.after;
}

// "(priced with costs learned in earlier steps: map at 2, decode at 3)".
std::string LearnedText(const std::vector<rewrite::LearnedCost>& learned) {
  std::string out = "(priced with costs learned in earlier steps: ";
  for (size_t i = 0; i < learned.size(); ++i) {
    if (i > 0) out += ", ";
    out += learned[i].stage + " at " + std::to_string(learned[i].parallelism);
  }
  return out + ")";
}

// "+12%", "-3%"; an error that rounds to none is "+0%", never "-0%".
std::string SignedPercent(double share) {
  const std::string whole = FormatFixed(100 * share, 0);
  return whole[0] == '-' ? whole + "%" : "+" + whole + "%";
}

}  // namespace

std::string StepTable(const OptimizeResult& r) {
  std::string out = fmt::format("{:<5} {:>10} {:>10} {:>7}  {:<24} {}\n", "step", "measured", "predicted", "error",
                                "bottleneck", "changes");
  for (const auto& s : r.steps) {
    std::string predicted = s.predicted ? FormatRounded(*s.predicted) : "-";
    std::string error = s.prediction_error() ? SignedPercent(*s.prediction_error()) : "-";
    std::string measured = FormatRounded(s.measured);
    if (!s.complete) measured += "*";
    std::string bottleneck = s.bottleneck.empty() ? "-" : s.bottleneck;
    if (!s.bottleneck_limit.empty()) bottleneck += " (" + s.bottleneck_limit + ")";
    std::vector<std::string> lines;
    if (s.index == 0) lines.push_back("(as given)");
    for (const auto& c : s.changes) lines.push_back(ChangeText(c));
    if (!s.learned.empty()) lines.push_back(LearnedText(s.learned));
    if (lines.empty()) lines.push_back("-");
    out += fmt::format("{:<5} {:>10} {:>10} {:>7}  {:<24} {}\n", s.index, measured, predicted, error, bottleneck,
                       lines.front());
    for (size_t i = 1; i < lines.size(); ++i) out += fmt::format("{:<61} {}\n", "", lines[i]);
  }
  out += "(throughput in minibatches/s; error = (predicted - measured) / measured";
  bool incomplete = false;
  for (const auto& s : r.steps) incomplete |= !s.complete;
  out += incomplete ? "; * run cut short, not eligible as best)\n" : ")\n";
  if (!r.steps.empty()) {
    const Step& best = r.best();
    out += fmt::format("best: step {}, {} minibatches/s", best.index, FormatRounded(best.measured));
    if (r.speedup() > 0 && best.index != 0) out += fmt::format(" ({:.2f}x step 0)", r.speedup());
    out += "\n";
  }
  out += "stopped: " + r.stopped_because + "\n";
  if (!r.failure.ok()) out += "failure: " + r.failure.ToString() + "\n";
  return out;
}

std::string StepJson(const OptimizeResult& r, const std::string& output) {
  nlohmann::ordered_json j;
  auto steps = nlohmann::ordered_json::array();
  for (const auto& s : r.steps) {
    nlohmann::ordered_json js;
    js["step"] = s.index;
    js["measured_throughput"] = s.measured;
    js["predicted_throughput"] = s.predicted ? nlohmann::ordered_json(*s.predicted) : nullptr;
    js["prediction_error"] = s.prediction_error() ? nlohmann::ordered_json(*s.prediction_error()) : nullptr;
    js["bottleneck"] = s.bottleneck.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.bottleneck);
    js["bottleneck_limit"] =
        s.bottleneck_limit.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.bottleneck_limit);
    js["end_status"] = s.end_status;
    js["complete"] = s.complete;
    js["trace"] = s.trace_path;
    auto changes = nlohmann::ordered_json::array();
    for (const auto& c : s.changes) {
      changes.push_back({{"node", c.node}, {"what", c.what}, {"before", c.before}, {"after", c.after}, {"why", c.why}});
    }
    js["changes"] = std::move(changes);
    auto learned = nlohmann::ordered_json::array();
    for (const auto& l : s.learned) learned.push_back({{"stage", l.stage}, {"parallelism", l.parallelism}});
    js["learned_costs"] = std::move(learned);
    steps.push_back(std::move(js));
  }
  j["steps"] = std::move(steps);
  j["best_step"] = r.best_step;
  j["best_throughput"] = r.steps.empty() ? 0.0 : r.best().measured;
  j["initial_throughput"] = r.steps.empty() ? 0.0 : r.steps.front().measured;
  j["speedup"] = r.speedup();
  j["interrupted"] = r.interrupted;
  j["stopped_because"] = r.stopped_because;
  j["failure"] = r.failure.ok() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.failure.ToString());
  j["output"] = output.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(output);
  return j.dump(2) + "\n";
}

std::string OptimizeText(const std::string& pipeline, const OptimizeResult& r, double seconds_per_run,
                         const std::string& output, const std::string& kept_traces) {
  std::string out = "optimize: " + pipeline + " (" + units::FormatSeconds(seconds_per_run) + " per run)\n";
  out += StepTable(r);
  out += output.empty() ? std::string("nothing written: no run completed\n")
                        : fmt::format("wrote {} (step {})\n", output, r.best_step);
  if (!kept_traces.empty()) out += fmt::format("traces in {}\n", kept_traces);
  return out;
}

std::string DemoSummary(const OptimizeResult& r) {
  const Step& before = r.steps.front();
  const Step& after = r.best();
  std::string out = fmt::format("before:     {:.1f} minibatches/s\n", before.measured);
  out += fmt::format("after:      {:.1f} minibatches/s ({:.2f}x)", after.measured, r.speedup());
  if (after.predicted) out += fmt::format(", predicted {:.1f}", *after.predicted);
  out += "\n";
  out += fmt::format("bottleneck: {}{}\n", before.bottleneck.empty() ? "none found" : before.bottleneck,
                     before.bottleneck_limit.empty() ? "" : " (" + before.bottleneck_limit + ")");
  out += "changes:\n";
  int n = 0;
  for (const auto& s : r.steps) {
    if (s.index == 0 || s.index > after.index) continue;
    for (const auto& c : s.changes) {
      ++n;
      out += fmt::format("  {} {}: {}{}\n    why: {}\n", c.node, c.what, c.before.empty() ? "" : c.before + " -> ",
                         c.after, c.why);
    }
  }
  if (n == 0) out += "  none: the pipeline as written was the best measured\n";
  return out;
}

}  // namespace plumber::report
