// Conditions of `plumber check`: parsing (flags and config file) and
// evaluation against an analysed trace and, optionally, a baseline trace.
#include "report/check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "base/number_format.h"
#include "analysis/analyze.h"
#include "base/units.h"
#include "report/analysis_format.h"

namespace plumber::report {
namespace {

std::string Percent(double share) { return FormatChange(share); }

std::string Throughput(std::optional<double> v) {
  return v ? units::FormatMinibatchRate(*v) : std::string("unbounded");
}

// "25 minibatches/s (burn, held by threads)": the as-traced prediction with
// what holds it, as analyze says it.
std::string AsTraced(const analysis::Analysis& r) {
  const analysis::AsTraced& a = r.as_traced;
  return a.throughput ? Throughput(a.throughput) + " (" + AsTracedHolder(a, r.cores) + ")" : Throughput(std::nullopt);
}

// Paths in a config file are relative to the file, so a config committed
// beside its traces works from any working directory.
std::string Resolve(const std::string& path, const std::string& base_dir) {
  std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

// A value that may be written as a JSON number or as text with units.
StatusOr<std::string> ValueText(const nlohmann::json& v, const std::string& where, bool allow_number) {
  if (v.is_string()) return v.get<std::string>();
  // Parsed back at once: every digit (17 give the double back), never an
  // exponent, which the unit parsers would read as a unit.
  if (allow_number && v.is_number()) return FormatSignificant(v.get<double>(), 17);
  return Status::InvalidArgument(where + ": expected " + (allow_number ? "a number or a string" : "a string") +
                                 " with its unit, got " + v.dump());
}

StatusOr<CheckConditions> ParseConditions(const nlohmann::json& obj, const std::string& where,
                                          const std::string& base_dir, bool top_level) {
  CheckConditions c;
  for (const auto& [key, value] : obj.items()) {
    const std::string at = where + ": '" + key + "'";
    auto wrap = [&](const Status& s) { return Status::InvalidArgument(at + ": " + s.message()); };
    if (key == "min_throughput" || key == "min_predicted" || key == "min_as_traced") {
      PLUMBER_ASSIGN_OR_RETURN(std::string text, ValueText(value, at, true));
      auto rate = ParseThroughput(text);
      if (!rate.ok()) return wrap(rate.status());
      (key == "min_throughput"  ? c.min_throughput
       : key == "min_predicted" ? c.min_predicted
                                : c.min_as_traced) = *rate;
    } else if (key == "max_cpu_per_batch") {
      PLUMBER_ASSIGN_OR_RETURN(std::string text, ValueText(value, at, false));
      auto seconds = ParseCpuPerBatch(text);
      if (!seconds.ok()) return wrap(seconds.status());
      c.max_cpu_per_batch = *seconds;
    } else if (key == "tolerance") {
      PLUMBER_ASSIGN_OR_RETURN(std::string text, ValueText(value, at, true));
      auto share = units::ParseFraction(text);
      if (!share.ok()) return wrap(share.status());
      c.tolerance = *share;
    } else if (key == "expect_bottleneck" || key == "baseline") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return Status::InvalidArgument(at + ": expected a non-empty string, got " + value.dump());
      }
      if (key == "baseline") c.baseline = Resolve(value.get<std::string>(), base_dir);
      else c.expect_bottleneck = value.get<std::string>();
    } else if ((top_level && key == "traces") || (!top_level && key == "trace") || key == "comment") {
      // Handled by the caller; "comment" lets a config say why a threshold is what it is.
    } else {
      return Status::InvalidArgument(at + ": unknown key (expected min_throughput, min_predicted, "
                                     "min_as_traced, max_cpu_per_batch, expect_bottleneck, baseline, tolerance" +
                                     std::string(top_level ? ", traces" : ", trace") + ", comment)");
    }
  }
  return c;
}

}  // namespace

bool CheckConditions::empty() const {
  return !min_throughput && !min_predicted && !min_as_traced && !max_cpu_per_batch && !expect_bottleneck &&
         !baseline;
}

void CheckConditions::MergeFrom(const CheckConditions& over) {
  if (over.min_throughput) min_throughput = over.min_throughput;
  if (over.min_predicted) min_predicted = over.min_predicted;
  if (over.min_as_traced) min_as_traced = over.min_as_traced;
  if (over.max_cpu_per_batch) max_cpu_per_batch = over.max_cpu_per_batch;
  if (over.expect_bottleneck) expect_bottleneck = over.expect_bottleneck;
  if (over.baseline) baseline = over.baseline;
  if (over.tolerance) tolerance = over.tolerance;
}

StatusOr<double> ParseThroughput(std::string_view text) {
  auto rate = units::ParseRate(text);
  if (!rate.ok()) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not a throughput (expected minibatches per "
                                   "second, e.g. 30 or 30/s)");
  }
  return *rate;
}

StatusOr<double> ParseCpuPerBatch(std::string_view text) {
  PLUMBER_ASSIGN_OR_RETURN(double seconds, units::ParseSeconds(text));
  std::string_view t = text;
  while (!t.empty() && (t.back() == ' ')) t.remove_suffix(1);
  if (!t.empty() && (std::isdigit(static_cast<unsigned char>(t.back())) || t.back() == '.')) {
    return Status::InvalidArgument("'" + std::string(text) + "' needs a unit (e.g. '" + std::string(t) +
                                   "ms' or '" + std::string(t) + "s')");
  }
  return seconds;
}

StatusOr<CheckConfig> ParseCheckConfig(std::string_view json, const std::string& source, const std::string& base_dir) {
  nlohmann::json root = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument(source + ": not valid JSON");
  if (!root.is_object()) return Status::InvalidArgument(source + ": expected a JSON object at the top");
  CheckConfig config;
  PLUMBER_ASSIGN_OR_RETURN(config.defaults, ParseConditions(root, source, base_dir, true));
  if (root.contains("traces")) {
    const auto& traces = root["traces"];
    if (!traces.is_array()) return Status::InvalidArgument(source + ": 'traces': expected an array of objects");
    for (size_t i = 0; i < traces.size(); ++i) {
      const std::string where = source + ": traces[" + std::to_string(i) + "]";
      const auto& t = traces[i];
      if (!t.is_object()) return Status::InvalidArgument(where + ": expected an object");
      if (!t.contains("trace") || !t["trace"].is_string() || t["trace"].get<std::string>().empty()) {
        return Status::InvalidArgument(where + ": 'trace': expected the path of a trace");
      }
      CheckEntry entry;
      entry.trace = Resolve(t["trace"].get<std::string>(), base_dir);
      PLUMBER_ASSIGN_OR_RETURN(entry.conditions, ParseConditions(t, where, base_dir, false));
      config.traces.push_back(std::move(entry));
    }
  }
  return config;
}

StatusOr<CheckConfig> LoadCheckConfig(Env* env, const std::string& path) {
  PLUMBER_ASSIGN_OR_RETURN(std::string text, ReadFileToString(env, path, uint64_t{1} << 24));
  return ParseCheckConfig(text, path, std::filesystem::path(path).parent_path().string());
}

CheckConditions ConditionsFor(const CheckConfig& config, const std::string& trace) {
  // Absolute forms, so "traces/x.json" from the repository root and
  // "/ci/repo/traces/x.json" name the same entry (no file system access:
  // only the working directory is read).
  auto key = [](const std::string& p) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(std::filesystem::path(p), ec);
    return (ec ? std::filesystem::path(p) : abs).lexically_normal().string();
  };
  CheckConditions c = config.defaults;
  const std::string want = key(trace);
  for (const auto& entry : config.traces) {
    if (key(entry.trace) == want) c.MergeFrom(entry.conditions);
  }
  return c;
}

bool CheckOutcome::ok() const {
  for (const auto& r : results) {
    if (!r.ok) return false;
  }
  return true;
}

StatusOr<CheckOutcome> EvaluateCheck(const analysis::Analysis& report, const analysis::Analysis* baseline,
                                     const CheckConditions& c) {
  CheckOutcome out;
  if (c.min_throughput) {
    out.results.push_back({"observed throughput", "at least " + Throughput(*c.min_throughput),
                           report.observed_throughput
                               ? Throughput(report.observed_throughput)
                               : std::string("unknown (the source does not record the time its counters cover)"),
                           report.observed_throughput && *report.observed_throughput >= *c.min_throughput});
  }
  if (c.min_predicted) {
    // No prediction means nothing bounds the pipeline, which is above any floor.
    const bool ok = !report.predicted_throughput || *report.predicted_throughput >= *c.min_predicted;
    out.results.push_back({"predicted throughput", "at least " + Throughput(*c.min_predicted),
                           Throughput(report.predicted_throughput) + "; as traced " + AsTraced(report),
                           ok});
  }
  if (c.min_as_traced) {
    // Closed form here (check does not solve the LP), as in every report.
    const auto& now = report.as_traced.throughput;
    const bool ok = !now || *now >= *c.min_as_traced;
    out.results.push_back({"as-traced throughput", "at least " + Throughput(*c.min_as_traced),
                           AsTraced(report) + "; best parallelism " +
                               Throughput(report.predicted_throughput),
                           ok});
  }
  if (c.max_cpu_per_batch) {
    out.results.push_back({"CPU per minibatch (all nodes)", "at most " + units::FormatSeconds(*c.max_cpu_per_batch),
                           units::FormatSeconds(report.cpu_seconds_per_minibatch),
                           report.cpu_seconds_per_minibatch <= *c.max_cpu_per_batch});
  }
  if (c.expect_bottleneck) {
    if (!report.Find(*c.expect_bottleneck)) {
      std::string names;
      for (const auto& n : report.nodes) names += (names.empty() ? "" : ", ") + n.name;
      return Status::InvalidArgument(report.source + ": --expect-bottleneck '" + *c.expect_bottleneck +
                                     "' is not a node of the traced program (nodes: " + names + ")");
    }
    const std::string found = report.bottleneck.empty() ? "none (nothing is bounded)" : report.bottleneck;
    out.results.push_back({"bottleneck", *c.expect_bottleneck, found, report.bottleneck == *c.expect_bottleneck});
  }
  if (c.baseline) {
    if (!baseline) return Status::Internal("EvaluateCheck: a baseline is stated but none was analysed");
    const double tol = c.tolerance.value_or(kDefaultTolerance);
    const std::string tol_text = FormatNumber(tol * 100) + "%";
    const std::string vs = " (baseline " + baseline->source + " ";
    // Rising costs: CPU (the rate per core is its inverse, so it is said
    // alongside rather than checked twice), bytes, storage bytes.
    auto cost = [&](const std::string& node, const std::string& quantity, double base, double now,
                    const std::function<std::string(double)>& fmt, const std::string& extra) {
      if (!(base > 0)) return;
      const double change = now / base - 1;
      const double limit = base * (1 + tol);
      out.results.push_back({node + ": " + quantity,
                             "at most " + fmt(limit) + vs + fmt(base) + " + " + tol_text + ")",
                             fmt(now) + " (" + Percent(change) + extra + ")", now <= limit});
    };
    const double base_mb = static_cast<double>(std::max<int64_t>(baseline->minibatches, 1));
    const double now_mb = static_cast<double>(std::max<int64_t>(report.minibatches, 1));
    std::set<std::string> seen;
    for (const auto& b : baseline->nodes) {
      const analysis::NodeModel* n = report.Find(b.name);
      if (!n) {
        out.notes.push_back("node '" + b.name + "' of the baseline is not in the trace; not compared");
        continue;
      }
      seen.insert(b.name);
      std::string rates;
      if (b.rate_per_core && n->rate_per_core) {
        rates = "; rate per core " + FormatNumber(*b.rate_per_core) + " -> " +
                FormatNumber(*n->rate_per_core) + " minibatches/core-s";
      }
      const auto seconds = [](double v) { return units::FormatSeconds(v); };
      const auto bytes = [](double v) { return units::FormatBytes(v); };
      if (b.cpu_seconds_per_minibatch > 0) {
        cost(b.name, "CPU per minibatch", b.cpu_seconds_per_minibatch, n->cpu_seconds_per_minibatch, seconds, rates);
      } else if (n->cpu_seconds_per_minibatch > tol * std::max(baseline->cpu_seconds_per_minibatch, 1e-12)) {
        // Free in the baseline, so no ratio: judge the new cost against the
        // whole pipeline's.
        out.results.push_back({b.name + ": CPU per minibatch",
                               "at most " + seconds(tol * baseline->cpu_seconds_per_minibatch) + " (" + tol_text +
                                   " of the baseline's total " + seconds(baseline->cpu_seconds_per_minibatch) +
                                   "; the node cost nothing there)",
                               seconds(n->cpu_seconds_per_minibatch), false});
      }
      cost(b.name, "bytes per minibatch", static_cast<double>(b.bytes) / base_mb, static_cast<double>(n->bytes) / now_mb,
           bytes, "");
      cost(b.name, "storage bytes per minibatch", b.disk_bytes_per_minibatch, n->disk_bytes_per_minibatch, bytes, "");
    }
    for (const auto& n : report.nodes) {
      if (!seen.count(n.name)) out.notes.push_back("node '" + n.name + "' is new since the baseline; not compared");
    }
    // Falling throughput: the best prediction, then the as-traced one (what
    // the pipeline as configured should measure; it also moves when a stage
    // waits longer, which no CPU line above sees).
    auto fall = [&](const std::string& what, const std::optional<double>& base_rate,
                    const std::optional<double>& now_rate, const std::string& extra) {
      if (!base_rate) return;
      const double base = *base_rate;
      const double limit = base * (1 - tol);
      const bool ok = !now_rate || *now_rate >= limit;
      std::string found = Throughput(now_rate);
      if (now_rate) found += " (" + Percent(*now_rate / base - 1) + extra + ")";
      out.results.push_back(
          {what, "at least " + Throughput(limit) + vs + FormatNumber(base) + " - " + tol_text + ")", found, ok});
    };
    // Both rates are for the cores each analysis planned for: a run that
    // had less of a busy machine is planned for fewer, and its rates fall
    // with them, which is no regression of the pipeline.
    std::string cores;
    if (report.cores != baseline->cores) {
      cores = "; planned for " + CoresPlannedText(report) + ", the baseline for " + CoresPlannedText(*baseline) +
              ": give --cores " + std::to_string(std::max(report.cores, baseline->cores)) +
              " to compare both on the same cores";
    }
    fall("predicted throughput", baseline->predicted_throughput, report.predicted_throughput, cores);
    const std::string holder = AsTracedHolder(report.as_traced, report.cores);
    fall("as-traced throughput", baseline->as_traced.throughput, report.as_traced.throughput,
         (holder.empty() ? "" : "; " + holder) + cores);
  }
  return out;
}

std::string FormatCheckText(const std::string& trace, const CheckOutcome& outcome) {
  std::string out;
  size_t failed = 0;
  for (const auto& r : outcome.results) {
    if (r.ok) continue;
    ++failed;
    out += "FAIL " + trace + ": " + r.what + ": expected " + r.expected + ", found " + r.found + "\n";
  }
  if (failed == 0) {
    out += "ok " + trace + ": " +
           (outcome.results.size() == 1 ? std::string("the one condition holds")
                                        : "all " + FormatCount(outcome.results.size(), "condition", "conditions") +
                                              " hold") +
           "\n";
  } else {
    out += trace + ": " + std::to_string(failed) + " of " +
           FormatCount(outcome.results.size(), "condition", "conditions") + " failed\n";
  }
  return out;
}

nlohmann::ordered_json CheckJson(const std::string& trace, const CheckOutcome& outcome) {
  nlohmann::ordered_json j;
  j["trace"] = trace;
  j["ok"] = outcome.ok();
  j["conditions"] = nlohmann::ordered_json::array();
  for (const auto& r : outcome.results) {
    j["conditions"].push_back({{"what", r.what}, {"expected", r.expected}, {"found", r.found}, {"ok", r.ok}});
  }
  j["notes"] = outcome.notes;
  return j;
}

StatusOr<CheckConditions> ParseCheckFlags(const CheckFlagTexts& f) {
  CheckConditions c;
  auto flag = [](const char* name, const Status& s) {
    return Status::InvalidArgument(std::string(name) + ": " + s.message());
  };
  auto rate = [&](const char* name, const std::string& text, std::optional<double>* into) -> Status {
    if (text.empty()) return Status::OK();
    auto v = ParseThroughput(text);
    if (!v.ok()) return flag(name, v.status());
    *into = *v;
    return Status::OK();
  };
  PLUMBER_RETURN_IF_ERROR(rate("--min-throughput", f.min_throughput, &c.min_throughput));
  PLUMBER_RETURN_IF_ERROR(rate("--min-predicted", f.min_predicted, &c.min_predicted));
  PLUMBER_RETURN_IF_ERROR(rate("--min-as-traced", f.min_as_traced, &c.min_as_traced));
  if (!f.max_cpu_per_batch.empty()) {
    auto v = ParseCpuPerBatch(f.max_cpu_per_batch);
    if (!v.ok()) return flag("--max-cpu-per-batch", v.status());
    c.max_cpu_per_batch = *v;
  }
  if (!f.expect_bottleneck.empty()) c.expect_bottleneck = f.expect_bottleneck;
  if (!f.baseline.empty()) c.baseline = f.baseline;
  if (!f.tolerance.empty()) {
    auto v = units::ParseFraction(f.tolerance);
    if (!v.ok()) return flag("--tolerance", v.status());
    c.tolerance = *v;
  }
  return c;
}

StatusOr<std::vector<CheckJob>> PlanChecks(const std::string& trace, const std::string& config_path,
                                           const CheckConfig& config, const CheckConditions& from_flags,
                                           std::vector<std::string>* warnings) {
  std::vector<CheckJob> jobs;
  if (!trace.empty()) {
    jobs.push_back({trace, ConditionsFor(config, trace)});
  } else if (!config_path.empty()) {
    for (const auto& entry : config.traces) {
      CheckConditions c = config.defaults;
      c.MergeFrom(entry.conditions);
      jobs.push_back({entry.trace, c});
    }
    if (jobs.empty()) return Status::InvalidArgument(config_path + ": lists no traces and no TRACE was given");
  } else {
    return Status::InvalidArgument("check: give a TRACE, a --config that lists traces, or both");
  }
  for (auto& job : jobs) {
    job.conditions.MergeFrom(from_flags);
    if (job.conditions.empty()) {
      return Status::InvalidArgument(
          job.trace + ": nothing to check (give --min-throughput, --min-predicted, --min-as-traced, "
                      "--max-cpu-per-batch, --expect-bottleneck, --baseline or a --config that states them)");
    }
    if (from_flags.tolerance && !job.conditions.baseline) {
      warnings->push_back(job.trace + ": --tolerance has no effect without --baseline");
    }
  }
  return jobs;
}

StatusOr<std::vector<TraceCheck>> RunChecks(Env* env, const std::vector<CheckJob>& jobs,
                                            std::vector<std::string>* warnings) {
  // A trace is analysed once, however many jobs name it.
  std::map<std::string, analysis::Analysis> analysed;
  auto get = [&](const std::string& path) -> StatusOr<const analysis::Analysis*> {
    auto it = analysed.find(path);
    if (it == analysed.end()) {
      PLUMBER_ASSIGN_OR_RETURN(analysis::Analysis a, analysis::AnalyzeTraceFile(env, path, {}));
      for (const auto& w : a.warnings) warnings->push_back(w.rfind(path, 0) == 0 ? w : path + ": " + w);
      it = analysed.emplace(path, std::move(a)).first;
    }
    return &it->second;
  };
  std::vector<TraceCheck> checks;
  for (const auto& job : jobs) {
    TraceCheck check{job.trace, {}};
    PLUMBER_ASSIGN_OR_RETURN(const analysis::Analysis* report, get(job.trace));
    const analysis::Analysis* baseline = nullptr;
    if (job.conditions.baseline) {
      auto b = get(*job.conditions.baseline);
      if (!b.ok()) return b.status().WithContext("--baseline");
      baseline = *b;
    }
    PLUMBER_ASSIGN_OR_RETURN(check.outcome, EvaluateCheck(*report, baseline, job.conditions));
    for (const auto& note : check.outcome.notes) warnings->push_back(job.trace + ": " + note);
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace plumber::report
