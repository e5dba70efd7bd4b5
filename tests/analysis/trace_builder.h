// Builds synthetic traces for the analysis tests: a program from JSON, a
// machine, and snapshots whose counters the test states directly, so every
// expected value follows from numbers visible in the test; and the graph
// of a program alone (GraphOf).
#pragma once

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/analyze.h"
#include "pipeline/op_table.h"
#include "report/analysis_format.h"
#include "trace.pb.h"
#include "traceio/pipeline_io.h"

namespace plumber::analysis::testing {

// The validated graph of a program written as JSON in a test.
inline ProgramGraph GraphOf(const std::string& json) {
  auto p = ParsePipeline(json, "test pipeline");
  REQUIRE(p.ok());
  auto g = ProgramGraph::Build(*p, "test pipeline");
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

// Whether any finding of the analysis contains `text`.
inline bool HasFinding(const Analysis& r, const std::string& text) {
  for (const auto& f : r.findings) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

// The parallelism of the node called `name` in a (rewritten) program.
inline int Parallelism(const schema::Pipeline& p, const std::string& name) {
  for (const auto& n : p.nodes()) {
    if (n.name() == name) return NodeParallelism(n);
  }
  FAIL("no node " << name);
  return 0;
}

struct Counters {
  int64_t elements = 0;
  int64_t bytes = 0;
  int64_t cpu_ns = 0;
  int64_t storage = 0;
  int64_t consumed = 0;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& pipeline_json, int cores = 8, double warmup = 0) {
    auto p = ParsePipeline(pipeline_json, "test pipeline");
    REQUIRE(p.ok());
    auto* h = trace_.mutable_header();
    h->set_tool_version("0.1.0");
    *h->mutable_program() = *p;
    h->mutable_machine()->set_cores(cores);
    h->mutable_machine()->set_memory_bytes(int64_t{64} << 30);
    h->mutable_machine()->set_available_memory_bytes(int64_t{32} << 30);
    h->mutable_options()->set_warmup_seconds(warmup);
  }

  schema::TraceHeader& header() { return *trace_.mutable_header(); }
  schema::Trace& trace() { return trace_; }

  // A new snapshot at `seconds`; fill it with Node().
  schema::Snapshot& Snapshot(double seconds) {
    auto* s = trace_.add_snapshots();
    s->set_wall_ns(static_cast<int64_t>(seconds * 1e9));
    return *s;
  }

  static schema::NodeStats& Node(schema::Snapshot& s, const std::string& name, const Counters& c) {
    auto* n = s.add_nodes();
    n->set_name(name);
    n->set_elements_produced(c.elements);
    n->set_bytes_produced(c.bytes);
    n->set_active_cpu_ns(c.cpu_ns);
    n->set_storage_bytes_read(c.storage);
    n->set_elements_consumed(c.consumed);
    return *n;
  }

  StatusOr<Analysis> Analyze(const AnalysisOptions& options = {}) const {
    return AnalyzeTrace(trace_, options, "synthetic.json");
  }

  // With the GLPK programs solved and the plan made: what a rewrite applies.
  StatusOr<Analysis> AnalyzeWithPlan(AnalysisOptions options = {}) const {
    options.solve_programs = true;
    return Analyze(options);
  }

 private:
  schema::Trace trace_;
};

// Every number the report holds is finite: unbounded and unknown values
// must be std::nullopt (JSON null), never Inf or NaN.
inline void RequireFinite(const Analysis& r) {
  auto ok = [](double v) { return std::isfinite(v); };
  auto opt = [&](const std::optional<double>& v) { return !v || ok(*v); };
  CHECK(opt(r.observed_throughput));
  CHECK(ok(r.window_seconds));
  CHECK(opt(r.cpu_bound));
  CHECK(opt(r.cpu_bound_uncapped));
  CHECK(opt(r.disk_bound));
  CHECK(opt(r.predicted_throughput));
  CHECK(ok(r.cache_budget_bytes));
  CHECK(ok(r.cpu_seconds_per_minibatch));
  CHECK(ok(r.disk_bytes_per_minibatch));
  for (const auto& m : r.nodes) {
    INFO("node " << m.name);
    CHECK(ok(m.visit_ratio));
    CHECK(ok(m.cpu_seconds_per_minibatch));
    CHECK(opt(m.rate_per_core));
    CHECK(opt(m.cores_used));
    CHECK(opt(m.bytes_per_element));
    CHECK(ok(m.disk_bytes_per_minibatch));
    CHECK(opt(m.scaled_rate));
    CHECK(opt(m.materialized_bytes));
    if (m.cardinality.finite()) CHECK((ok(m.cardinality.value) && ok(m.cardinality.lo) && ok(m.cardinality.hi)));
  }
  const std::string json = report::FormatAnalysisJson(r);
  CHECK(json.find("NaN") == std::string::npos);
  CHECK(json.find("Infinity") == std::string::npos);
}

}  // namespace plumber::analysis::testing
