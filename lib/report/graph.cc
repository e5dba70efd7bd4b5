// Dot and HTML pictures of an analysed pipeline; see graph.h. The HTML is
// static SVG and CSS only: a report people attach to a ticket or open from
// CI artifacts must render the same offline, years later.
#include "report/graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "base/number_format.h"
#include "base/units.h"
#include "report/analysis_format.h"

namespace plumber::report {
namespace {

using analysis::Analysis;
using analysis::NodeModel;

// "12.5 minibatches/s", or "unknown" when the source does not record time.
std::string ObservedText(const analysis::Analysis& report) {
  return report.observed_throughput ? units::FormatMinibatchRate(*report.observed_throughput) : "unknown";
}
std::string Fixed(double v, int digits = 1) { return FormatFixed(v, digits); }

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string DotQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Hue from green (120) to red (0) as closeness goes from 0 to 1.
double Hue(double closeness) { return 120.0 * (1.0 - std::clamp(closeness, 0.0, 1.0)); }

struct Edge {
  std::string from;
  std::string to;
  bool function = false;  // interleave function -> interleave
};

std::vector<Edge> Edges(const ProgramGraph& program) {
  std::vector<Edge> edges;
  for (int i = 0; i < program.size(); ++i) {
    for (int j : program.inputs(i)) edges.push_back({program.name(j), program.name(i), false});
    if (program.function(i) >= 0) edges.push_back({program.name(program.function(i)), program.name(i), true});
  }
  return edges;
}

std::string RateText(const std::optional<double>& v) { return v ? FormatNumber(*v) : std::string("unbounded"); }
// The same with its unit, where no column or axis names it.
std::string RateWithUnit(const std::optional<double>& v) {
  return v ? units::FormatMinibatchRate(*v) : std::string("unbounded");
}

}  // namespace

double Closeness(const Analysis& report, const NodeModel& node) {
  const NodeModel* b = report.bottleneck.empty() ? nullptr : report.Find(report.bottleneck);
  if (!b || !b->scaled_rate || !node.scaled_rate || *node.scaled_rate <= 0) return 0;
  return std::clamp(*b->scaled_rate / *node.scaled_rate, 0.0, 1.0);
}

std::string FormatDot(const Analysis& report) {
  const ProgramGraph& graph = report.program_graph();
  const schema::Pipeline& program = graph.program();
  std::string out = "// plumber analyze --format dot: " + report.source + "\n";
  out += "// Fill: green (far from the bottleneck) to red (the bottleneck), by the bottleneck's\n";
  out += "// parallelism-scaled rate over the node's. Edge labels: visit ratio of the input\n";
  out += "// (its elements per minibatch). Render with: dot -Tsvg FILE > pipeline.svg\n";
  out += "digraph " + DotQuote(program.name().empty() ? "pipeline" : program.name()) + " {\n";
  out += "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  out += "  labelloc=t;\n  label=" +
         DotQuote(program.name() + ": observed " + ObservedText(report) + ", as traced " +
                  RateWithUnit(report.as_traced.throughput) +
                  (report.as_traced.bottleneck.empty() ? "" : " (" + report.as_traced.bottleneck + ")") +
                  ", predicted " + RateWithUnit(report.predicted_throughput) + " with the best parallelism" +
                  (report.bottleneck.empty() ? "" : ", bottleneck " + report.bottleneck)) +
         ";\n";
  for (const auto& n : report.nodes) {
    const double c = Closeness(report, n);
    std::string label = n.name + "\\n" + n.op + " x" + std::to_string(n.parallelism);
    label += "\\nrate/core " + RateText(n.rate_per_core) + "\\nscaled " + RateWithUnit(n.scaled_rate);
    if (n.name == report.bottleneck) label += "\\nBOTTLENECK";
    if (n.name == report.cache_node) label += "\\ncache here";
    char color[64];
    std::snprintf(color, sizeof(color), "%.3f 0.55 0.95", Hue(c) / 360.0);
    out += "  " + DotQuote(n.name) + " [label=\"";
    // Labels carry \n line breaks, so they are written without DotQuote's escaping.
    for (char ch : label) out += ch == '"' ? std::string("\\\"") : std::string(1, ch);
    out += "\", fillcolor=\"" + std::string(color) + "\"" + (n.name == report.bottleneck ? ", penwidth=2.5" : "") +
           "];\n";
  }
  for (const auto& e : Edges(graph)) {
    const NodeModel* from = report.Find(e.from);
    std::string attrs;
    if (e.function) {
      attrs = "style=dashed, label=\"function\"";
    } else if (from) {
      attrs = "label=\"" + FormatNumber(from->visit_ratio) + "\"";
    }
    out += "  " + DotQuote(e.from) + " -> " + DotQuote(e.to) + (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
  }
  out += "}\n";
  return out;
}

namespace {

// The pipeline as SVG: sources on the left, the output on the right, one
// column per depth (hops from the output), nodes of a column stacked.
std::string GraphSvg(const Analysis& report, const std::string& cache_node) {
  int max_depth = 0;
  for (const auto& n : report.nodes) max_depth = std::max(max_depth, n.depth);
  std::map<int, std::vector<const NodeModel*>> columns;
  for (const auto& n : report.nodes) columns[max_depth - n.depth].push_back(&n);
  size_t rows = 1;
  for (const auto& [col, nodes] : columns) rows = std::max(rows, nodes.size());
  const double box_w = 150, box_h = 64, gap_x = 70, gap_y = 26, margin = 16;
  const double width = margin * 2 + (max_depth + 1) * box_w + max_depth * gap_x;
  const double height = margin * 2 + rows * box_h + (rows - 1) * gap_y;
  std::map<std::string, std::pair<double, double>> pos;  // top-left corner
  for (const auto& [col, nodes] : columns) {
    const double col_h = nodes.size() * box_h + (nodes.size() - 1) * gap_y;
    for (size_t i = 0; i < nodes.size(); ++i) {
      pos[nodes[i]->name] = {margin + col * (box_w + gap_x), margin + (height - 2 * margin - col_h) / 2 + i * (box_h + gap_y)};
    }
  }
  std::string svg = "<svg id=\"pipeline-graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fixed(width, 0) +
                    "\" height=\"" + Fixed(height, 0) + "\" viewBox=\"0 0 " + Fixed(width, 0) + " " +
                    Fixed(height, 0) + "\" role=\"img\" aria-label=\"pipeline graph\">\n";
  svg += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
         "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n";
  for (const auto& e : Edges(report.program_graph())) {
    auto a = pos.find(e.from), b = pos.find(e.to);
    if (a == pos.end() || b == pos.end()) continue;
    double x1 = a->second.first + box_w, y1 = a->second.second + box_h / 2;
    double x2 = b->second.first, y2 = b->second.second + box_h / 2;
    if (x2 <= x1) {  // same column (not expected in a tree by depth): go over the top
      x1 = a->second.first + box_w / 2;
      y1 = a->second.second;
      x2 = b->second.first + box_w / 2;
      y2 = b->second.second + box_h;
    }
    svg += "<line x1=\"" + Fixed(x1) + "\" y1=\"" + Fixed(y1) + "\" x2=\"" + Fixed(x2) + "\" y2=\"" + Fixed(y2) +
           "\" stroke=\"#555\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"" +
           (e.function ? " stroke-dasharray=\"5 4\"" : "") + "/>\n";
    const NodeModel* from = report.Find(e.from);
    const std::string label = e.function ? "function" : from ? "x" + FormatNumber(from->visit_ratio) : "";
    svg += "<text class=\"edge\" x=\"" + Fixed((x1 + x2) / 2) + "\" y=\"" + Fixed((y1 + y2) / 2 - 5) +
           "\" text-anchor=\"middle\">" + Escape(label) + "</text>\n";
  }
  for (const auto& n : report.nodes) {
    const auto [x, y] = pos[n.name];
    const bool bottleneck = n.name == report.bottleneck;
    svg += "<g class=\"node\"><title>" + Escape(n.name + ": " + n.limit_text) + "</title>";
    svg += "<rect x=\"" + Fixed(x) + "\" y=\"" + Fixed(y) + "\" width=\"" + Fixed(box_w) + "\" height=\"" +
           Fixed(box_h) + "\" rx=\"8\" fill=\"hsl(" + Fixed(Hue(Closeness(report, n)), 0) + ", 65%, 82%)\" stroke=\"" +
           (bottleneck ? "#b00" : "#444") + "\" stroke-width=\"" + (bottleneck ? "3" : "1") + "\"/>";
    svg += "<text x=\"" + Fixed(x + box_w / 2) + "\" y=\"" + Fixed(y + 18) + "\" text-anchor=\"middle\" class=\"name\">" +
           Escape(n.name) + (n.name == cache_node ? " [cache]" : "") + "</text>";
    svg += "<text x=\"" + Fixed(x + box_w / 2) + "\" y=\"" + Fixed(y + 35) + "\" text-anchor=\"middle\">" +
           Escape(n.op + " x" + std::to_string(n.parallelism)) + "</text>";
    svg += "<text x=\"" + Fixed(x + box_w / 2) + "\" y=\"" + Fixed(y + 52) + "\" text-anchor=\"middle\">" +
           Escape(n.scaled_rate ? units::FormatMinibatchRate(*n.scaled_rate) : "unbounded") + "</text></g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

// Horizontal bars of each stage's capacity (parallelism-scaled rate, and
// what it could reach at its most cores) on a log axis, with the observed
// and predicted throughput as vertical lines: the paper's roofline view.
std::string RooflineSvg(const Analysis& report) {
  std::vector<const NodeModel*> nodes;
  for (const auto& n : report.nodes) nodes.push_back(&n);
  std::stable_sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) {
    return a->scaled_rate.value_or(INFINITY) < b->scaled_rate.value_or(INFINITY);
  });
  const double observed = report.observed_throughput.value_or(0.0);
  double lo = observed > 0 ? observed : 1, hi = lo;
  auto widen = [&](std::optional<double> v) {
    if (v && *v > 0) {
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
  };
  widen(report.predicted_throughput);
  widen(report.as_traced.throughput);
  for (auto* n : nodes) {
    widen(n->scaled_rate);
    if (n->rate_per_core) widen(*n->rate_per_core * n->max_cores);
  }
  const double lmin = std::floor(std::log10(lo)), lmax = std::ceil(std::log10(hi) + 1e-9) + (hi == lo ? 1 : 0);
  // top leaves room for three stacked line labels (as traced, observed, predicted).
  const double label_w = 110, plot_w = 560, bar_h = 18, gap = 8, top = 42, margin = 10;
  const double height = top + nodes.size() * (bar_h + gap) + 40;
  const double width = label_w + plot_w + 2 * margin + 90;
  auto xof = [&](double v) { return label_w + margin + plot_w * (std::log10(v) - lmin) / std::max(lmax - lmin, 1.0); };
  std::string svg = "<svg id=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fixed(width, 0) +
                    "\" height=\"" + Fixed(height, 0) + "\" viewBox=\"0 0 " + Fixed(width, 0) + " " +
                    Fixed(height, 0) + "\" role=\"img\" aria-label=\"stage capacity against throughput\">\n";
  for (double d = lmin; d <= lmax; d += 1) {
    const double x = xof(std::pow(10, d));
    svg += "<line x1=\"" + Fixed(x) + "\" y1=\"" + Fixed(top - 6) + "\" x2=\"" + Fixed(x) + "\" y2=\"" +
           Fixed(height - 34) + "\" stroke=\"#ddd\"/>";
    svg += "<text class=\"axis\" x=\"" + Fixed(x) + "\" y=\"" + Fixed(height - 20) + "\" text-anchor=\"middle\">" +
           FormatNumber(std::pow(10, d)) + "</text>\n";
  }
  svg += "<text class=\"axis\" x=\"" + Fixed(label_w + margin + plot_w / 2) + "\" y=\"" + Fixed(height - 4) +
         "\" text-anchor=\"middle\">minibatches/s (log scale)</text>\n";
  double y = top;
  for (auto* n : nodes) {
    svg += "<text x=\"" + Fixed(label_w) + "\" y=\"" + Fixed(y + bar_h - 5) + "\" text-anchor=\"end\">" +
           Escape(n->name) + "</text>";
    const double x0 = label_w + margin;
    if (!n->scaled_rate) {
      svg += "<rect class=\"unbounded\" x=\"" + Fixed(x0) + "\" y=\"" + Fixed(y) + "\" width=\"" + Fixed(plot_w) +
             "\" height=\"" + Fixed(bar_h) + "\"/><text x=\"" + Fixed(x0 + plot_w + 4) + "\" y=\"" +
             Fixed(y + bar_h - 5) + "\">unbounded</text>\n";
    } else {
      if (n->rate_per_core && n->max_cores > n->cores_now) {
        const double reach = *n->rate_per_core * n->max_cores;
        svg += "<rect class=\"reach\" x=\"" + Fixed(x0) + "\" y=\"" + Fixed(y) + "\" width=\"" +
               Fixed(std::max(1.0, xof(reach) - x0)) + "\" height=\"" + Fixed(bar_h) + "\"><title>" +
               Escape(n->name + " at " + FormatCount(n->max_cores, "core", "cores") + ": " +
                      units::FormatMinibatchRate(reach)) +
               "</title></rect>";
      }
      svg += "<rect class=\"" + std::string(n->name == report.bottleneck ? "bar bottleneck" : "bar") + "\" x=\"" +
             Fixed(x0) + "\" y=\"" + Fixed(y) + "\" width=\"" + Fixed(std::max(1.0, xof(*n->scaled_rate) - x0)) +
             "\" height=\"" + Fixed(bar_h) + "\"><title>" +
             Escape(n->name + " now: " + units::FormatMinibatchRate(*n->scaled_rate) + " (" + n->limit_text + ")") +
             "</title></rect>";
      svg += "<text x=\"" + Fixed(xof(*n->scaled_rate) + 4) + "\" y=\"" + Fixed(y + bar_h - 5) + "\">" +
             FormatNumber(*n->scaled_rate) + "</text>\n";
    }
    y += bar_h + gap;
  }
  auto vline = [&](double v, const char* cls, const std::string& label, double dy) {
    const double x = xof(v);
    svg += "<line class=\"" + std::string(cls) + "\" x1=\"" + Fixed(x) + "\" y1=\"" + Fixed(top - 8) + "\" x2=\"" +
           Fixed(x) + "\" y2=\"" + Fixed(height - 34) + "\"/><text class=\"" + cls + "-label\" x=\"" + Fixed(x + 3) +
           "\" y=\"" + Fixed(top - 14 + dy) + "\">" + Escape(label) + "</text>\n";
  };
  if (observed > 0) vline(observed, "observed", "observed " + FormatNumber(observed), 0);
  if (const auto& p = report.predicted_throughput) vline(*p, "predicted", "predicted " + FormatNumber(*p), 10);
  // Above the other two labels: the as-traced line often sits beside the observed one.
  if (report.as_traced.throughput) {
    const double t = *report.as_traced.throughput;
    vline(t, "as-traced", "as traced " + FormatNumber(t), -10);
  }
  svg += "</svg>\n";
  return svg;
}

// A node's size as a share of the cache budget, beside its bar: one
// decimal, as a column reads evenly ("20.7%", "5.2%"); from 1000% by the
// one rule ("12.3k%"), not "12345.6%".
std::string BudgetShare(double share) {
  return (std::fabs(share) < 9.9995 ? Fixed(share * 100) : FormatNumber(share * 100)) + "%";
}

std::string Bar(double share, const char* cls) {
  return "<span class=\"meter\"><span class=\"" + std::string(cls) + "\" style=\"width:" +
         Fixed(std::clamp(share, 0.0, 1.0) * 100) + "%\"></span></span>";
}

}  // namespace

std::string FormatHtml(const Analysis& report) {
  const schema::Pipeline& program = report.program_graph().program();
  const analysis::Plan* plan = report.plan ? &*report.plan : nullptr;
  std::string h;
  const std::string title = "plumber: " + (program.name().empty() ? report.source : program.name());
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"generator\" content=\"plumber analyze --format html\">\n";
  h += "<title>" + Escape(title) + "</title>\n<style>\n";
  h += "body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}"
       "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
       "table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #eee}"
       "td.n{text-align:right;font-variant-numeric:tabular-nums}"
       ".summary span{display:inline-block;margin-right:24px}.summary b{font-size:18px}"
       "svg text{font-size:12px;font-family:system-ui,Helvetica,Arial,sans-serif}svg text.name{font-weight:bold}"
       "svg text.edge,svg text.axis{fill:#555;font-size:11px}"
       "rect.bar{fill:#6a9fd4}rect.bar.bottleneck{fill:#d9534f}rect.reach{fill:#dde8f4}"
       "rect.unbounded{fill:#eee}line.observed{stroke:#222;stroke-width:2}"
       "line.predicted{stroke:#e08a00;stroke-width:2;stroke-dasharray:6 3}"
       "text.predicted-label{fill:#b06c00}line.as-traced{stroke:#7b3fa0;stroke-width:2;stroke-dasharray:2 3}"
       "text.as-traced-label{fill:#7b3fa0}"
       ".meter{display:inline-block;width:220px;height:12px;background:#eee;vertical-align:middle}"
       ".meter span{display:block;height:100%}.cores{background:#6a9fd4}.fits{background:#5cb85c}"
       ".nofit{background:#d9534f}.legend{color:#555;font-size:13px}\n";
  h += "</style>\n</head>\n<body>\n";
  h += "<h1>" + Escape(title) + "</h1>\n";
  h += "<p class=\"legend\">Trace " + Escape(report.source) + ", window " +
       FormatNumber(report.window_start_seconds) + " s to " + FormatNumber(report.window_end_seconds) +
       " s (" + FormatCount(report.minibatches, "minibatch", "minibatches") + "); machine " +
       Escape(CoresPlannedText(report)) +
       ", " + Escape(units::FormatBytes(static_cast<double>(report.memory_bytes))) + " memory" +
       (report.disk_bandwidth ? ", storage " + Escape(units::FormatRate(*report.disk_bandwidth)) : std::string()) +
       ".</p>\n";
  if (!report.imported_from.empty()) {
    h += "<p class=\"legend\" id=\"imported\">Imported from " + Escape(report.imported_from) +
         ". What the source cannot tell:</p>\n<ul class=\"legend\">\n";
    for (const auto& l : report.source_limits) h += "<li>" + Escape(l) + "</li>\n";
    h += "</ul>\n";
  }
  h += "<p class=\"summary\"><span>observed <b>" + Escape(ObservedText(report)) +
       "</b></span><span id=\"as-traced\">as traced <b>" + RateWithUnit(report.as_traced.throughput) + "</b>";
  if (report.as_traced.throughput) h += " (" + Escape(AsTracedHolder(report.as_traced, report.cores)) + ")";
  h += "</span><span>predicted <b>" + RateWithUnit(report.predicted_throughput) + "</b> with the best parallelism";
  if (!report.predicted_limit.empty()) h += " (" + Escape(report.predicted_limit) + "-bound)";
  h += "</span><span>bottleneck <b>" + Escape(report.bottleneck.empty() ? "none" : report.bottleneck) + "</b></span>";
  if (plan) h += "<span>after a rewrite <b>" + units::FormatMinibatchRate(plan->throughput) + "</b></span>";
  h += "</p>\n";

  h += "<h2>Pipeline</h2>\n<p class=\"legend\">Data flows left to right. Fill: red is the bottleneck, green far from "
       "it (the bottleneck's parallelism-scaled rate over the node's). Edge labels: the input's elements per "
       "minibatch (visit ratio); boxes give op x parallelism and the node's capacity now.</p>\n";
  // The plan, when there is one, decides the cache (it drops one nothing would replay).
  h += GraphSvg(report, plan ? plan->cache_node : report.cache_node);

  h += "<h2>Capacity of each stage</h2>\n<p class=\"legend\">Dark bars: what each stage can deliver at its "
       "parallelism now (red: the bottleneck); light bars: at the most cores it may use. Black line: observed "
       "throughput; dashed orange: predicted with the best parallelism; dotted purple: predicted as traced.</p>\n";
  h += RooflineSvg(report);

  h += "<h2>Threads as traced</h2>\n<p class=\"legend\">Nodes that share threads, as configured: a group "
       "delivers at most its threads over its service (CPU and waiting) per minibatch. The tightest group bounds "
       "the as-traced prediction.</p>\n";
  h += "<table id=\"thread-groups\"><tr><th>group</th><th>threads</th><th>service per minibatch</th>"
       "<th>bound (minibatches/s)</th><th>nodes</th></tr>\n";
  for (const auto& g : report.thread_groups) {
    std::string members;
    for (const auto& m : g.members) members += (members.empty() ? "" : ", ") + m;
    h += "<tr><td>" + Escape(g.name) + "</td><td class=\"n\">" + std::to_string(g.threads) +
         (g.serialized ? " (one at a time)" : "") + "</td><td class=\"n\">" +
         Escape(units::FormatSeconds(g.service_seconds_per_minibatch)) + "</td><td class=\"n\">" + RateText(g.bound) +
         "</td><td>" + Escape(members) + "</td></tr>\n";
  }
  if (report.thread_groups.empty()) h += "<tr><td colspan=\"5\">None.</td></tr>\n";
  h += "</table>\n";

  h += "<h2>Core allocation (LP)</h2>\n";
  if (plan) {
    h += "<p class=\"legend\">Cores the throughput program gives each stage to reach " +
         FormatNumber(plan->throughput) + " minibatches/s on " + FormatCount(plan->cores, "core", "cores") +
         (plan->cache_node.empty() ? "" : " with a cache at " + Escape(plan->cache_node)) +
         "; without a cache it reaches " + FormatNumber(plan->throughput_without_cache) +
         " (bound: " + Escape(plan->binding_without_cache) + ").</p>\n";
    h += "<table id=\"cores\"><tr><th>stage</th><th>CPU per minibatch</th><th>cores</th><th>max</th><th></th></tr>\n";
    for (const auto& s : plan->stages) {
      h += "<tr><td>" + Escape(s.name) + "</td><td class=\"n\">" +
           Escape(units::FormatSeconds(s.cpu_seconds_per_minibatch)) + "</td><td class=\"n\">" + Fixed(s.cores, 2) +
           "</td><td class=\"n\">" + FormatNumber(s.max_cores) + "</td><td>" +
           Bar(plan->cores > 0 ? s.cores / plan->cores : 0, "cores") + (s.active ? "" : " under the cache") +
           "</td></tr>\n";
    }
    h += "</table>\n";
  } else {
    h += "<p>No program was solved: nothing in the trace bounds the throughput.</p>\n";
  }

  h += "<h2>Cache</h2>\n";
  const double budget = plan ? plan->cache_budget_bytes : report.cache_budget_bytes;
  h += "<p class=\"legend\">Memory budget for a cache: " + Escape(units::FormatBytes(budget)) + " (memory " +
       Escape(units::FormatBytes(static_cast<double>(report.memory_bytes))) + " minus buffers " +
       Escape(units::FormatBytes(static_cast<double>(report.buffered_bytes))) + ", with headroom). Chosen: " +
       // The plan (when there is one) has the last word: it drops a cache
       // the analysis found room for when nothing would replay it.
       Escape(plan ? (plan->cache_node.empty() ? std::string("none")
                                               : plan->cache_node + " (" + units::FormatBytes(plan->cache_bytes) + ")")
              : report.cache_node.empty() ? std::string("none")
                                          : report.cache_node + " (" + units::FormatBytes(report.cache_bytes) + ")") +
       (plan && !plan->cache_note.empty() ? ". " + Escape(plan->cache_note) : "") + ".</p>\n";
  h += "<table id=\"cache\"><tr><th>node</th><th>materialized size</th><th>of the budget</th><th>cacheable</th></tr>\n";
  for (const auto& n : report.nodes) {
    if (!n.materialized_bytes) continue;
    const double share = budget > 0 ? *n.materialized_bytes / budget : 1;
    h += "<tr><td>" + Escape(n.name) + "</td><td class=\"n\">" + Escape(units::FormatBytes(*n.materialized_bytes)) +
         "</td><td>" + Bar(share, share <= 1 ? "fits" : "nofit") + " " + BudgetShare(share) + "</td><td>" +
         (n.cacheable ? "yes" : Escape("no" + (n.random_below.empty() ? "" : " (random: " + n.random_below + ")"))) +
         "</td></tr>\n";
  }
  h += "</table>\n";

  h += "<h2>Findings</h2>\n<ul id=\"findings\">\n";
  for (const auto& f : report.findings) h += "<li>" + Escape(f) + "</li>\n";
  if (report.findings.empty()) h += "<li>None.</li>\n";
  h += "</ul>\n";
  if (!report.warnings.empty()) {
    h += "<h2>Warnings</h2>\n<ul>\n";
    for (const auto& w : report.warnings) h += "<li>" + Escape(w) + "</li>\n";
    h += "</ul>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace plumber::report
