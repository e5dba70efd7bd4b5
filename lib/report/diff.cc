// plumber diff: programs compared field by field through their JSON form
// (so every parameter, present or future, is covered without a list of
// fields to forget), and traces compared through their analyses.
#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/analyze.h"
#include "base/number_format.h"
#include "base/units.h"
#include "traceio/format.h"
#include "traceio/import.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::report {
namespace {

using Json = nlohmann::ordered_json;

// Leaves of a JSON value by path: {"map": {"parallelism": 4}} -> "map.parallelism" = 4.
void Flatten(const nlohmann::json& v, const std::string& path, std::map<std::string, std::string>* out) {
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) Flatten(child, path.empty() ? k : path + "." + k, out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) Flatten(v[i], path + "[" + std::to_string(i) + "]", out);
    if (v.empty()) (*out)[path] = "[]";
  } else {
    (*out)[path] = v.dump();
  }
}

std::map<std::string, std::string> NodeFields(const schema::Node& node) {
  std::map<std::string, std::string> fields;
  Flatten(nlohmann::json::parse(MessageToJson(node)), "", &fields);
  fields.erase("name");
  return fields;
}

std::string Num(std::optional<double> v) { return v ? FormatNumber(*v) : "unbounded"; }

std::string Change(const Compared& c) {
  auto ch = c.change();
  if (!ch) {
    if (c.a.has_value() != c.b.has_value()) return "changed";
    return "";
  }
  if (std::fabs(*ch) < 0.0005) return "=";
  return FormatChange(*ch);
}

Json CompareJson(const Compared& c) {
  Json j;
  j["a"] = c.a ? Json(*c.a) : Json(nullptr);
  j["b"] = c.b ? Json(*c.b) : Json(nullptr);
  auto ch = c.change();
  j["change"] = ch ? Json(*ch) : Json(nullptr);
  return j;
}

const schema::Node* NodeNamed(const schema::Pipeline& p, const std::string& name) {
  for (const auto& n : p.nodes()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

bool SameInputs(const schema::Node& x, const google::protobuf::RepeatedPtrField<std::string>& inputs) {
  return std::equal(x.inputs().begin(), x.inputs().end(), inputs.begin(), inputs.end());
}

// Drops the field changes of `node` whose path starts with one of
// `prefixes`: what a shape change explains.
void Explained(Diff* d, const std::string& node, std::initializer_list<const char*> prefixes) {
  for (auto& nc : d->changed) {
    if (nc.node != node) continue;
    std::erase_if(nc.changes, [&](const FieldChange& c) {
      return std::any_of(prefixes.begin(), prefixes.end(),
                         [&](const char* p) { return c.field.rfind(p, 0) == 0; });
    });
  }
  std::erase_if(d->changed, [](const NodeFieldChanges& nc) { return nc.changes.empty(); });
}

// Drops the input changes from `from` to `to`: readers a shape change
// rewired.
void Rewired(Diff* d, const std::string& from, const std::string& to) {
  const std::string was = "\"" + from + "\"", now = "\"" + to + "\"";
  for (auto& nc : d->changed) {
    std::erase_if(nc.changes, [&](const FieldChange& c) {
      return c.field.rfind("inputs", 0) == 0 && c.a == was && c.b == now;
    });
  }
  std::erase_if(d->changed, [](const NodeFieldChanges& nc) { return nc.changes.empty(); });
}

// The moves and fusions of the shape rewrite (rewrite/shape_edits.h),
// found from the two programs alone.
void FindShapeChanges(const schema::Pipeline& a, const schema::Pipeline& b, Diff* d) {
  // A map of `a` gone from `b`, whose only consumer is a map in `b` that
  // now runs its steps first and reads what it read.
  for (auto it = d->removed.begin(); it != d->removed.end();) {
    const schema::Node* x = NodeNamed(a, *it);
    const schema::Node* consumer = nullptr;
    int consumers = 0;
    for (const auto& n : a.nodes()) {
      if (n.inputs_size() == 1 && n.inputs(0) == *it) consumer = &n, ++consumers;
    }
    const schema::Node* fused = consumer != nullptr ? NodeNamed(b, consumer->name()) : nullptr;
    bool is_fusion = x != nullptr && x->has_map() && consumers == 1 && consumer->has_map() && fused != nullptr &&
                     fused->has_map() && SameInputs(*fused, x->inputs()) &&
                     fused->map().udf_size() == x->map().udf_size() + consumer->map().udf_size();
    for (int k = 0; is_fusion && k < fused->map().udf_size(); ++k) {
      const auto& want = k < x->map().udf_size() ? x->map().udf(k) : consumer->map().udf(k - x->map().udf_size());
      is_fusion = MessageToJson(want) == MessageToJson(fused->map().udf(k));
    }
    if (!is_fusion) {
      ++it;
      continue;
    }
    d->fused.push_back({*it, fused->name()});
    Explained(d, fused->name(), {"inputs", "map.udf"});
    it = d->removed.erase(it);
  }
  // A filter of `a` gone from `b`, whose only input, a map, now tests the
  // filter's predicate (keep_if) and is read by what read the filter.
  for (auto it = d->removed.begin(); it != d->removed.end();) {
    const schema::Node* f = NodeNamed(a, *it);
    const schema::Node* m = f != nullptr && f->has_filter() && f->inputs_size() == 1 ? NodeNamed(a, f->inputs(0)) : nullptr;
    const schema::Node* m_b = m != nullptr ? NodeNamed(b, m->name()) : nullptr;
    const bool is_fusion = m != nullptr && m->has_map() && m->map().keep_if().empty() && m_b != nullptr &&
                           m_b->has_map() && m_b->map().keep_if_size() == f->filter().predicate_size() &&
                           std::equal(f->filter().predicate().begin(), f->filter().predicate().end(),
                                      m_b->map().keep_if().begin(), [](const auto& x, const auto& y) {
                                        return MessageToJson(x) == MessageToJson(y);
                                      });
    if (!is_fusion) {
      ++it;
      continue;
    }
    d->fused.push_back({*it, m->name(), true});
    Explained(d, m->name(), {"map.keep_if"});
    // What read the filter reads the map now: the fusion, not a change of its own.
    Rewired(d, *it, m->name());
    it = d->removed.erase(it);
  }
  // `n` reads what `m` read and `m` reads `n`, where `n` read `m`.
  for (const auto& n : a.nodes()) {
    if (n.inputs_size() != 1) continue;
    const schema::Node* m = NodeNamed(a, n.inputs(0));
    const schema::Node* n_b = NodeNamed(b, n.name());
    const schema::Node* m_b = m != nullptr ? NodeNamed(b, m->name()) : nullptr;
    if (m == nullptr || n_b == nullptr || m_b == nullptr) continue;
    if (m_b->inputs_size() == 1 && m_b->inputs(0) == n.name() && SameInputs(*n_b, m->inputs())) {
      d->moved.push_back({n.name(), m->name()});
      Explained(d, n.name(), {"inputs"});
      Explained(d, m->name(), {"inputs"});
      // What read `n` reads `m` now: the move, not a change of its own.
      Rewired(d, n.name(), m->name());
    }
  }
}

std::string Pad(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }

}  // namespace

std::optional<double> Compared::change() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return *b / *a - 1;
}

Diff DiffPrograms(const schema::Pipeline& a, const schema::Pipeline& b) {
  Diff d;
  d.a_kind = d.b_kind = "pipeline";
  std::map<std::string, const schema::Node*> in_a, in_b;
  for (const auto& n : a.nodes()) in_a[n.name()] = &n;
  for (const auto& n : b.nodes()) in_b[n.name()] = &n;
  for (const auto& n : a.nodes()) {
    if (!in_b.count(n.name())) d.removed.push_back(n.name());
  }
  for (const auto& n : b.nodes()) {
    auto it = in_a.find(n.name());
    if (it == in_a.end()) {
      d.added.push_back(n.name());
      continue;
    }
    const auto fa = NodeFields(*it->second);
    const auto fb = NodeFields(n);
    NodeFieldChanges nc{n.name(), {}};
    for (const auto& [field, va] : fa) {
      auto jt = fb.find(field);
      if (jt == fb.end()) nc.changes.push_back({field, va, "-"});
      else if (jt->second != va) nc.changes.push_back({field, va, jt->second});
    }
    for (const auto& [field, vb] : fb) {
      if (!fa.count(field)) nc.changes.push_back({field, "-", vb});
    }
    if (!nc.changes.empty()) d.changed.push_back(std::move(nc));
  }
  FindShapeChanges(a, b, &d);
  return d;
}

Diff DiffTraces(const analysis::Analysis& a, const analysis::Analysis& b) {
  Diff d = DiffPrograms(a.program_graph().program(), b.program_graph().program());
  d.a_kind = d.b_kind = "trace";
  d.has_metrics = true;
  const double mb_a = static_cast<double>(std::max<int64_t>(a.minibatches, 1));
  const double mb_b = static_cast<double>(std::max<int64_t>(b.minibatches, 1));
  for (const auto& nb : b.nodes) {
    const analysis::NodeModel* na = a.Find(nb.name);
    if (!na) continue;
    NodeMetricsDiff m;
    m.node = nb.name;
    m.visit_ratio = {na->visit_ratio, nb.visit_ratio};
    m.cpu_seconds_per_minibatch = {na->cpu_seconds_per_minibatch, nb.cpu_seconds_per_minibatch};
    m.rate_per_core = {na->rate_per_core, nb.rate_per_core};
    m.bytes_per_minibatch = {static_cast<double>(na->bytes) / mb_a, static_cast<double>(nb.bytes) / mb_b};
    m.cores_used = {na->cores_used, nb.cores_used};
    d.nodes.push_back(std::move(m));
  }
  d.bottleneck_a = a.bottleneck;
  d.bottleneck_b = b.bottleneck;
  d.predicted_throughput = {a.predicted_throughput, b.predicted_throughput};
  d.as_traced_throughput = {a.as_traced.throughput, b.as_traced.throughput};
  d.as_traced_bottleneck_a = a.as_traced.bottleneck;
  d.as_traced_bottleneck_b = b.as_traced.bottleneck;
  d.observed_throughput = {a.observed_throughput, b.observed_throughput};
  d.cpu_seconds_per_minibatch = {a.cpu_seconds_per_minibatch, b.cpu_seconds_per_minibatch};
  return d;
}

StatusOr<Diff> DiffFiles(Env* env, const std::string& a, const std::string& b, std::vector<std::string>* warnings) {
  struct Side {
    bool trace = false;
    schema::Pipeline program;
    std::optional<analysis::Analysis> report;
  };
  auto load = [&](const std::string& path) -> StatusOr<Side> {
    Side s;
    PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path));
    if (IsTraceOrDump(bytes)) {
      s.trace = true;
      PLUMBER_ASSIGN_OR_RETURN(auto report, analysis::AnalyzeTraceFile(env, path, {}));
      s.program = report.program_graph().program();
      if (warnings) {
        for (const auto& w : report.warnings) warnings->push_back(w.rfind(path, 0) == 0 ? w : path + ": " + w);
      }
      s.report = std::move(report);
    } else {
      PLUMBER_ASSIGN_OR_RETURN(s.program, ParsePipeline(bytes, path));
    }
    return s;
  };
  PLUMBER_ASSIGN_OR_RETURN(Side sa, load(a));
  PLUMBER_ASSIGN_OR_RETURN(Side sb, load(b));
  Diff d = sa.trace && sb.trace ? DiffTraces(*sa.report, *sb.report)
                                : DiffPrograms(sa.program, sb.program);
  d.a = a;
  d.b = b;
  d.a_kind = sa.trace ? "trace" : "pipeline";
  d.b_kind = sb.trace ? "trace" : "pipeline";
  return d;
}

std::string FormatDiffText(const Diff& d) {
  std::string out;
  out += "a: " + d.a + " (" + d.a_kind + ")\n";
  out += "b: " + d.b + " (" + d.b_kind + ")\n";
  if (!d.has_metrics && (d.a_kind == "trace" || d.b_kind == "trace")) {
    out += "(a trace against a pipeline: only the programs are compared)\n";
  }
  out += "\nprogram:";
  if (d.programs_equal()) out += " unchanged\n";
  else out += "\n";
  for (const auto& n : d.added) out += "  + " + n + " (added)\n";
  for (const auto& n : d.removed) out += "  - " + n + " (removed)\n";
  for (const auto& m : d.moved) out += "  ^ " + m.node + " (moved above " + m.other + ")\n";
  for (const auto& f : d.fused) {
    out += "  * " + f.node + " (fused into " + f.other +
           (f.filter ? ": its predicate runs last there)\n" : ": its steps run first there)\n");
  }
  for (const auto& nc : d.changed) {
    for (const auto& c : nc.changes) out += "  ~ " + nc.node + ": " + c.field + " " + c.a + " -> " + c.b + "\n";
  }
  if (!d.has_metrics) return out;

  out += "\nper node (A -> B; costs per minibatch):\n";
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "CPU A", "CPU B", "CPU +-", "RATE/CORE A", "RATE/CORE B", "BYTES A", "BYTES B", "BYTES +-"}};
  for (const auto& m : d.nodes) {
    auto secs = [](std::optional<double> v) { return v ? units::FormatSeconds(*v) : std::string("-"); };
    auto bytes = [](std::optional<double> v) { return v ? units::FormatBytes(*v) : std::string("-"); };
    rows.push_back({m.node, secs(m.cpu_seconds_per_minibatch.a), secs(m.cpu_seconds_per_minibatch.b),
                    Change(m.cpu_seconds_per_minibatch), Num(m.rate_per_core.a), Num(m.rate_per_core.b),
                    bytes(m.bytes_per_minibatch.a), bytes(m.bytes_per_minibatch.b), Change(m.bytes_per_minibatch)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line = " ";
    for (size_t i = 0; i < r.size(); ++i) line += " " + (i + 1 < r.size() ? Pad(r[i], width[i]) : r[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += "\n";
  const std::string ba = d.bottleneck_a.empty() ? "none" : d.bottleneck_a;
  const std::string bb = d.bottleneck_b.empty() ? "none" : d.bottleneck_b;
  out += "bottleneck: " + (ba == bb ? ba + " (unchanged)" : ba + " -> " + bb + " (shifted)") + "\n";
  auto line = [&](const char* what, const Compared& c, const char* unit) {
    std::string s = std::string(what) + ": " + Num(c.a) + " -> " + Num(c.b) + " " + unit;
    const std::string ch = Change(c);
    if (!ch.empty()) s += " (" + (ch == "=" ? std::string("unchanged") : ch) + ")";
    out += s + "\n";
  };
  line("predicted throughput", d.predicted_throughput, "minibatches/s");
  line("as-traced throughput", d.as_traced_throughput, "minibatches/s");
  const std::string ta = d.as_traced_bottleneck_a.empty() ? "none" : d.as_traced_bottleneck_a;
  const std::string tb = d.as_traced_bottleneck_b.empty() ? "none" : d.as_traced_bottleneck_b;
  out += "as-traced bottleneck: " + (ta == tb ? ta + " (unchanged)" : ta + " -> " + tb + " (shifted)") + "\n";
  line("observed throughput", d.observed_throughput, "minibatches/s");
  out += "CPU per minibatch: " + units::FormatSeconds(d.cpu_seconds_per_minibatch.a.value_or(0)) + " -> " +
         units::FormatSeconds(d.cpu_seconds_per_minibatch.b.value_or(0));
  const std::string ch = Change(d.cpu_seconds_per_minibatch);
  if (!ch.empty()) out += " (" + (ch == "=" ? std::string("unchanged") : ch) + ")";
  out += "\n";
  return out;
}

std::string FormatDiffJson(const Diff& d) {
  Json j;
  j["a"] = {{"path", d.a}, {"kind", d.a_kind}};
  j["b"] = {{"path", d.b}, {"kind", d.b_kind}};
  j["added"] = d.added;
  j["removed"] = d.removed;
  j["moved"] = Json::array();
  for (const auto& m : d.moved) j["moved"].push_back({{"node", m.node}, {"above", m.other}});
  j["fused"] = Json::array();
  for (const auto& f : d.fused) {
    j["fused"].push_back({{"node", f.node}, {"into", f.other}, {"as", f.filter ? "filter" : "map"}});
  }
  j["changed"] = Json::array();
  for (const auto& nc : d.changed) {
    Json changes = Json::array();
    for (const auto& c : nc.changes) {
      changes.push_back({{"field", c.field},
                         {"a", c.a == "-" ? Json(nullptr) : Json::parse(c.a)},
                         {"b", c.b == "-" ? Json(nullptr) : Json::parse(c.b)}});
    }
    j["changed"].push_back({{"node", nc.node}, {"changes", changes}});
  }
  if (d.has_metrics) {
    j["nodes"] = Json::array();
    for (const auto& m : d.nodes) {
      j["nodes"].push_back({{"name", m.node},
                            {"visit_ratio", CompareJson(m.visit_ratio)},
                            {"cpu_seconds_per_minibatch", CompareJson(m.cpu_seconds_per_minibatch)},
                            {"rate_per_core", CompareJson(m.rate_per_core)},
                            {"bytes_per_minibatch", CompareJson(m.bytes_per_minibatch)},
                            {"cores_used", CompareJson(m.cores_used)}});
    }
    auto name = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    j["bottleneck"] = {{"a", name(d.bottleneck_a)}, {"b", name(d.bottleneck_b)},
                       {"shifted", d.bottleneck_a != d.bottleneck_b}};
    j["predicted_throughput"] = CompareJson(d.predicted_throughput);
    // Shaped like analyze's "as_traced" object.
    j["as_traced"] = {{"predicted_throughput", CompareJson(d.as_traced_throughput)},
                      {"bottleneck",
                       {{"a", name(d.as_traced_bottleneck_a)},
                        {"b", name(d.as_traced_bottleneck_b)},
                        {"shifted", d.as_traced_bottleneck_a != d.as_traced_bottleneck_b}}}};
    j["observed_throughput"] = CompareJson(d.observed_throughput);
    j["cpu_seconds_per_minibatch"] = CompareJson(d.cpu_seconds_per_minibatch);
  }
  return j.dump(2) + "\n";
}

}  // namespace plumber::report
