// The provisioning call and the price parser; see provision.h.
#include "analysis/provision.h"

#include <cstdlib>

#include "analysis/analyze.h"
#include "base/number_format.h"

namespace plumber::analysis {
namespace {

constexpr double kMaxPricePerHour = 1e6;

// A plan that cannot reach its target says so as FailedPrecondition.
bool Unreachable(const Status& s) { return s.code() == Status::Code::kFailedPrecondition; }

}  // namespace

StatusOr<lp::ResourcePrices> ParseResourcePrices(std::string_view text, const lp::ResourcePrices& defaults) {
  lp::ResourcePrices prices = defaults;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string item(text.substr(start, comma - start));
    start = comma + 1;
    const auto eq = item.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("expected key=value, got '" + item + "'");
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const double v = std::strtod(item.c_str() + eq + 1, &end);
    if (end == item.c_str() + eq + 1 || *end != '\0' || !(v >= 0)) {
      return Status::InvalidArgument("'" + item + "' needs a non-negative number");
    }
    // A price is per hour of one core, GB or 100 MB/s: beyond a million the
    // figure is a typo, and an infinite one makes the cost program unsolvable.
    if (!(v <= kMaxPricePerHour)) {
      return Status::InvalidArgument("'" + item + "': a price per hour is at most " + FormatSignificant(kMaxPricePerHour, 7));
    }
    if (key == "cpu") prices.per_core_hour = v;
    else if (key == "mem") prices.per_gb_hour = v;
    else if (key == "bw") prices.per_100mbps_hour = v;
    else return Status::InvalidArgument("unknown resource '" + key + "' (expected cpu, mem or bw)");
  }
  return prices;
}

StatusOr<ProvisionAnswer> Provision(Env* env, const std::string& path, const AnalysisOptions& options,
                                    const ProvisionRequest& request) {
  ProvisionAnswer answer;
  if (request.service) {
    ServiceRequest service = *request.service;
    service.target = request.target;
    auto plan = PlanServiceForFile(env, path, options, service);
    if (!plan.ok()) {
      if (!Unreachable(plan.status())) return plan.status();
      answer.unreachable = plan.status().message();
      return answer;
    }
    answer.warnings = plan->warnings;
    answer.service = std::move(plan).value();
    return answer;
  }
  PLUMBER_ASSIGN_OR_RETURN(Analysis analysis, AnalyzeTraceFile(env, path, options));
  answer.warnings = analysis.warnings;
  auto machine = PlanProvisioning(analysis, request.target, request.prices);
  if (!machine.ok()) {
    if (!Unreachable(machine.status())) return machine.status().WithContext(path);
    answer.unreachable = path + ": " + machine.status().message();
    return answer;
  }
  answer.machine = std::move(machine).value();
  // The plan picks the machine it prices, so the what-ifs of the traced one
  // do not enter it; a flag that silently does nothing reads as ignored.
  std::vector<std::string> unused;
  if (options.cores) unused.push_back("--cores");
  if (options.memory_bytes) unused.push_back("--mem");
  if (options.disk_bandwidth_bytes_per_s) unused.push_back("--disk-bandwidth");
  if (!unused.empty()) {
    std::string flags = unused[0];
    for (size_t i = 1; i < unused.size(); ++i) flags += (i + 1 == unused.size() ? " and " : ", ") + unused[i];
    const bool one = unused.size() == 1;
    answer.machine->notes.push_back(flags + (one ? " changes" : " change") +
                                    " nothing here: provision chooses the cores, memory and bandwidth it prices (" +
                                    (one ? "the flag sizes" : "they size") +
                                    " the machine of analyze, rewrite and provision --workers)");
  }
  return answer;
}

}  // namespace plumber::analysis
