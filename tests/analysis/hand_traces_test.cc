// The JSON report of the hand-made traces in testdata/traces equals the hand
// computation written down in testdata/traces/README.md, number by number.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report/analysis_format.h"

namespace plumber::analysis {
namespace {

using nlohmann::json;

json Run(const std::string& name) {
  const std::string path = std::string(PLUMBER_SOURCE_DIR) + "/testdata/traces/" + name;
  auto report = AnalyzeTraceFile(Env::Default(), path, {});
  REQUIRE(report.ok());
  return json::parse(report::FormatAnalysisJson(*report));
}

// 1e-9 relative, as the README's numbers are exact.
void Near(const json& got, double want, const std::string& what) {
  INFO(what << ": got " << got.dump() << ", want " << want);
  REQUIRE(got.is_number());
  const double g = got.get<double>();
  if (want == 0) {
    CHECK(g == 0);
  } else {
    CHECK(std::fabs(g - want) <= 1e-9 * std::fabs(want));
  }
}

const json& Node(const json& report, const std::string& name) {
  for (const auto& n : report["nodes"]) {
    if (n["name"] == name) return n;
  }
  FAIL("no node " << name);
  static json none;
  return none;
}

struct Row {
  const char* name;
  double visit_ratio, cpu_per_mb;
  std::optional<double> rate;
  double cores_used, bytes_per_element, disk_per_mb;
  std::optional<double> cardinality, materialized;
  bool cacheable, random;
  double max_cores, cores_now;
  std::optional<double> scaled;
  const char* limit;
};

void CheckRow(const json& report, const Row& row) {
  const json& n = Node(report, row.name);
  const double c0 = report["window"]["minibatches"].get<double>();
  const std::string at = std::string(row.name) + ".";
  // Exactly the contract's keys are present (extras allowed).
  for (const char* key :
       {"name", "op", "parallelism", "visit_ratio", "cpu_seconds_per_minibatch", "rate_per_core", "cores_used",
        "bytes_per_element", "disk_bytes_per_minibatch", "cardinality", "materialized_bytes", "cacheable", "random"}) {
    INFO(at << key);
    CHECK(n.contains(key));
  }
  Near(n["visit_ratio"], row.visit_ratio, at + "visit_ratio");
  Near(n["elements"], row.visit_ratio * c0, at + "elements");
  Near(n["cpu_seconds"], row.cpu_per_mb * c0, at + "cpu_seconds");
  Near(n["cpu_seconds_per_minibatch"], row.cpu_per_mb, at + "cpu_seconds_per_minibatch");
  if (row.rate) {
    Near(n["rate_per_core"], *row.rate, at + "rate_per_core");
  } else {
    CHECK(n["rate_per_core"].is_null());
  }
  Near(n["cores_used"], row.cores_used, at + "cores_used");
  Near(n["bytes_per_element"], row.bytes_per_element, at + "bytes_per_element");
  Near(n["disk_bytes_per_minibatch"], row.disk_per_mb, at + "disk_bytes_per_minibatch");
  if (row.cardinality) {
    Near(n["cardinality"], *row.cardinality, at + "cardinality");
    Near(n["materialized_bytes"], *row.materialized, at + "materialized_bytes");
  } else {
    CHECK(n["cardinality"].is_null());
  }
  CHECK(n["cacheable"] == row.cacheable);
  CHECK(n["random"] == row.random);
  Near(n["max_cores"], row.max_cores, at + "max_cores");
  Near(n["cores_now"], row.cores_now, at + "cores_now");
  if (row.scaled) {
    Near(n["scaled_rate"], *row.scaled, at + "scaled_rate");
  } else {
    CHECK(n["scaled_rate"].is_null());
  }
  CHECK(n["limit"] == row.limit);
  CHECK(n["parallelism"] == 1);
}

TEST_CASE("cpu.json: every number of the report equals the README's hand computation", "[analysis][hand]") {
  const json r = Run("cpu.json");
  Near(r["window"]["start_seconds"], 1, "window start");
  Near(r["window"]["end_seconds"], 5, "window end");
  Near(r["window"]["seconds"], 4, "T");
  CHECK(r["window"]["minibatches"] == 120);
  Near(r["observed_throughput"], 120.0 / 4, "X_0");
  Near(r["consumer_wait"]["mean_seconds"], 3.8 / 120, "mean wait");
  Near(r["consumer_wait"]["fraction_of_window"], 0.95, "wait fraction");
  Near(r["cpu_seconds_per_minibatch"], 0.04, "sum c_i");
  Near(r["disk_bytes_per_minibatch"], 0, "D");
  Near(r["bounds"]["cpu"], 4 / 0.04, "cpu bound");
  Near(r["bounds"]["cpu_uncapped"], 4 / 0.04, "cpu bound without caps");
  CHECK(r["bounds"]["cpu_limit"] == "cores");
  CHECK(r["bounds"]["disk"].is_null());
  Near(r["predicted_throughput"], 100, "predicted");
  CHECK(r["bottleneck"] == "burn");
  CHECK(r["ranking"] == json::array({"burn", "source", "batch"}));
  CHECK(r["cache"]["node"] == "batch");
  Near(r["cache"]["bytes"], 3125.0 * 256, "cache bytes");
  CHECK(r["machine"]["cores"] == 4);
  CHECK(r["machine"]["memory_bytes"] == 6000000000LL);
  CHECK(r["machine"]["disk_bandwidth_bytes_per_s"].is_null());
  Near(r["machine"]["cache_budget_bytes"], 6e9 * 0.9, "budget");
  CHECK(r["machine"]["buffered_bytes"] == 0);
  CHECK(r["machine"]["total_memory_bytes"] == 8000000000LL);
  CHECK(r["nodes"].size() == 3);
  CheckRow(r, {"source", 32, 0.72 / 120, 120 / 0.72, 0.72 / 4, 8, 0, 100000, 800000, true, false, 1, 1, 120 / 0.72,
               "sequential"});
  CheckRow(r, {"burn", 32, 3.84 / 120, 31.25, 0.96, 8, 0, 100000, 800000, true, false, 4, 1, 31.25, "cpu"});
  CheckRow(r, {"batch", 1, 0.002, 500, 0.06, 256, 0, 3125, 800000, true, false, 4, 1, 500, "cpu"});
  // Written before waiting was traced: the one warning says so.
  REQUIRE(r["warnings"].size() == 1);
  CHECK_THAT(r["warnings"][0].get<std::string>(), Catch::Contains("does not record waiting"));
  CHECK_FALSE(r["wait_traced"].get<bool>());
  // As traced, the naive chain runs on the consumer's one thread: its
  // nodes' service adds up, 1 / (0.006 + 0.032 + 0.002) = 25/s.
  Near(r["as_traced"]["predicted_throughput"], 25.0, "as traced");
  CHECK(r["as_traced"]["bottleneck"] == "burn");
  CHECK(r["as_traced"]["limit"] == "threads");
  Near(r["bounds"]["wait"], 25.0, "wait bound");
  REQUIRE(r["thread_groups"].size() == 1);
  CHECK(r["thread_groups"][0]["members"].size() == 3);
}

TEST_CASE("image.json: every number of the report equals the README's hand computation", "[analysis][hand]") {
  const json r = Run("image.json");
  Near(r["window"]["start_seconds"], 2, "window start");
  Near(r["window"]["end_seconds"], 10, "window end");
  Near(r["window"]["seconds"], 8, "T");
  CHECK(r["window"]["minibatches"] == 32);
  Near(r["observed_throughput"], 4, "X_0");
  Near(r["consumer_wait"]["mean_seconds"], 7.2 / 32, "mean wait");
  Near(r["consumer_wait"]["fraction_of_window"], 0.9, "wait fraction");
  Near(r["cpu_seconds_per_minibatch"], 0.4, "sum c_i");
  Near(r["disk_bytes_per_minibatch"], 3.2e6, "D");
  Near(r["bounds"]["cpu_uncapped"], 8 / 0.4, "cpu bound without caps");
  Near(r["bounds"]["cpu"], 2 * 6.25, "cpu bound");
  CHECK(r["bounds"]["cpu_limit"] == "read");
  Near(r["bounds"]["disk"], 1e8 / 3.2e6, "disk bound");
  Near(r["predicted_throughput"], 12.5, "predicted");
  CHECK(r["bounds"]["predicted_limit"] == "cpu");
  CHECK(r["bottleneck"] == "decode");
  CHECK(r["ranking"] == json::array({"decode", "read", "shards", "batch", "prefetch", "files"}));
  CHECK(r["cache"]["node"] == "shards");
  Near(r["cache"]["bytes"], 3.2e8, "cache bytes");
  CHECK(r["machine"]["cores"] == 8);
  CHECK(r["machine"]["memory_bytes"] == 12000000000LL);
  Near(r["machine"]["disk_bandwidth_bytes_per_s"], 1e8, "B");
  Near(r["machine"]["cache_budget_bytes"], (12e9 - 200000 - 2.0 * 19267584) * 0.9, "budget");
  CHECK(r["machine"]["buffered_bytes"] == 200000 + 2 * 19267584);
  CHECK(r["machine"]["total_memory_bytes"] == 16000000000LL);

  const double card = 8 * 400.0;
  CheckRow(r, {"files", 3 / 32.0, 0, std::nullopt, 0, 21, 0, 8, 168, true, false, 1, 1, std::nullopt, "none"});
  CheckRow(r, {"read", 32, 0.16, 6.25, 0.64, 100000, 3.2e6, card, card * 100000, true, false, 2, 1, 6.25, "cpu"});
  CheckRow(r, {"shards", 32, 0.02, 50, 0.08, 100000, 0, card, card * 100000, true, false, 8, 1, 50, "cpu"});
  CheckRow(r, {"decode", 32, 0.2, 5, 0.8, 602112, 0, card, card * 602112, false, true, 8, 1, 5, "cpu"});
  CheckRow(r, {"batch", 1, 0.015, 1 / 0.015, 0.06, 19267584, 0, 100, 100 * 19267584.0, false, false, 8, 1, 1 / 0.015,
               "cpu"});
  CheckRow(
      r, {"prefetch", 1, 0.005, 200, 0.02, 19267584, 0, 100, 100 * 19267584.0, false, false, 1, 1, 200, "sequential"});

  // The sampling interval: 3 of 8 files, records 400/440/360, sizes 40/44/36 MB.
  const double se_mean = 40 / std::sqrt(3.0) * std::sqrt(1 - 3 / 8.0);
  const double t2 = 4.302652729749;  // Student's t, 97.5%, 2 degrees of freedom
  const json& read = Node(r, "read");
  Near(read["cardinality_interval"][0], 8 * (400 - t2 * se_mean), "read cardinality lo");
  Near(read["cardinality_interval"][1], 8 * (400 + t2 * se_mean), "read cardinality hi");
  Near(read["materialized_interval"][0], 8 * (400 - t2 * se_mean) * 100000, "read materialized lo");
  Near(read["materialized_interval"][1], 8 * (400 + t2 * se_mean) * 100000, "read materialized hi");
  CHECK(Node(r, "files")["cardinality_interval"].is_null());
  CHECK(Node(r, "files")["cardinality_exact"] == true);
  const json& batch = Node(r, "batch");
  Near(batch["cardinality_interval"][0], std::floor(8 * (400 - t2 * se_mean) / 32), "batch cardinality lo");
  Near(batch["cardinality_interval"][1], std::floor(8 * (400 + t2 * se_mean) / 32), "batch cardinality hi");
  REQUIRE(r["sources"].size() == 1);
  const json& src = r["sources"][0];
  CHECK(src["node"] == "read");
  CHECK(src["files"] == 8);
  CHECK(src["files_completed"] == 3);
  Near(src["dataset_bytes"], 3.2e8, "dataset bytes");
  Near(src["mean_file_bytes"], 40e6, "mean file bytes");
  Near(src["mean_records_per_file"], 400, "mean records per file");
  const double se_bytes = 8 * 4e6 / std::sqrt(3.0) * std::sqrt(5 / 8.0);
  Near(src["dataset_bytes_stderr"], se_bytes, "dataset stderr");
  Near(src["dataset_bytes_interval"][0], 3.2e8 - t2 * se_bytes, "dataset lo");
  Near(src["dataset_bytes_interval"][1], 3.2e8 + t2 * se_bytes, "dataset hi");
  CHECK(src["exact"] == false);
  Near(src["interval_multiplier"], t2, "t quantile");
  CHECK(Node(r, "decode")["not_cacheable_because_random"] == "decode");
  CHECK(Node(r, "prefetch")["not_cacheable_because_random"] == "decode");
  REQUIRE(r["warnings"].size() == 1);
  CHECK_THAT(r["warnings"][0].get<std::string>(), Catch::Contains("does not record waiting"));
  // As traced, the prefetch splits two thread groups: the consumer's (the
  // prefetch's own 5 ms) and the prefetch's thread, which runs everything
  // below it in turn: 1 / (0.160 + 0.020 + 0.200 + 0.015 + 0) = 2.53/s.
  Near(r["as_traced"]["predicted_throughput"], 1 / 0.395, "as traced");
  CHECK(r["as_traced"]["bottleneck"] == "decode");
  REQUIRE(r["thread_groups"].size() == 2);
  CHECK(r["thread_groups"][1]["name"] == "prefetch's thread");
  CHECK(r["thread_groups"][1]["members"].size() == 5);
}

}  // namespace
}  // namespace plumber::analysis
