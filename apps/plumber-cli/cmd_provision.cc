// plumber provision TRACE --target-rate R: the least-cost cores, memory and
// storage bandwidth that reach R minibatches/s, by the provisioning MILP of
// lib/lp (the paper's stated future work). Prices per hour are settable with
// --cost cpu=..,mem=..,bw=.. (per vCPU, per GB, per 100 MB/s). Exit 1 with
// the reason when no resources reach the target.
//
// With --workers it plans a tf.data service deployment instead, for targets
// one machine cannot reach (analysis/service_plan.h): workers, their size,
// sharding, where `distribute` goes, and the assumptions behind the count.
#include <iostream>
#include <sstream>
#include <utility>

#include "analysis/plan.h"
#include "analysis/service_plan.h"
#include "analysis_options.h"
#include "base/env.h"
#include "base/units.h"
#include "command.h"
#include "report/check.h"
#include "report/provision_format.h"
#include "report/service_format.h"

namespace plumber::cli {
namespace {

struct ProvisionFlags {
  AnalysisFlags analysis;
  double target = 0;          // parsed from target_text
  std::string target_text;    // "200", "200/s", "1.5K/s": units like every rate
  std::string cost;
  std::string format = "text";
  // tf.data service planning (--workers) and its worker machine.
  bool workers = false;
  int worker_cores = 0;
  CLI::Option* worker_cores_flag = nullptr;  // count() says whether it was given
  std::string worker_mem;
  std::string worker_network;
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

// The worker flags of --workers, parsed with their units.
StatusOr<analysis::ServiceRequest> ParseServiceRequest(const ProvisionFlags& f) {
  analysis::ServiceRequest r;
  r.target = f.target;
  if (!f.workers) {
    for (const auto& [flag, given] : {std::pair{"--worker-cores", f.worker_cores_flag->count() > 0},
                                      std::pair{"--worker-mem", !f.worker_mem.empty()},
                                      std::pair{"--worker-network", !f.worker_network.empty()}}) {
      if (given) return Status::InvalidArgument(std::string(flag) + " describes a tf.data service worker: add --workers");
    }
    return r;
  }
  if (!f.cost.empty()) {
    return Status::InvalidArgument("--cost prices one machine; --workers plans a service and does not price it");
  }
  if (f.worker_cores_flag->count() > 0) {
    if (f.worker_cores <= 0) {
      return Status::InvalidArgument("--worker-cores must be positive, got " + std::to_string(f.worker_cores));
    }
    r.worker_cores = f.worker_cores;
  }
  if (!f.worker_mem.empty()) {
    auto mem = units::ParseBytes(f.worker_mem);
    if (!mem.ok()) return mem.status().WithContext("--worker-mem");
    if (*mem == 0) return Status::InvalidArgument("--worker-mem must be positive, got '" + f.worker_mem + "'");
    r.worker_memory_bytes = *mem;
  }
  if (!f.worker_network.empty()) {
    auto bw = units::ParseRate(f.worker_network);
    // The parser refuses a sign as "not a rate"; a negative network is
    // better told as what it is.
    const bool negative = f.worker_network.find_first_not_of(" ") != std::string::npos &&
                          f.worker_network[f.worker_network.find_first_not_of(" ")] == '-';
    if (!bw.ok() && !negative) return bw.status().WithContext("--worker-network");
    if (negative || !(*bw > 0)) {
      return Status::InvalidArgument("--worker-network must be a positive rate (e.g. 10Gb/s or 1.25GB/s), got '" +
                                     f.worker_network + "'");
    }
    r.worker_network_bytes_per_s = *bw;
  }
  return r;
}

int RunService(const ProvisionFlags& f, const analysis::ServiceRequest& request) {
  auto options = MakeAnalysisOptions(f.analysis);
  if (!options.ok()) return ReportError(options.status());
  auto plan = analysis::PlanServiceForFile(Env::Default(), f.analysis.trace, *options, request);
  if (!plan.ok()) {
    // Unreachable is an answer, not an error (as for one machine below).
    if (plan.status().code() == Status::Code::kFailedPrecondition) {
      std::cerr << "plumber: " << plan.status().message() << "\n";
      return kExitFailure;
    }
    return ReportError(plan.status());
  }
  WarnAbout(f.analysis.trace, plan->warnings);
  std::cout << (f.format == "json" ? report::FormatServiceJson(f.analysis.trace, *plan)
                                   : report::FormatServiceText(f.analysis.trace, *plan));
  return kExitOk;
}

int RunProvision(ProvisionFlags f) {
  auto target = report::ParseThroughput(f.target_text);
  if (!target.ok()) return ReportError(target.status().WithContext("--target-rate"));
  if (!(*target > 0)) return ReportError(Status::InvalidArgument("--target-rate must be positive, got '" + f.target_text + "'"));
  f.target = *target;
  auto request = ParseServiceRequest(f);
  if (!request.ok()) return ReportError(request.status());
  if (f.workers) return RunService(f, *request);
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
  app.add_flag("--workers", f->workers,
               "Plan a tf.data service deployment (workers, sharding, where distribute goes) instead of one machine");
  f->worker_cores_flag =
      app.add_option("--worker-cores", f->worker_cores, "Cores of each worker (default: the traced machine's)");
  app.add_option("--worker-mem", f->worker_mem, "Memory of each worker, e.g. 64G (default: the traced machine's)");
  app.add_option("--worker-network", f->worker_network,
                 "Bytes/s each worker can send to the trainer, e.g. 10Gb/s or 1.25GB/s (default: no limit)");
  return [f] { return RunProvision(*f); };
}

}  // namespace plumber::cli
