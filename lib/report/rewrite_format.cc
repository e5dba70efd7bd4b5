// Formatting of plans and rewrites; see rewrite_format.h.
#include "report/rewrite_format.h"

#include <algorithm>
#include <cstdio>

#include "base/number_format.h"
#include "base/units.h"
#include "report/analysis_format.h"

namespace plumber::report {
namespace {

using Json = nlohmann::ordered_json;
using analysis::Plan;
using rewrite::RewriteResult;

// "for 1 core (the run had ...)": the analysis's words when the plan used
// its cores, as it always does; the plan's count alone otherwise.
std::string ForCores(const analysis::Analysis& a, const Plan& plan) {
  if (a.cores == plan.cores) return "for " + CoresPlannedText(a);
  return "for " + FormatCount(plan.cores, "core", "cores");
}

// The keys that say where the cores came from, beside "cores".
void CoresJson(const analysis::Analysis& a, Json* j) {
  (*j)["cores_from"] = analysis::CoresFromName(a.cores_from);
  (*j)["cores_source"] = a.cores_source;
  (*j)["effective_cores"] = a.effective_cores ? Json(*a.effective_cores) : Json(nullptr);
}

// An edit that leaves the pipeline slower than as traced is a step towards
// a later one (the rewrite chose them together): said, so that no one makes
// it alone and concludes the advice is wrong.
std::string BelowAsTraced(const std::vector<rewrite::TfAdvice>& advice, size_t k, double as_traced) {
  if (!(advice[k].predicted_after < as_traced * (1 - 1e-6))) return "";
  std::string s = " (below the " + units::FormatMinibatchRate(as_traced) + " as traced";
  for (size_t j = k + 1; j < advice.size(); ++j) {
    if (advice[j].predicted_after >= as_traced * (1 - 1e-6)) {
      return s + ": a step towards edit " + std::to_string(j + 1) + ", with which the edits reach " +
             units::FormatMinibatchRate(advice[j].predicted_after) + "; do not make it alone)";
    }
  }
  return s + ")";
}

// The shape search's changes and drops (rewrite/shape_search.h); empty when
// it priced nothing (no legal change, or not asked).
std::string ShapeText(const rewrite::ShapeReport& s) {
  if (s.priced == 0 && s.dropped.empty()) return "";
  std::string out;
  const std::string knobs = units::FormatMinibatchRate(s.predicted_knobs_only);
  if (s.applied.empty()) {
    out += "shape: kept as traced (" + FormatCount(s.priced, "change", "changes") +
           " priced; none gains 1% over the knobs alone, " + knobs + ")\n";
  } else {
    out += "shape: " + FormatCount(static_cast<int64_t>(s.applied.size()), "change", "changes") +
           " before the knobs (the knobs alone: " + knobs + ")\n";
  }
  for (const auto& a : s.applied) {
    out += "  " + rewrite::DescribeChange(a.change) + " (" + a.change.rule + "): " +
           units::FormatMinibatchRate(a.predicted_before) + " -> " + units::FormatMinibatchRate(a.predicted_after) +
           "\n";
    out += "      why: " + a.change.reason + "\n";
    out += "      verified: " + a.verification + "\n";
  }
  for (const auto& d : s.dropped) {
    out += "  dropped: " + rewrite::DescribeChange(d.change) + " (would reach " +
           units::FormatMinibatchRate(d.predicted_after) + "): " + d.why + "\n";
  }
  return out;
}

// "move .filter(...) (Filter.7) above .map(...) (ParallelMapV2.6)": the
// calls as the user's code writes them, then the nodes to find them by.
std::string TfMoveEdit(const analysis::Analysis& a, const rewrite::ShapeChange& c) {
  const ProgramGraph& g = a.program_graph();
  auto call = [&](const std::string& name) {
    const int i = g.Find(name);
    return "`." + (i >= 0 ? g.node(i).op() : std::string("?")) + "(...)` (" + name + ")";
  };
  return "move " + call(c.upper) + " above " + call(c.lower);
}

Json ShapeJson(const rewrite::ShapeReport& s) {
  Json j;
  j["predicted_knobs_only"] = s.predicted_knobs_only;
  j["priced"] = s.priced;
  auto change = [](const rewrite::ShapeChange& c) {
    const char* kind = c.kind == rewrite::ShapeKind::kFuseMaps     ? "fuse"
                       : c.kind == rewrite::ShapeKind::kFuseFilter ? "fuse_filter"
                                                                   : "move";
    return Json{{"kind", kind},
                {"upper", c.upper},
                {"lower", c.lower},
                {"rule", c.rule},
                {"why", c.reason}};
  };
  Json applied = Json::array();
  for (const auto& a : s.applied) {
    Json x = change(a.change);
    x["predicted_before"] = a.predicted_before;
    x["predicted_after"] = a.predicted_after;
    x["verification"] = a.verification;
    applied.push_back(x);
  }
  Json dropped = Json::array();
  for (const auto& d : s.dropped) {
    Json x = change(d.change);
    x["predicted_after"] = d.predicted_after;
    x["dropped_because"] = d.why;
    dropped.push_back(x);
  }
  j["applied"] = applied;
  j["dropped"] = dropped;
  return j;
}

}  // namespace

Json PlanJson(const Plan& plan) {
  Json j;
  j["throughput"] = plan.unbounded ? Json(nullptr) : Json(plan.throughput);
  j["unbounded"] = plan.unbounded;
  j["throughput_without_cache"] = plan.throughput_without_cache;
  j["binding_without_cache"] = plan.binding_without_cache;
  if (plan.cache_node.empty()) {
    j["cache"] = nullptr;
    if (!plan.cache_note.empty()) j["cache_note"] = plan.cache_note;
  } else {
    j["cache"] = {{"node", plan.cache_node},
                  {"bytes", plan.cache_bytes},
                  {"budget_bytes", plan.cache_budget_bytes},
                  {"file", plan.cache_file.empty() ? Json(nullptr) : Json(plan.cache_file)}};
  }
  j["read_parallelism"] = plan.read_parallelism ? Json(*plan.read_parallelism) : Json(nullptr);
  Json cores = Json::object();
  for (const auto& s : plan.stages) {
    if (s.active && s.cpu_seconds_per_minibatch > 0) cores[s.name] = s.cores;
  }
  j["cores"] = cores;
  return j;
}

std::string PlanText(const Plan& plan) {
  std::string out;
  out += "  without a cache (parallelism only): " + units::FormatMinibatchRate(plan.throughput_without_cache) +
         ", held by " + (plan.binding_without_cache.empty() ? std::string("nothing") : plan.binding_without_cache) +
         "\n";
  if (plan.cache_node.empty()) {
    out += plan.cache_note.empty() ? "  cache: none fits the budget of " + units::FormatBytes(plan.cache_budget_bytes) + "\n"
                                   : "  cache: none; " + plan.cache_note + "\n";
  } else {
    out += "  with a " + std::string(plan.cache_file.empty() ? "cache" : "file cache (" + plan.cache_file + ")") +
           " after " + plan.cache_node + " (" + units::FormatBytes(plan.cache_bytes) + "; memory budget " +
           units::FormatBytes(plan.cache_budget_bytes) + "): " +
           (plan.unbounded ? std::string("unbounded (every costed stage is under the cache; the consumer sets the pace)")
                           : units::FormatMinibatchRate(plan.throughput)) +
           "\n";
  }
  if (plan.read_parallelism) out += "  read parallelism for the bandwidth curve: " + std::to_string(*plan.read_parallelism) + "\n";
  out += "  cores per stage:";
  bool any = false;
  for (const auto& s : plan.stages) {
    if (!s.active || s.cpu_seconds_per_minibatch <= 0) continue;
    out += (any ? ", " : " ") + s.name + " " + FormatNumber(s.cores);
    any = true;
  }
  out += any ? "\n" : " none\n";
  return out;
}

std::string RewriteJson(const analysis::Analysis& a, const RewriteResult& r, const std::string& trace,
                        const std::string& output) {
  Json j;
  j["trace"] = trace;
  j["output"] = output.empty() ? Json(nullptr) : Json(output);
  j["predicted_before"] = r.predicted_before;
  j["predicted_after"] = r.predicted_unbounded ? Json(nullptr) : Json(r.predicted_after);
  j["cores"] = r.plan.cores;
  CoresJson(a, &j);
  j["parallel_cores"] = r.parallel_cores;
  j["io_readers"] = r.io_readers;
  j["memory_bytes"] = r.memory_bytes;
  j["plan"] = PlanJson(r.plan);
  Json changes = Json::array();
  for (const auto& c : r.changes) {
    changes.push_back({{"node", c.node}, {"change", c.what}, {"before", c.before.empty() ? Json(nullptr) : Json(c.before)},
                       {"after", c.after}, {"why", c.why}, {"predicted_after", c.predicted_after}});
  }
  j["changes"] = changes;
  j["notes"] = r.notes;
  j["shape"] = ShapeJson(r.shape);
  return j.dump(2) + "\n";
}

std::string RewriteText(const analysis::Analysis& a, const RewriteResult& r, const std::string& trace,
                        const std::string& output) {
  std::string out = "plumber rewrite: " + trace + " " + ForCores(a, r.plan) + "\n";
  out += "predicted: " + units::FormatMinibatchRate(r.predicted_before) + " as traced -> ";
  if (r.predicted_unbounded) {
    out += "unbounded rewritten (after the first epoch everything is replayed from the cache)";
  } else {
    out += units::FormatMinibatchRate(r.predicted_after) + " for the rewritten pipeline";
    if (r.predicted_before > 0) out += " (" + FormatNumber(r.predicted_after / r.predicted_before) + "x)";
  }
  out += "\n";
  out += "budget: parallel stages hold " + std::to_string(r.parallel_cores) + " of " +
         FormatCount(r.plan.cores, "core", "cores");
  if (r.io_readers > 0) out += " (+" + FormatCount(r.io_readers, "I/O reader thread", "I/O reader threads") + ")";
  out += "; memory held about " + units::FormatBytes(r.memory_bytes) + "\n";
  out += ShapeText(r.shape);
  out += "plan: the LP's continuous optimum (GLPK, fractional cores; the rewrite searches whole threads around "
         "it):\n" +
         PlanText(r.plan);
  if (r.changes.empty()) {
    out += r.notes.empty() ? "changes: none (the pipeline is already as the plan wants it)\n"
                           : "changes: none\n";
  } else {
    out += "changes:\n";
    size_t w_node = 4, w_what = 6;
    for (const auto& c : r.changes) {
      w_node = std::max(w_node, c.node.size());
      w_what = std::max(w_what, c.what.size());
    }
    for (const auto& c : r.changes) {
      char head[256];
      std::snprintf(head, sizeof(head), "  %-*s  %-*s  ", static_cast<int>(w_node), c.node.c_str(),
                    static_cast<int>(w_what), c.what.c_str());
      out += head + (c.before.empty() ? "added: " + c.after : c.before + " -> " + c.after) + "\n";
      out += std::string(w_node + w_what + 6, ' ') + "why: " + c.why + "\n";
    }
  }
  if (!r.notes.empty()) {
    out += "left out:\n";
    for (const auto& n : r.notes) out += "  - " + n + "\n";
  }
  if (!output.empty()) out += "wrote " + output + "\n";
  return out;
}

std::string TfAdviceText(const analysis::Analysis& a, const RewriteResult& r,
                         const std::vector<rewrite::TfAdvice>& advice) {
  std::string out = "plumber rewrite: " + a.source + " " + ForCores(a, r.plan) + ", as tf.data edits\n";
  out += "imported from " + a.imported_from + "\n";
  out += "predicted: " + units::FormatMinibatchRate(r.predicted_before) + " as traced -> ";
  if (r.predicted_unbounded) {
    out += "unbounded with the edits (after the first epoch everything is replayed from the cache)\n";
  } else {
    out += units::FormatMinibatchRate(r.predicted_after) + " with every edit";
    if (r.predicted_before > 0) out += " (" + FormatNumber(r.predicted_after / r.predicted_before) + "x)";
    out += "\n";
  }
  if (!a.source_limits.empty()) {
    out += "what the source cannot tell:\n";
    for (const auto& l : a.source_limits) out += "  - " + l + "\n";
  }
  if (!r.shape.applied.empty()) {
    // Made first: the edits below are for the pipeline with them.
    out += "reorder first (plumber cannot see inside tf.data functions: make each only where its conditions "
           "hold):\n";
    for (size_t k = 0; k < r.shape.applied.size(); ++k) {
      const rewrite::AppliedShape& s = r.shape.applied[k];
      out += "  " + std::to_string(k + 1) + ". " + TfMoveEdit(a, s.change) + "\n";
      out += "     when: " + s.change.reason + "\n";
      out += "     predicted, the edits below tuned for it: " + units::FormatMinibatchRate(s.predicted_before) +
             " -> " + units::FormatMinibatchRate(s.predicted_after) + "\n";
    }
  }
  out += "edits, in order:\n";
  for (size_t k = 0; k < advice.size(); ++k) {
    const rewrite::TfAdvice& e = advice[k];
    out += "  " + std::to_string(k + 1) + ". " + e.where + "\n";
    out += "     " + e.edit + "\n";
    // "now: num_parallel_calls=3" under a call that sets 8 read either way.
    if (!e.change.empty()) {
      out += "     change: " + e.change + "\n";
    } else if (!e.before.empty()) {
      out += "     before the edit: " + e.before + "\n";
    }
    out += "     why: " + e.why + "\n";
    out += "     predicted with the edits so far: " + units::FormatMinibatchRate(e.predicted_after) +
           BelowAsTraced(advice, k, r.predicted_before) + "\n";
  }
  return out;
}

std::string TfAdviceJson(const analysis::Analysis& a, const RewriteResult& r,
                         const std::vector<rewrite::TfAdvice>& advice) {
  Json j;
  j["trace"] = a.source;
  j["imported_from"] = a.imported_from;
  j["limits"] = a.source_limits;
  j["predicted_before"] = r.predicted_before;
  j["predicted_after"] = r.predicted_unbounded ? Json(nullptr) : Json(r.predicted_after);
  j["cores"] = r.plan.cores;
  CoresJson(a, &j);
  j["memory_bytes"] = r.memory_bytes;
  Json items = Json::array();
  for (const auto& e : advice) {
    items.push_back({{"node", e.node},
                     {"tf_type", e.tf_type.empty() ? Json(nullptr) : Json(e.tf_type)},
                     {"where", e.where},
                     {"edit", e.edit},
                     {"before", e.before.empty() ? Json(nullptr) : Json(e.before)},
                     {"change", e.change.empty() ? Json(nullptr) : Json(e.change)},
                     {"why", e.why},
                     {"predicted_after", e.predicted_after}});
  }
  j["advice"] = items;
  Json moves = Json::array();
  for (const auto& s : r.shape.applied) {
    moves.push_back({{"node", s.change.upper},
                     {"above", s.change.lower},
                     {"edit", TfMoveEdit(a, s.change)},
                     {"when", s.change.reason},
                     {"predicted_before", s.predicted_before},
                     {"predicted_after", s.predicted_after}});
  }
  j["reorder_first"] = moves;
  j["notes"] = r.notes;
  j["plan"] = PlanJson(r.plan);
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
