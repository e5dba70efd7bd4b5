// The sentences of findings.h, in the order a reader needs them: what was
// measured, what holds it back, what the machine allows, what the data is.
#include "analysis/findings.h"

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::analysis {

std::vector<std::string> WriteFindings(const Analysis& r) {
  std::vector<std::string> f;
  auto rate = [](double x) { return FormatNumber(x) + " minibatches/s"; };
  f.push_back("Observed " + rate(r.observed_throughput) + " (" + std::to_string(r.minibatches) + " minibatches in " +
              units::FormatSeconds(r.window_seconds) + ", from " + units::FormatSeconds(r.window_start_seconds) +
              " to " + units::FormatSeconds(r.window_end_seconds) + ").");
  if (r.consumer_wait_seconds) {
    // The paper counts a job input-bound once the mean wait per step passes
    // tens of microseconds.
    const bool stalled = *r.consumer_wait_seconds > 50e-6;
    f.push_back("The consumer waited " + units::FormatSeconds(*r.consumer_wait_seconds) +
                " per minibatch on average (" + FormatNumber(100 * *r.consumer_wait_fraction) + "% of the window): " +
                (stalled ? "the input pipeline holds training back." : "the input pipeline keeps up."));
  }
  if (const NodeModel* b = r.Find(r.bottleneck)) {
    f.push_back(b->name + " (" + b->op + ") is the bottleneck: as configured it keeps up with at most " +
                rate(*b->scaled_rate) + "; limited by " + b->limit_text + ".");
  }
  const NodeModel* top = nullptr;
  for (const auto& m : r.nodes) {
    if (m.steady_state_cost && (!top || m.cpu_seconds_per_minibatch > top->cpu_seconds_per_minibatch)) top = &m;
  }
  if (top && r.cpu_seconds_per_minibatch > 0) {
    f.push_back(top->name + " is " + FormatNumber(100.0 * top->cpu_seconds_per_minibatch / r.cpu_seconds_per_minibatch) +
                "% of the CPU per minibatch (" + units::FormatSeconds(top->cpu_seconds_per_minibatch) + " of " +
                units::FormatSeconds(r.cpu_seconds_per_minibatch) + ").");
  }
  if (r.cpu_bound) {
    std::string s = "At " + std::to_string(r.cores) + " cores the CPU bound is " + rate(*r.cpu_bound);
    if (r.cpu_bound_limit == "cores") {
      s += " (all cores busy)";
    } else if (const NodeModel* m = r.Find(r.cpu_bound_limit)) {
      s += ", held by " + m->name + " at its cap of " + FormatNumber(m->max_cores) + " (" + m->cap_reason +
           "); without caps it would be " + rate(*r.cpu_bound_uncapped);
    }
    f.push_back(s + ".");
  }
  if (r.disk_bytes_per_minibatch > 0) {
    std::string s = "Storage: " + units::FormatBytes(r.disk_bytes_per_minibatch) + " read per minibatch, " +
                    FormatNumber(100e6 / r.disk_bytes_per_minibatch) + " minibatches/s per 100 MB/s";
    if (r.disk_bound) {
      s += "; at " + units::FormatRate(*r.disk_bandwidth) + " (" + r.disk_bandwidth_from + ") the storage bound is " +
           rate(*r.disk_bound);
    } else {
      s += "; the storage bandwidth is unknown (give --disk-bandwidth)";
    }
    f.push_back(s + ".");
  }
  if (r.predicted_throughput) {
    f.push_back("Predicted " + rate(*r.predicted_throughput) + " with the best parallelism, " +
                (r.predicted_limit == "disk" ? "storage-bound" : "CPU-bound") + " (" +
                FormatNumber(*r.predicted_throughput / r.observed_throughput) + "x observed).");
  }
  for (const auto& s : r.sources) {
    if (!s.dataset_bytes) continue;
    std::string t = "The files read by node " + s.node + " total " + units::FormatBytes(*s.dataset_bytes);
    if (s.exact) {
      t += " (all " + std::to_string(*s.files) + " files read)";
    } else if (!s.interval_known) {
      t += " (estimated from a single file of " + std::to_string(*s.files) +
           ", which says nothing about their spread: read more files for an interval)";
    } else {
      t += " (95% interval " + units::FormatBytes(s.dataset_bytes_lo) + " to " +
           units::FormatBytes(s.dataset_bytes_hi) + ", estimated from " + std::to_string(s.files_completed) + " of " +
           std::to_string(*s.files) + " files)";
    }
    f.push_back(t + ".");
  }
  for (const auto& m : r.nodes) {
    if (m.random) f.push_back(m.name + " is random, so nothing at or above it can be cached.");
  }
  const std::string& output = r.program_graph().name(r.program_graph().output());
  for (const auto& m : r.nodes) {
    if (m.cardinality.kind == Cardinality::Kind::kUnknown && !m.cardinality.why.empty() && m.name == output) {
      f.push_back("The dataset size is unknown: " + m.cardinality.why + ".");
    }
  }
  if (!r.cache_node.empty()) {
    f.push_back("The dataset after " + r.cache_node + " is " + units::FormatBytes(r.cache_bytes) +
                " and fits the cache budget of " + units::FormatBytes(r.cache_budget_bytes) +
                ": the place to cache it when the data is read more than once (a repeat above it; see the plan).");
  }
  // The largest finite, deterministic candidate that does not fit says what
  // more memory would buy.
  for (const auto& m : r.nodes) {
    if (m.cacheable && m.materialized_bytes && *m.materialized_bytes > r.cache_budget_bytes && m.interleave.empty()) {
      f.push_back("The dataset after " + m.name + " is " + units::FormatBytes(*m.materialized_bytes) +
                  " and does not fit the cache budget of " + units::FormatBytes(r.cache_budget_bytes) + ".");
    }
  }
  if (r.cache_node.empty()) f.push_back("Nothing cacheable fits in memory.");
  return f;
}

}  // namespace plumber::analysis
