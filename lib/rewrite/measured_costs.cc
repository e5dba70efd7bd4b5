// Costs per stage and parallelism across the loop's steps; see
// measured_costs.h.
#include "rewrite/measured_costs.h"

#include "pipeline/op_table.h"

namespace plumber::rewrite {

void MeasuredCosts::Add(const analysis::Analysis& analysis) {
  for (const auto& m : analysis.nodes) {
    if (!m.reliable || !m.steady_state_cost || m.elements <= 0 || m.visit_ratio <= 0) continue;
    // The parallelism the run reported (the counters' own), not the
    // configured one: it is what the cost was measured at.
    int p = m.parallelism;
    if (!m.interleave.empty()) {
      const analysis::NodeModel* owner = analysis.Find(m.interleave);
      if (owner == nullptr) continue;
      p = owner->parallelism;
    }
    MeasuredCost now;
    now.cpu_seconds_per_element = m.cpu_seconds_per_minibatch / m.visit_ratio;
    now.service_seconds_per_element = m.service_seconds_per_minibatch / m.visit_ratio;
    now.elements = m.elements;
    MeasuredCost& known = stages[m.name][p];
    const double total = static_cast<double>(known.elements + now.elements);
    const double w_known = static_cast<double>(known.elements) / total;
    const double w_now = static_cast<double>(now.elements) / total;
    known.cpu_seconds_per_element = w_known * known.cpu_seconds_per_element + w_now * now.cpu_seconds_per_element;
    known.service_seconds_per_element =
        w_known * known.service_seconds_per_element + w_now * now.service_seconds_per_element;
    known.elements += now.elements;
  }
}

const MeasuredCost* MeasuredCosts::Find(const std::string& stage, int parallelism) const {
  const auto s = stages.find(stage);
  if (s == stages.end()) return nullptr;
  const auto c = s->second.find(parallelism);
  return c == s->second.end() ? nullptr : &c->second;
}

int StageParallelism(const ProgramGraph& g, int i) {
  const int owner = g.enclosing_interleave(i);
  return NodeParallelism(g.node(owner >= 0 ? owner : i));
}

}  // namespace plumber::rewrite
