// plumber diff's comparison of programs and traces, the closeness that
// colours the pictures, the dot and HTML output's structure, and the roff
// reader behind `plumber help --plain`.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report/diff.h"
#include "report/graph.h"
#include "report/manual.h"
#include "traceio/pipeline_io.h"
#include "traceio/trace_io.h"

namespace plumber::report {
namespace {

std::string Path(const std::string& rel) { return std::string(PLUMBER_SOURCE_DIR) + "/" + rel; }

schema::Pipeline Parse(const std::string& json) {
  auto p = ParsePipeline(json, "test");
  REQUIRE(p.ok());
  return *p;
}

TEST_CASE("program diffs name added, removed and changed fields", "[diff]") {
  const auto a = Parse(R"({"name": "p", "nodes": [
      {"name": "src", "op": "range", "range": {"start": 0, "stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"parallelism": 1, "udf": [{"op": "cpu_burn", "args": {"micros": 10}}]}},
      {"name": "old", "op": "prefetch", "inputs": ["m"], "prefetch": {"buffer_size": 1}}]})");
  const auto b = Parse(R"({"name": "p", "nodes": [
      {"name": "src", "op": "range", "range": {"start": 0, "stop": 10}},
      {"name": "m", "op": "map", "inputs": ["src"], "map": {"parallelism": 4, "udf": [{"op": "cpu_burn", "args": {"micros": 20}}]}},
      {"name": "new", "op": "batch", "inputs": ["m"], "batch": {"batch_size": 2}}]})");
  const Diff d = DiffPrograms(a, b);
  CHECK(d.added == std::vector<std::string>{"new"});
  CHECK(d.removed == std::vector<std::string>{"old"});
  REQUIRE(d.changed.size() == 1);
  CHECK(d.changed[0].node == "m");
  REQUIRE(d.changed[0].changes.size() == 2);
  CHECK(d.changed[0].changes[0].field == "map.parallelism");
  CHECK(d.changed[0].changes[0].a == "1");
  CHECK(d.changed[0].changes[0].b == "4");
  CHECK(d.changed[0].changes[1].field == "map.udf[0].args.micros");
  CHECK_FALSE(d.programs_equal());
  CHECK(DiffPrograms(a, a).programs_equal());
}

TEST_CASE("trace diffs give per-node changes and the bottleneck", "[diff]") {
  auto d = DiffFiles(Env::Default(), Path("testdata/traces/cpu.json"), Path("testdata/traces/cpu-slow-burn.json"));
  REQUIRE(d.ok());
  CHECK(d->has_metrics);
  CHECK(d->programs_equal());
  REQUIRE(d->nodes.size() == 3);
  CHECK(d->nodes[1].node == "burn");
  CHECK(*d->nodes[1].cpu_seconds_per_minibatch.change() == Approx(0.2));
  CHECK(*d->nodes[1].rate_per_core.b == Approx(31.25 / 1.2));
  CHECK(*d->nodes[0].cpu_seconds_per_minibatch.change() == Approx(0).margin(1e-12));
  CHECK(d->bottleneck_a == "burn");
  CHECK(d->bottleneck_b == "burn");
  // 4 cores / (6 + 38.4 + 2 ms) = 86.2 against 4 / 40 ms = 100.
  CHECK(*d->predicted_throughput.b == Approx(4 / 0.0464));
  // As traced the three nodes share one thread: 1 / 40 ms -> 1 / 46.4 ms.
  CHECK(*d->as_traced_throughput.a == Approx(25));
  CHECK(*d->as_traced_throughput.b == Approx(1 / 0.0464));
  CHECK(*d->as_traced_throughput.change() == Approx(0.04 / 0.0464 - 1));
  CHECK(d->as_traced_bottleneck_a == "burn");
  CHECK(d->as_traced_bottleneck_b == "burn");
  const std::string text = FormatDiffText(*d);
  CHECK(text.find("as-traced throughput: 25 -> 21.55 minibatches/s (-13.8%)\n") != std::string::npos);
  CHECK(text.find("as-traced bottleneck: burn (unchanged)\n") != std::string::npos);
  const auto json = nlohmann::json::parse(FormatDiffJson(*d));
  CHECK(json["as_traced"]["predicted_throughput"]["a"].get<double>() == Approx(25));
  CHECK(json["as_traced"]["bottleneck"]["shifted"].get<bool>() == false);
  // A pipeline against a trace compares programs only.
  auto mixed = DiffFiles(Env::Default(), Path("testdata/traces/image.json"), Path("testdata/pipelines/image.json"));
  REQUIRE(mixed.ok());
  CHECK_FALSE(mixed->has_metrics);
  CHECK(mixed->b_kind == "pipeline");
}

TEST_CASE("closeness is 1 at the bottleneck and falls with capacity", "[graph]") {
  auto r = analysis::AnalyzeTraceFile(Env::Default(), Path("testdata/traces/image.json"), {});
  REQUIRE(r.ok());
  CHECK(Closeness(*r, *r->Find("decode")) == Approx(1));
  CHECK(Closeness(*r, *r->Find("read")) == Approx(5 / 6.25));
  CHECK(Closeness(*r, *r->Find("prefetch")) == Approx(5.0 / 200));
  CHECK(Closeness(*r, *r->Find("files")) == 0);  // unbounded
}

TEST_CASE("dot and html name every node and edge", "[graph]") {
  auto r = analysis::AnalyzeTraceFile(Env::Default(), Path("testdata/traces/image.json"), {});
  REQUIRE(r.ok());
  const std::string dot = FormatDot(*r);
  CHECK(dot.find("\"decode\" -> \"batch\" [label=\"32\"]") != std::string::npos);
  CHECK(dot.find("\"read\" -> \"shards\" [style=dashed") != std::string::npos);
  CHECK(dot.find("BOTTLENECK") != std::string::npos);
  // decode is the bottleneck: hue 0 (red); prefetch is far: hue near green.
  CHECK(dot.find("\"decode\" [label=\"decode\\nmap x1") != std::string::npos);
  CHECK(dot.find("fillcolor=\"0.000 0.55 0.95\", penwidth=2.5") != std::string::npos);

  REQUIRE_FALSE(r->plan.has_value());  // the programs were not solved
  const std::string html = FormatHtml(*r);
  CHECK(html.find("<svg id=\"pipeline-graph\"") != std::string::npos);
  CHECK(html.find("<svg id=\"roofline\"") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("No program was solved") != std::string::npos);
  // Both predictions side by side, and the thread groups.
  REQUIRE(r->as_traced.throughput);
  CHECK(html.find("<span id=\"as-traced\">as traced <b>") != std::string::npos);
  CHECK(html.find("</b> with the best parallelism") != std::string::npos);
  CHECK(html.find("<table id=\"thread-groups\">") != std::string::npos);
  for (const auto& g : r->thread_groups) {
    CHECK(html.find("<tr><td>" + g.name + "</td><td class=\"n\">" + std::to_string(g.threads)) != std::string::npos);
  }
  CHECK(html.find("line class=\"as-traced\"") != std::string::npos);
  CHECK(dot.find(", as traced ") != std::string::npos);

  // With its programs solved, the page shows the plan's cores per stage.
  analysis::AnalysisOptions solve;
  solve.solve_programs = true;
  auto planned = analysis::AnalyzeTraceFile(Env::Default(), Path("testdata/traces/image.json"), solve);
  REQUIRE(planned.ok());
  REQUIRE(planned->plan.has_value());
  const std::string with_plan = FormatHtml(*planned);
  CHECK(with_plan.find("No program was solved") == std::string::npos);
  CHECK(with_plan.find("Cores the throughput program gives each stage") != std::string::npos);
  for (const auto& f : r->findings) {
    // Findings are escaped, never raw HTML.
    if (f.find('<') == std::string::npos) CHECK(html.find(f) != std::string::npos);
  }
}

TEST_CASE("the roff reader renders a page as plain text", "[manual]") {
  const std::string page = ".TH PLUMBER\\-X 1 \"d\" \"v\"\n.SH NAME\nplumber\\-x \\- does \\fBthings\\fR\n"
                           ".SH OPTIONS\n.TP\n.BI \\-\\-size \" N\"\nHow big.\n.SH EXAMPLES\n.nf\nplumber x \\-\\-size 3\n.fi\n";
  const std::string text = RoffToText(page);
  CHECK(text.find("PLUMBER-X(1)") == 0);
  CHECK(text.find("\nNAME\n       plumber-x - does things\n") != std::string::npos);
  CHECK(text.find("       --size N\n           How big.\n") != std::string::npos);
  CHECK(text.find("       plumber x --size 3\n") != std::string::npos);
  CHECK(text.find("\\f") == std::string::npos);
}

}  // namespace
}  // namespace plumber::report
