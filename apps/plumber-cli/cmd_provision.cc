// plumber provision TRACE --target-rate R: the least-cost cores, memory and
// storage bandwidth that reach R minibatches/s, by the provisioning MILP of
// lib/lp (the paper's stated future work). Prices per hour are settable with
// --cost cpu=..,mem=..,bw=.. (per vCPU, per GB, per 100 MB/s). Exit 1 with
// the reason when no resources reach the target.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis_options.h"
#include "base/units.h"
#include "command.h"
#include "lp/provisioning.h"
#include "report/check.h"
#include "rewrite/planner.h"
#include "traceio/trace_io.h"

namespace plumber::cli {
namespace {

struct ProvisionFlags {
  AnalysisFlags analysis;
  double target = 0;          // parsed from target_text
  std::string target_text;    // "200", "200/s", "1.5K/s": units like every rate
  std::string cost;
  std::string format = "text";
};

Status ParseCost(const std::string& text, lp::ResourcePrices* prices) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--cost: expected key=value, got '" + item + "'");
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const double v = std::strtod(item.c_str() + eq + 1, &end);
    if (end == item.c_str() + eq + 1 || *end != '\0' || !(v >= 0)) {
      return Status::InvalidArgument("--cost: '" + item + "' needs a non-negative number");
    }
    if (key == "cpu") prices->per_core_hour = v;
    else if (key == "mem") prices->per_gb_hour = v;
    else if (key == "bw") prices->per_100mbps_hour = v;
    else return Status::InvalidArgument("--cost: unknown resource '" + key + "' (expected cpu, mem or bw)");
  }
  return Status::OK();
}

int RunProvision(ProvisionFlags f) {
  auto target = report::ParseThroughput(f.target_text);
  if (!target.ok()) return ReportError(target.status().WithContext("--target-rate"));
  if (!(*target > 0)) return ReportError(Status::InvalidArgument("--target-rate must be positive, got '" + f.target_text + "'"));
  f.target = *target;
  lp::ProvisionProblem problem;
  if (Status s = ParseCost(f.cost, &problem.prices); !s.ok()) return ReportError(s);
  auto header = ReadTraceHeader(Env::Default(), f.analysis.trace);
  if (!header.ok()) return ReportError(header.status());
  auto report = RunAnalysis(f.analysis);
  if (!report.ok()) return ReportError(report.status());
  WarnAbout(f.analysis.trace, report->warnings);
  auto built = rewrite::MakeProvisionProblem(*header, *report, f.target);
  if (!built.ok()) return ReportError(built.status().WithContext(f.analysis.trace));
  built->prices = problem.prices;
  problem = std::move(*built);
  auto result = lp::SolveProvisioning(problem);
  if (!result.ok()) {
    if (result.status().code() == Status::Code::kFailedPrecondition) {
      std::cerr << "plumber: " << f.analysis.trace << ": " << result.status().message() << "\n";
      return kExitFailure;
    }
    return ReportError(result.status());
  }
  std::string cache = result->cached.empty() ? "" : problem.nodes[result->cached.front()].name;
  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["trace"] = f.analysis.trace;
    j["target_rate"] = f.target;
    j["cores"] = result->cores;
    j["memory_bytes"] = result->memory_bytes;
    j["disk_bandwidth_bytes_per_s"] = result->bandwidth;
    j["cache"] = cache.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(cache);
    j["cost_per_hour"] = result->cost_per_hour;
    j["prices"] = {{"cpu_per_core_hour", problem.prices.per_core_hour},
                   {"mem_per_gb_hour", problem.prices.per_gb_hour},
                   {"bw_per_100mbps_hour", problem.prices.per_100mbps_hour}};
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("plumber provision: %s, target %.4g minibatches/s\n", f.analysis.trace.c_str(), f.target);
  std::printf("  cores:      %d\n", result->cores);
  std::printf("  memory:     %s%s\n", units::FormatBytes(result->memory_bytes).c_str(),
              cache.empty() ? " (buffers only; no cache pays off)" : (" (cache after " + cache + ")").c_str());
  std::printf("  bandwidth:  %s\n", units::FormatRate(result->bandwidth).c_str());
  std::printf("  cost:       $%.4f per hour (cpu $%.4g/core-h, mem $%.4g/GB-h, bw $%.4g/100MB/s-h)\n",
              result->cost_per_hour, problem.prices.per_core_hour, problem.prices.per_gb_hour,
              problem.prices.per_100mbps_hour);
  return kExitOk;
}

}  // namespace

Handler SetupProvision(CLI::App& app) {
  auto f = std::make_shared<ProvisionFlags>();
  AddAnalysisFlags(app, &f->analysis);
  app.add_option("--target-rate", f->target_text, "Minibatches per second to reach, e.g. 200 or 200/s")->required();
  app.add_option("--cost", f->cost, "Prices per hour: cpu=PER_CORE,mem=PER_GB,bw=PER_100MB/s");
  app.add_option("--format", f->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  return [f] { return RunProvision(*f); };
}

}  // namespace plumber::cli
