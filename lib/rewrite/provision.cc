// The provisioning call, its check by the evaluator, and the price parser;
// see provision.h.
#include "rewrite/provision.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analysis/analyze.h"
#include "analysis/trace_source.h"
#include "base/number_format.h"
#include "rewrite/rewriter.h"

namespace plumber::rewrite {
namespace {

constexpr double kMaxPricePerHour = 1e6;

// A plan that cannot reach its target says so as FailedPrecondition.
bool Unreachable(const Status& s) { return s.code() == Status::Code::kFailedPrecondition; }

// The most cores the check tries, as a multiple of the MILP's: whole
// threads round each stage up by less than a core, so a shortfall beyond
// this is a model disagreement to report, not cores to buy.
constexpr int kMostCoresFactor = 4;
constexpr int kMostCores = 4096;  // the most any flag takes
constexpr int kCheckSteps = 6;

// The evaluator's check of a machine plan (provision.h): the trace
// analysed for the machine chosen (its cores, its memory all free for the
// cache the MILP priced, its bandwidth when it reads any), rewritten for
// it, and the emitted pipeline's predicted rate compared with the target.
Status CheckByRewrite(const analysis::LoadedTrace& trace, const AnalysisOptions& options, Provisioning* p) {
  const int lp_cores = p->machine.cores;
  const int most = std::min(kMostCores, std::max(lp_cores, kMostCoresFactor * lp_cores));
  AnalysisOptions on = options;
  on.solve_programs = true;
  on.memory_bytes = static_cast<uint64_t>(std::ceil(p->machine.memory_bytes));
  on.cache_memory_fraction = 1.0;
  on.disk_bandwidth_bytes_per_s.reset();
  if (p->machine.bandwidth >= 1) on.disk_bandwidth_bytes_per_s = p->machine.bandwidth;
  auto predict = [&](int cores) -> StatusOr<double> {
    on.cores = cores;
    PLUMBER_ASSIGN_OR_RETURN(analysis::Analysis a, analysis::Analyze(trace, on));
    PLUMBER_ASSIGN_OR_RETURN(RewriteResult r, Rewrite(a));
    return r.predicted_after;
  };
  PLUMBER_ASSIGN_OR_RETURN(const double at_lp_cores, predict(lp_cores));
  // The fewest cores known to reach the target (0: none yet), the most
  // known to fall short, and the figure at `enough` once found (before
  // that, at the last probe, which sizes the next).
  int enough = 0, short_at = lp_cores;
  double x = at_lp_cores;
  auto probe = [&](int cores) -> Status {
    PLUMBER_ASSIGN_OR_RETURN(const double at, predict(cores));
    if (at >= p->target * (1 - 1e-9)) {
      enough = cores;
      x = at;
    } else {
      short_at = cores;
      if (enough == 0) x = at;
    }
    return Status::OK();
  };
  if (at_lp_cores >= p->target * (1 - 1e-9)) enough = lp_cores;
  // Up, sized by the shortfall as if the rate grew with the cores, then
  // back down by halves to the fewest that reach the target.
  for (int step = 0; step < kCheckSteps && enough == 0 && short_at < most; ++step) {
    const double wanted = x > 0 ? std::ceil(short_at * p->target / x) : most;
    PLUMBER_RETURN_IF_ERROR(probe(static_cast<int>(std::clamp<double>(wanted, short_at + 1, most))));
  }
  if (enough > 0) {
    for (int step = 0; step < kCheckSteps && enough - short_at > 1; ++step) {
      PLUMBER_RETURN_IF_ERROR(probe(short_at + (enough - short_at) / 2));
    }
    p->rewritten_throughput = x;
    if (enough != lp_cores) {
      p->lp_cores = lp_cores;
      p->machine.cores = enough;
      p->machine.cost_per_hour += (enough - lp_cores) * p->prices.per_core_hour;
    }
    return Status::OK();
  }
  // Whole threads never reach the target, even on many more cores: a
  // limit the MILP does not see holds the rewritten pipeline.
  return Status::FailedPrecondition(
      "target " + FormatNumber(p->target) + " minibatches/s is unreachable with whole threads: the LP's fractional "
      "optimum reaches it on " + FormatCount(lp_cores, "core", "cores") + ", but the pipeline `plumber rewrite` emits "
      "for that machine is predicted at " + FormatNumber(at_lp_cores) + " minibatches/s, and at " + FormatNumber(x) +
      " on " + FormatCount(short_at, "core", "cores"));
}

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
    auto plan = analysis::PlanServiceForFile(env, path, options, service);
    if (!plan.ok()) {
      if (!Unreachable(plan.status())) return plan.status();
      answer.unreachable = plan.status().message();
      return answer;
    }
    answer.warnings = plan->warnings;
    answer.service = std::move(plan).value();
    return answer;
  }
  PLUMBER_ASSIGN_OR_RETURN(analysis::LoadedTrace trace,
                           analysis::LoadTraceFile(env, path, options.window, options.max_memory_bytes));
  PLUMBER_ASSIGN_OR_RETURN(analysis::Analysis traced, analysis::Analyze(trace, options));
  answer.warnings = traced.warnings;
  auto machine = analysis::PlanProvisioning(traced, request.target, request.prices);
  if (!machine.ok()) {
    if (!Unreachable(machine.status())) return machine.status().WithContext(path);
    answer.unreachable = path + ": " + machine.status().message();
    return answer;
  }
  answer.machine = std::move(machine).value();
  if (Status checked = CheckByRewrite(trace, options, &*answer.machine); !checked.ok()) {
    if (!Unreachable(checked)) return checked.WithContext(path);
    answer.machine.reset();
    answer.unreachable = path + ": " + checked.message();
    return answer;
  }
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

}  // namespace plumber::rewrite
