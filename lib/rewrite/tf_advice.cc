// tf.data calls for the changes of a rewrite; see tf_advice.h.
#include "rewrite/tf_advice.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "base/number_format.h"
#include "base/units.h"
#include "pipeline/tf_types.h"

namespace plumber::rewrite {
namespace {

std::string Replace(std::string s, std::string_view key, const std::string& value) {
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size())) {
    s.replace(at, key.size(), value);
  }
  return s;
}

// "the ParallelMapV2 (ParallelMapV2.12) read by BatchV2.14": the type first,
// since that is what the user's code names, then its neighbour for where.
std::string Where(const ProgramGraph& g, const std::string& name) {
  const int i = g.Find(name);
  if (i < 0) return name;
  const schema::Node& n = g.node(i);
  std::string s = (n.imported_type().empty() ? n.op() : n.imported_type()) + " " + name;
  const auto& consumers = g.consumers(i);
  if (!consumers.empty()) {
    const schema::Node& c = g.node(consumers[0]);
    s += ", read by " + (c.imported_type().empty() ? c.op() : c.imported_type()) + " " + c.name();
  } else if (i == g.output()) {
    s += ", the pipeline's last";
  }
  return s;
}

}  // namespace

std::vector<TfAdvice> TfDataAdvice(const analysis::Analysis& analysis, const RewriteResult& result) {
  const ProgramGraph& g = analysis.program_graph();
  std::vector<TfAdvice> out;
  // Interleave knobs come as a pair (cycle_length, parallelism): say the
  // call once, with both values.
  auto value_of = [&](const std::string& node, const std::string& what, const std::string& fallback) {
    for (const auto& c : result.changes) {
      if (c.node == node && c.what == what) return c.after;
    }
    return fallback;
  };
  auto change_of = [&](const std::string& node, const std::string& what) -> const Change* {
    for (const auto& c : result.changes) {
      if (c.node == node && c.what == what) return &c;
    }
    return nullptr;
  };
  for (const auto& c : result.changes) {
    TfAdvice a;
    a.node = c.node;
    a.why = c.why;
    a.predicted_after = c.predicted_after;
    a.before = c.before;
    const int i = g.Find(c.node);
    const schema::Node* node = i >= 0 ? &g.node(i) : nullptr;
    a.tf_type = node ? node->imported_type() : "";
    a.where = Where(g, c.node);
    if (c.what == "parallelism" || c.what == "cycle_length") {
      const OpDef* op = node ? FindOp(node->op()) : nullptr;
      const std::string cycle =
          op && op->cycle_length ? value_of(c.node, "cycle_length", std::to_string(op->cycle_length(*node))) : "";
      const std::string p = value_of(c.node, "parallelism", node ? std::to_string(NodeParallelism(*node)) : "1");
      if (c.what == "cycle_length" && value_of(c.node, "parallelism", "") != "") continue;  // said with parallelism
      const TfTypeDef* type = FindTfType(a.tf_type);
      a.edit = type && !type->call.empty() ? Replace(Replace(std::string(type->call), "{p}", p), "{c}", cycle)
                                           : "set its parallelism to " + p;
      a.before = c.what == "parallelism" ? "num_parallel_calls=" + c.before : "cycle_length=" + c.before;
      if (c.what == "parallelism" && !cycle.empty()) a.before += ", cycle_length=" + std::to_string(op->cycle_length(*node));
      // Both knobs of an interleave are one call: say each that moves.
      for (const auto& [what, arg] :
           {std::pair{"parallelism", "num_parallel_calls"}, std::pair{"cycle_length", "cycle_length"}}) {
        if (const Change* moved = change_of(c.node, what)) {
          a.change +=
              std::string(a.change.empty() ? "" : ", ") + arg + " from " + moved->before + " to " + moved->after;
        }
      }
    } else if (c.what == "cache") {
      const auto& plan = result.plan;
      const int at = g.Find(plan.cache_node);
      a.node = plan.cache_node;
      a.where = Where(g, plan.cache_node);
      a.tf_type = at >= 0 ? g.node(at).imported_type() : "";
      a.edit = (plan.cache_file.empty() ? std::string(".cache()") : ".cache(filename=\"" + plan.cache_file + "\")") +
               " right after it: about " + units::FormatBytes(plan.cache_bytes) +
               (plan.cache_file.empty() ? " of memory" : " on disk");
    } else if (c.what == "prefetch") {
      a.edit = ".prefetch(" + c.after.substr(c.after.find_last_of(' ') + 1) + ") at the end of the pipeline";
    } else if (c.what == "buffer_size") {
      a.edit = ".prefetch(" + c.after + ")";
      a.before = ".prefetch(" + c.before + ")";
      a.change = "buffer_size from " + c.before + " to " + c.after;
    } else {
      a.edit = c.what + " " + c.after;
    }
    out.push_back(std::move(a));
  }
  // Explicit values replace AUTOTUNE where they are set; the budgets keep
  // what autotune still tunes within the machine planned for.
  TfAdvice budgets;
  budgets.node = "options";
  budgets.where = "the dataset's options";
  // The memory planned for (the machine's free memory or --mem), not just
  // what the plan holds: autotune sizes its buffers within it.
  const double ram = std::max(static_cast<double>(analysis.memory_bytes), result.memory_bytes);
  // Without a recorded memory there is no budget to give: never advise one
  // made of the buffers alone.
  const bool memory_known = analysis.memory_bytes > 0;
  budgets.edit = "options = tf.data.Options(); options.autotune.cpu_budget = " + std::to_string(result.plan.cores) +
                 (memory_known ? "; options.autotune.ram_budget = " + FormatFixed(ram, 0) : std::string()) +
                 "; dataset = dataset.with_options(options)";
  budgets.why = "the values above replace AUTOTUNE where they are set; these keep what autotune still tunes (buffers, "
                "stages left at AUTOTUNE) within the " + FormatCount(result.plan.cores, "core", "cores") +
                (memory_known ? " and the " + units::FormatBytes(ram) + " of memory planned for (the plan's buffers "
                                "and cache hold " + units::FormatBytes(result.memory_bytes) + ")"
                              : " planned for; the memory is not recorded, so no ram_budget is advised (give --mem)");
  budgets.predicted_after = result.predicted_after;
  out.push_back(std::move(budgets));
  return out;
}

}  // namespace plumber::rewrite
