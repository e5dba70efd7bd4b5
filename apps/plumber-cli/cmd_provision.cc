// plumber provision TRACE --target-rate R: the least-cost cores, memory and
// storage bandwidth that reach R minibatches/s, by the provisioning MILP of
// lib/lp (the paper's stated future work), checked by the evaluator on the
// pipeline rewritten for that machine. Prices per hour are settable with
// --cost cpu=..,mem=..,bw=.. (per vCPU, per GB, per 100 MB/s). Exit 1 with
// the reason when no resources reach the target.
//
// With --workers it plans a tf.data service deployment instead, for targets
// one machine cannot reach (analysis/service_plan.h): workers, their size,
// sharding, where `distribute` goes, and the assumptions behind the count.
// Both, and the rule that an unreachable target is an answer, are
// rewrite/provision.h.
#include <iostream>
#include <utility>

#include "analysis_options.h"
#include "base/env.h"
#include "base/units.h"
#include "command.h"
#include "flag_check.h"
#include "report/check.h"
#include "report/provision_format.h"
#include "report/service_format.h"
#include "rewrite/provision.h"

namespace plumber::cli {
namespace {

struct ProvisionFlags {
  AnalysisFlags analysis;
  std::string target_text;    // "200", "200/s", "1.5K/s": units like every rate
  std::string cost;
  std::string format = "text";
  // tf.data service planning (--workers) and its worker machine; the
  // validators (flag_check.h) have checked every value, and CLI11 that the
  // worker flags come with --workers and without --cost.
  bool workers = false;
  int worker_cores = 0;
  std::string worker_mem;
  std::string worker_network;
};

// The worker flags of --workers, read with their units.
analysis::ServiceRequest ServiceRequestOf(const ProvisionFlags& f) {
  analysis::ServiceRequest r;
  if (f.worker_cores > 0) r.worker_cores = f.worker_cores;
  r.worker_memory_bytes = Given(f.worker_mem, units::ParseBytes);
  r.worker_network_bytes_per_s = Given(f.worker_network, units::ParsePositiveRate);
  return r;
}

int RunProvision(const ProvisionFlags& f) {
  rewrite::ProvisionRequest request;
  auto target = report::ParseThroughput(f.target_text);
  if (!target.ok()) return ReportError(target.status().WithContext("--target-rate"));
  request.target = *target;
  if (f.workers) request.service = ServiceRequestOf(f);
  auto prices = rewrite::ParseResourcePrices(f.cost);
  if (!prices.ok()) return ReportError(prices.status().WithContext("--cost"));
  request.prices = *prices;
  auto options = MakeAnalysisOptions(f.analysis);
  if (!options.ok()) return ReportError(options.status());
  auto answer = rewrite::Provision(Env::Default(), f.analysis.trace, *options, request);
  if (!answer.ok()) return ReportError(answer.status());
  WarnAbout(f.analysis.trace, answer->warnings);
  if (!answer->unreachable.empty()) {
    std::cerr << "plumber: " << answer->unreachable << "\n";
    return kExitFailure;
  }
  const bool json = f.format == "json";
  const std::string& trace = f.analysis.trace;
  if (answer->service) {
    std::cout << (json ? report::FormatServiceJson(trace, *answer->service)
                       : report::FormatServiceText(trace, *answer->service));
  } else {
    std::cout << (json ? report::FormatProvisionJson(trace, *answer->machine)
                       : report::FormatProvisionText(trace, *answer->machine));
  }
  return kExitOk;
}

}  // namespace

Handler SetupProvision(CLI::App& app) {
  auto f = std::make_shared<ProvisionFlags>();
  AddAnalysisFlags(app, &f->analysis);
  app.add_option("--target-rate", f->target_text, "Minibatches per second to reach, e.g. 200 or 200/s")
      ->required()
      ->check(MinibatchRate());
  auto* workers = app.add_flag("--workers", f->workers,
                               "Plan a tf.data service deployment (workers, sharding, where distribute goes) "
                               "instead of one machine");
  app.add_option("--cost", f->cost, "Prices per hour of one machine: cpu=PER_CORE,mem=PER_GB,bw=PER_100MB/s")
      ->excludes(workers);
  app.add_option("--format", f->format, "Output: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("--worker-cores", f->worker_cores, "Cores of each worker (default: the traced machine's)")
      ->check(WholeNumber(1, kMaxCores))
      ->needs(workers);
  app.add_option("--worker-mem", f->worker_mem, "Memory of each worker, e.g. 64G (default: the traced machine's)")
      ->check(Size())
      ->needs(workers);
  app.add_option("--worker-network", f->worker_network,
                 "Bytes/s each worker can send to the trainer, e.g. 10Gb/s or 1.25GB/s (default: no limit)")
      ->check(Rate())
      ->needs(workers);
  return [f] { return RunProvision(*f); };
}

}  // namespace plumber::cli
