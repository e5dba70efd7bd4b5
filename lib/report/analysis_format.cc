// Text, markdown and JSON renderings of an Analysis; see analysis_format.h.
#include "report/analysis_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/number_format.h"
#include "base/units.h"
#include "report/rewrite_format.h"
#include "report/table.h"

namespace plumber::report {
namespace {

using Json = nlohmann::ordered_json;
using analysis::Analysis;
using analysis::Limit;
using analysis::LimitName;
using analysis::NodeModel;

Json Opt(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json CardinalityJson(const Cardinality& c) { return c.finite() ? Json(c.value) : Json(nullptr); }

Json NodeJson(const NodeModel& m) {
  Json j;
  j["name"] = m.name;
  j["op"] = m.op;
  j["parallelism"] = m.parallelism;
  j["visit_ratio"] = Num(m.visit_ratio);
  j["cpu_seconds_per_minibatch"] = Num(m.cpu_seconds_per_minibatch);
  j["rate_per_core"] = Opt(m.rate_per_core);
  j["cores_used"] = Opt(m.cores_used);
  j["bytes_per_element"] = Opt(m.bytes_per_element);
  j["disk_bytes_per_minibatch"] = Num(m.disk_bytes_per_minibatch);
  j["cardinality"] = CardinalityJson(m.cardinality);
  j["materialized_bytes"] = Opt(m.materialized_bytes);
  j["cacheable"] = m.cacheable;
  j["random"] = m.random;
  // Extras beyond the contract.
  j["elements"] = m.elements;
  j["cpu_seconds"] = Num(m.cpu_seconds);
  j["cores_now"] = Num(m.cores_now);
  j["max_cores"] = Num(m.max_cores);
  j["scaled_rate"] = Opt(m.scaled_rate);
  j["limit"] = LimitName(m.limit);
  j["limit_text"] = m.limit_text;
  j["cardinality_kind"] = m.cardinality.kind == Cardinality::Kind::kFinite     ? "finite"
                          : m.cardinality.kind == Cardinality::Kind::kInfinite ? "infinite"
                                                                               : "unknown";
  j["cardinality_exact"] = m.cardinality.finite() && m.cardinality.exact;
  if (m.cardinality.finite() && !m.cardinality.exact && m.cardinality.interval_known) {
    j["cardinality_interval"] = Json::array({Num(m.cardinality.lo), Num(m.cardinality.hi)});
    j["materialized_interval"] =
        m.materialized_lo ? Json::array({Num(*m.materialized_lo), Num(*m.materialized_hi)}) : Json(nullptr);
  } else {
    j["cardinality_interval"] = nullptr;
    j["materialized_interval"] = nullptr;
  }
  j["cardinality_note"] = m.cardinality.why;
  j["not_cacheable_because_random"] = m.random_below.empty() ? Json(nullptr) : Json(m.random_below);
  j["steady_state_cost"] = m.steady_state_cost;
  j["interleave"] = m.interleave.empty() ? Json(nullptr) : Json(m.interleave);
  j["wait_seconds"] = Num(m.wait_seconds);
  j["wait_seconds_per_minibatch"] = Num(m.wait_seconds_per_minibatch);
  j["service_seconds_per_minibatch"] = Num(m.service_seconds_per_minibatch);
  j["threads"] = m.threads;
  j["max_threads"] = Num(m.max_threads);
  j["threads_to_pass"] = Opt(m.threads_to_pass);
  j["storage_requests"] = m.storage_requests;
  j["request_latency_seconds"] = Opt(m.request_latency_seconds);
  j["imported_type"] = m.imported_type.empty() ? Json(nullptr) : Json(m.imported_type);
  return j;
}

// What an imported trace came from and what its source could not tell;
// null for plumber's own traces.
Json ImportedJson(const Analysis& r) {
  if (r.imported_from.empty()) return nullptr;
  return {{"from", r.imported_from}, {"cpu_is_wall_time", r.cpu_is_wall_time}, {"limits", r.source_limits}};
}

// The as_traced object of analyze's and rank's JSON.
Json AsTracedJson(const analysis::AsTraced& a) {
  Json restart = nullptr;
  if (a.restart) {
    restart = {{"repeat", a.restart->repeat},
               {"minibatches_per_epoch", a.restart->minibatches_per_epoch},
               {"fill_seconds", a.restart->fill_wait_seconds},
               {"drain_seconds", a.restart->drain_seconds}};
  }
  return {{"predicted_throughput", Opt(a.throughput)},
          {"bottleneck", a.bottleneck.empty() ? Json(nullptr) : Json(a.bottleneck)},
          {"limit", a.limit.empty() ? Json(nullptr) : Json(a.limit)},
          {"steady_throughput", Opt(a.steady_throughput)},
          {"epoch_restart", restart}};
}

std::string Fmt(double v) { return FormatNumber(v); }
std::string Fmt(const std::optional<double>& v, const char* none) { return v ? Fmt(*v) : none; }
std::string Rate(const std::optional<double>& v) { return v ? Fmt(*v) + " minibatches/s" : "unbounded"; }

std::string CardText(const NodeModel& m) {
  switch (m.cardinality.kind) {
    case Cardinality::Kind::kInfinite: return "infinite";
    case Cardinality::Kind::kUnknown: return "unknown";
    case Cardinality::Kind::kFinite: break;
  }
  if (!m.materialized_bytes) return "?";
  std::string s = units::FormatBytes(*m.materialized_bytes);
  if (!m.cardinality.exact) s = "~" + s;
  return s;
}

// "map", or "map (ParallelMapV2)" for an imported node.
std::string OpText(const NodeModel& m) {
  return m.imported_type.empty() ? m.op : m.op + " (" + m.imported_type + ")";
}

Table RankedTable(const Analysis& r) {
  Table t;
  // Times per minibatch carry their unit in each cell ("200 ms", "1.6 ns"),
  // so a header cannot be misread as megabytes.
  t.head = {"RANK",          "NODE",           "OP",        "PAR",        "VISITS",
            "CPU/MINIBATCH", "WAIT/MINIBATCH", "RATE/CORE", "CORES USED", "SCALED RATE",
            "BYTES/ELEMENT", "MATERIALIZED",   "CACHEABLE", "LIMIT"};
  int rank = 0;
  for (const auto& name : r.ranking) {
    const NodeModel* m = r.Find(name);
    t.rows.push_back({std::to_string(++rank), m->name, OpText(*m), std::to_string(m->parallelism),
                      Fmt(m->visit_ratio), units::FormatSeconds(m->cpu_seconds_per_minibatch),
                      units::FormatSeconds(m->wait_seconds_per_minibatch), Fmt(m->rate_per_core, "unbounded"),
                      Fmt(m->cores_used, "?"),
                      m->limit == Limit::kCached ? "-" : Fmt(m->scaled_rate, "unbounded"),
                      m->bytes_per_element ? units::FormatBytes(*m->bytes_per_element) : "-", CardText(*m),
                      m->cacheable ? "yes" : "no", LimitName(m->limit)});
  }
  return t;
}

const char* PredictedLimitText(const std::string& limit) {
  if (limit == "disk") return "storage-bound";
  if (limit == "wait") return "held by the threads its waiting stages may have";
  return "CPU-bound";
}

std::string AsTracedText(const Analysis& r) {
  if (!r.as_traced.throughput) return "unbounded";
  return Rate(r.as_traced.throughput) + " (" + AsTracedHolder(r.as_traced, r.cores) + ")";
}

// Threads as traced: who shares them and what they can deliver.
Table GroupTable(const Analysis& r) {
  Table t;
  t.head = {"THREADS OF", "THREADS", "SERVICE/MINIBATCH", "BOUND", "NODES"};
  for (const auto& g : r.thread_groups) {
    std::string members;
    for (const auto& m : g.members) members += (members.empty() ? "" : ", ") + m;
    t.rows.push_back({g.name, std::to_string(g.threads) + (g.serialized ? " (one at a time)" : ""),
                      units::FormatSeconds(g.service_seconds_per_minibatch), Fmt(g.bound, "unbounded"), members});
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> Summary(const Analysis& r) {
  std::vector<std::pair<std::string, std::string>> s;
  if (r.observed_throughput) {
    s.push_back({"window", Fmt(r.window_start_seconds) + " s to " + Fmt(r.window_end_seconds) + " s (" +
                               Fmt(r.window_seconds) + " s, " + FormatCount(r.minibatches, "minibatch", "minibatches") +
                               ", " + FormatCount(r.snapshots, "snapshot", "snapshots") + ")"});
  } else {
    // An imported dump's times are placeholders: only the counts are real.
    s.push_back({"window", "time unknown (" + FormatCount(r.minibatches, "minibatch", "minibatches") + ", " +
                               FormatCount(r.snapshots, "snapshot", "snapshots") + ")"});
  }
  std::string machine = CoresPlannedText(r) + ", " + units::FormatBytes(static_cast<double>(r.memory_bytes)) +
                        " memory for caching, storage ";
  machine += r.disk_bandwidth ? units::FormatRate(*r.disk_bandwidth) + " (" + r.disk_bandwidth_from + ")" : "unknown";
  s.push_back({"machine", machine});
  if (!r.imported_from.empty()) s.push_back({"imported from", r.imported_from});
  s.push_back({"observed throughput", r.observed_throughput ? Fmt(*r.observed_throughput) + " minibatches/s"
                                                            : std::string("unknown (the source does not record the "
                                                                          "time its counters cover)")});
  s.push_back({"as traced", AsTracedText(r)});
  s.push_back({"predicted throughput", r.predicted_throughput ? Rate(r.predicted_throughput) + " with the best parallelism (" +
                                                                   PredictedLimitText(r.predicted_limit) + ")"
                                                             : "unbounded"});
  std::string cpu = Rate(r.cpu_bound);
  if (r.cpu_bound) {
    cpu += r.cpu_bound_limit != "cores" ? " (" + r.cpu_bound_limit + "'s cap)"
           : r.cores == 1             ? std::string(" (the one core)")
                                      : std::string(" (all cores)");
  }
  std::string disk = r.disk_bound                     ? Rate(r.disk_bound)
                     : r.disk_bytes_per_minibatch > 0 ? "unknown bandwidth"
                                                      : "no storage read";
  std::string wait = r.wait_bound ? Rate(r.wait_bound) + " (" + r.wait_bound_group + ")" : "none";
  s.push_back({"bounds", "CPU " + cpu + ", storage " + disk + ", threads as traced " + wait});
  const NodeModel* b = r.Find(r.bottleneck);
  s.push_back({"bottleneck", b ? b->name + " (" + b->limit_text + ")" : "none"});
  s.push_back({"cache", r.cache_node.empty() ? "none fits " + units::FormatBytes(r.cache_budget_bytes)
                                             : r.cache_node + " (" + units::FormatBytes(r.cache_bytes) + " of a " +
                                                   units::FormatBytes(r.cache_budget_bytes) + " budget)"});
  return s;
}

}  // namespace

std::string CoresPlannedText(const Analysis& r) {
  const std::string n = FormatCount(r.cores, "core", "cores");
  if (r.cores_from == analysis::CoresFrom::kMachine && !r.effective_cores) return n;
  return n + " (" + r.cores_source + ")";
}

std::string AsTracedHolder(const analysis::AsTraced& a, int cores) {
  if (!a.throughput) return "";
  const char* held = a.limit == "threads"   ? "threads"
                     : a.limit == "storage" ? "storage"
                     : cores == 1           ? "the one core"
                                            : "the cores";
  return a.bottleneck + ", held by " + held;
}

std::string FormatAnalysisJson(const Analysis& r) {
  Json j;
  j["observed_throughput"] = Opt(r.observed_throughput);
  j["predicted_throughput"] = Opt(r.predicted_throughput);
  j["as_traced"] = AsTracedJson(r.as_traced);
  j["bottleneck"] = r.bottleneck.empty() ? Json(nullptr) : Json(r.bottleneck);
  j["ranking"] = r.ranking;
  j["bounds"] = {{"cpu", Opt(r.cpu_bound)},
                 {"disk", Opt(r.disk_bound)},
                 {"wait", Opt(r.wait_bound)},
                 {"wait_group", r.wait_bound_group.empty() ? Json(nullptr) : Json(r.wait_bound_group)},
                 {"cpu_uncapped", Opt(r.cpu_bound_uncapped)},
                 {"cpu_limit", r.cpu_bound_limit.empty() ? Json(nullptr) : Json(r.cpu_bound_limit)},
                 {"predicted_limit", r.predicted_limit.empty() ? Json(nullptr) : Json(r.predicted_limit)}};
  j["cache"] = r.cache_node.empty() ? Json(nullptr) : Json{{"node", r.cache_node}, {"bytes", Num(r.cache_bytes)}};
  j["machine"] = {{"cores", r.cores},
                  {"cores_from", analysis::CoresFromName(r.cores_from)},
                  {"cores_source", r.cores_source},
                  {"machine_cores", r.machine_cores},
                  {"effective_cores", Opt(r.effective_cores)},
                  {"memory_bytes", r.memory_bytes},
                  {"disk_bandwidth_bytes_per_s", Opt(r.disk_bandwidth)},
                  {"total_memory_bytes", r.total_memory_bytes},
                  {"cache_budget_bytes", Num(r.cache_budget_bytes)},
                  {"buffered_bytes", r.buffered_bytes}};
  Json nodes = Json::array();
  for (const auto& m : r.nodes) nodes.push_back(NodeJson(m));
  j["nodes"] = nodes;
  j["trace"] = r.source;
  j["program"] = r.program_name();
  const bool timed = r.observed_throughput.has_value();
  j["window"] = {{"start_seconds", timed ? Num(r.window_start_seconds) : Json(nullptr)},
                 {"end_seconds", timed ? Num(r.window_end_seconds) : Json(nullptr)},
                 {"seconds", timed ? Num(r.window_seconds) : Json(nullptr)},
                 {"minibatches", r.minibatches},
                 {"snapshots", r.snapshots}};
  j["consumer_wait"] = r.consumer_wait_seconds ? Json{{"mean_seconds", Num(*r.consumer_wait_seconds)},
                                                      {"fraction_of_window", Opt(r.consumer_wait_fraction)}}
                                               : Json(nullptr);
  j["imported"] = ImportedJson(r);
  j["cpu_seconds_per_minibatch"] = Num(r.cpu_seconds_per_minibatch);
  j["wait_seconds_per_minibatch"] = Num(r.wait_seconds_per_minibatch);
  j["wait_traced"] = r.wait_traced;
  j["disk_bytes_per_minibatch"] = Num(r.disk_bytes_per_minibatch);
  Json groups = Json::array();
  for (const auto& g : r.thread_groups) {
    groups.push_back({{"name", g.name},
                      {"owner", g.owner.empty() ? Json(nullptr) : Json(g.owner)},
                      {"threads", g.threads},
                      {"serialized", g.serialized},
                      {"members", g.members},
                      {"service_seconds_per_minibatch", Num(g.service_seconds_per_minibatch)},
                      {"bound", Opt(g.bound)}});
  }
  j["thread_groups"] = groups;
  Json sources = Json::array();
  for (const auto& s : r.sources) {
    const bool known = s.dataset_bytes && s.interval_known;
    sources.push_back({{"node", s.node},
                       {"files", s.files ? Json(*s.files) : Json(nullptr)},
                       {"files_completed", s.files_completed},
                       {"mean_file_bytes", Num(s.mean_file_bytes)},
                       {"mean_records_per_file", Num(s.mean_records_per_file)},
                       {"dataset_bytes", Opt(s.dataset_bytes)},
                       {"dataset_bytes_stderr", known ? Num(s.dataset_bytes_stderr) : Json(nullptr)},
                       {"interval_multiplier", known ? Num(s.interval_multiplier) : Json(nullptr)},
                       {"dataset_bytes_interval",
                        known ? Json::array({Num(s.dataset_bytes_lo), Num(s.dataset_bytes_hi)}) : Json(nullptr)},
                       {"exact", s.exact}});
  }
  j["sources"] = sources;
  j["findings"] = r.findings;
  j["warnings"] = r.warnings;
  j["plan"] = r.plan ? PlanJson(*r.plan) : Json(nullptr);
  return j.dump(2) + "\n";
}

std::string FormatAnalysisText(const Analysis& r) {
  std::string out = "plumber analyze: " + r.source + " (program '" + r.program_name() + "')\n";
  for (const auto& [k, v] : Summary(r)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-22s", (k + ":").c_str());
    out += buf + v + "\n";
  }
  if (!r.source_limits.empty()) {
    out += "\nwhat the source cannot tell:\n";
    for (const auto& l : r.source_limits) out += "  - " + l + "\n";
  }
  out += "\nranking (slowest first; rates in minibatches/s):\n" + RankedTable(r).Text();
  out += "\nthreads as traced (a group delivers at most threads / service):\n" + GroupTable(r).Text();
  out += "\nfindings:\n";
  for (const auto& f : r.findings) out += "  - " + f + "\n";
  if (!r.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const auto& w : r.warnings) out += "  - " + w + "\n";
  }
  if (r.plan) out += "\nplan: the LP's continuous optimum (GLPK, fractional cores; `plumber rewrite` predicts the pipeline it "
                      "emits):\n" + PlanText(*r.plan);
  return out;
}

std::string FormatAnalysisMarkdown(const Analysis& r) {
  std::string out = "# plumber analyze: `" + r.source + "`\n\nProgram `" + r.program_name() + "`.\n\n";
  for (const auto& [k, v] : Summary(r)) out += "- **" + k + "**: " + v + "\n";
  if (!r.source_limits.empty()) {
    out += "\n## What the source cannot tell\n\n";
    for (const auto& l : r.source_limits) out += "- " + l + "\n";
  }
  out += "\n## Ranking (slowest first; rates in minibatches/s)\n\n" + RankedTable(r).Markdown();
  out += "\n## Threads as traced\n\nA group of threads delivers at most threads / service.\n\n" + GroupTable(r).Markdown();
  out += "\n## Findings\n\n";
  for (const auto& f : r.findings) out += "- " + f + "\n";
  if (!r.warnings.empty()) {
    out += "\n## Warnings\n\n";
    for (const auto& w : r.warnings) out += "- " + w + "\n";
  }
  if (r.plan) out += "\n## Plan: the LP's continuous optimum (GLPK, fractional cores)\n\n```\n" + PlanText(*r.plan) + "```\n";
  return out;
}

std::string FormatRankText(const Analysis& r, int top) {
  Table t;
  t.head = {"RANK", "NODE", "OP", "SCALED RATE", "CORES NOW", "MAX CORES", "RATE/CORE", "LIMIT"};
  const int n = top > 0 ? std::min<int>(top, static_cast<int>(r.ranking.size())) : static_cast<int>(r.ranking.size());
  for (int i = 0; i < n; ++i) {
    const NodeModel* m = r.Find(r.ranking[i]);
    t.rows.push_back({std::to_string(i + 1), m->name, OpText(*m),
                      m->limit == Limit::kCached ? "-" : Fmt(m->scaled_rate, "unbounded"), Fmt(m->cores_now),
                      Fmt(m->max_cores), Fmt(m->rate_per_core, "unbounded"), m->limit_text});
  }
  std::string out;
  if (!r.imported_from.empty()) out += "imported from " + r.imported_from + "\n";
  out += "rates in minibatches/s; observed " + Fmt(r.observed_throughput, "unknown") + "; as traced " + AsTracedText(r);
  // MAX CORES and the scaled rates depend on the cores: said when they are
  // not simply the machine's.
  if (r.cores_from != analysis::CoresFrom::kMachine || r.effective_cores) {
    out += "; planned for " + CoresPlannedText(r);
  }
  return out + "\n" + t.Text();
}

std::string FormatRankJson(const Analysis& r, int top) {
  Json rows = Json::array();
  const int n = top > 0 ? std::min<int>(top, static_cast<int>(r.ranking.size())) : static_cast<int>(r.ranking.size());
  for (int i = 0; i < n; ++i) {
    const NodeModel* m = r.Find(r.ranking[i]);
    rows.push_back({{"rank", i + 1},
                    {"name", m->name},
                    {"op", m->op},
                    {"scaled_rate", Opt(m->scaled_rate)},
                    {"cores_now", Num(m->cores_now)},
                    {"max_cores", Num(m->max_cores)},
                    {"rate_per_core", Opt(m->rate_per_core)},
                    {"limit", LimitName(m->limit)},
                    {"limit_text", m->limit_text}});
  }
  Json j;
  j["bottleneck"] = r.bottleneck.empty() ? Json(nullptr) : Json(r.bottleneck);
  j["observed_throughput"] = Opt(r.observed_throughput);
  j["as_traced"] = AsTracedJson(r.as_traced);
  j["ranking"] = rows;
  j["cores"] = r.cores;
  j["cores_from"] = analysis::CoresFromName(r.cores_from);
  j["cores_source"] = r.cores_source;
  j["effective_cores"] = Opt(r.effective_cores);
  j["imported"] = ImportedJson(r);
  j["warnings"] = r.warnings;
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
