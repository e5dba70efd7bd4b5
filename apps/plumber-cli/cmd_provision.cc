// plumber provision TRACE --target-rate R: the least-cost cores, memory and
// storage bandwidth that reach R minibatches/s, by the provisioning MILP of
// lib/lp (the paper's stated future work). Prices per hour are settable with
// --cost cpu=..,mem=..,bw=.. (per vCPU, per GB, per 100 MB/s). Exit 1 with
// the reason when no resources reach the target.
#include <iostream>
#include <sstream>

#include "analysis/plan.h"
#include "analysis_options.h"
#include "command.h"
#include "report/check.h"
#include "report/provision_format.h"

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
  lp::ResourcePrices prices;
  if (Status s = ParseCost(f.cost, &prices); !s.ok()) return ReportError(s);
  auto analysis = RunAnalysis(f.analysis);
  if (!analysis.ok()) return ReportError(analysis.status());
  WarnAbout(f.analysis.trace, analysis->warnings);
  auto result = analysis::PlanProvisioning(*analysis, f.target, prices);
  if (!result.ok()) {
    if (result.status().code() == Status::Code::kFailedPrecondition) {
      std::cerr << "plumber: " << f.analysis.trace << ": " << result.status().message() << "\n";
      return kExitFailure;
    }
    return ReportError(result.status().WithContext(f.analysis.trace));
  }
  std::cout << (f.format == "json" ? report::FormatProvisionJson(f.analysis.trace, *result)
                                   : report::FormatProvisionText(f.analysis.trace, *result));
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
