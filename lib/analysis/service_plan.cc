// The tf.data service plan of service_plan.h: the sizing arithmetic, the
// sharding policy and the distribute point read off the program graph, and
// the two single-machine plans (the machine, one worker) it rests on.
#include "analysis/service_plan.h"

#include <algorithm>
#include <cmath>

#include "analysis/analyze.h"
#include "analysis/plan.h"
#include "base/number_format.h"
#include "base/units.h"

namespace plumber::analysis {
namespace {

// More workers than this is not a deployment but a sign that a worker
// reaches next to nothing; saying so beats printing a nine-digit count.
constexpr double kMaxWorkers = 100000;

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

std::string Cores(int n) { return FormatCount(n, "core", "cores"); }

// "'read' (tfrecord)": a node as the reader of a plan knows it.
std::string Describe(const ProgramGraph& program, int i) {
  return Quoted(program.name(i)) + " (" + std::string(program.op(i).name) + ")";
}

// Where a reader's files come from, in words.
std::string ReaderSource(const ProgramGraph& program, int reader) {
  const int interleave = program.enclosing_interleave(reader);
  if (interleave >= 0) {
    std::string from;
    for (int k : program.inputs(interleave)) from += (from.empty() ? "" : ", ") + Describe(program, k);
    return Describe(program, reader) + " reads the files that interleave " + Quoted(program.name(interleave)) +
           " takes" + (from.empty() ? "" : " from " + from);
  }
  if (!program.inputs(reader).empty()) {
    return Describe(program, reader) + " reads the files " + Describe(program, program.inputs(reader).front()) +
           " names";
  }
  return Describe(program, reader) + " reads the files listed in its parameters";
}

// What the plan's rate is held by, in words.
std::string Binding(const Plan& plan) {
  if (plan.unbounded) return "nothing once cached: the program's ceiling";
  if (!plan.cache_node.empty()) return "the plan with a cache after " + Quoted(plan.cache_node);
  const std::string& b = plan.binding_without_cache;
  if (b.rfind("stage:", 0) == 0) return "stage " + Quoted(b.substr(6));
  if (b == "bandwidth_curve") return "the storage bandwidth curve";
  return b.empty() ? "nothing measured" : b;
}

struct Sharding {
  ShardingPolicy policy = ShardingPolicy::kOff;
  std::string reason;
  std::vector<std::string> readers;
  std::optional<int64_t> files;
};

Sharding ChooseSharding(const Analysis& a) {
  const ProgramGraph& program = a.program_graph();
  Sharding s;
  std::vector<std::string> described;
  bool files_known = true;
  int64_t files = 0;
  for (int i = 0; i < program.size(); ++i) {
    if (!program.op(i).reads_storage) continue;
    s.readers.push_back(program.name(i));
    described.push_back(ReaderSource(program, i));
    bool found = false;
    for (const auto& src : a.sources) {
      if (src.node != program.name(i)) continue;
      found = true;
      if (src.files) files += *src.files;
      else files_known = false;
    }
    if (!found) files_known = false;
  }
  if (!s.readers.empty()) {
    s.policy = ShardingPolicy::kDynamic;
    std::string which;
    for (const auto& d : described) which += (which.empty() ? "" : "; ") + d;
    s.reason = which +
               ", so the source is file-based: the dispatcher hands each worker whole files on demand, and each file "
               "is read once per epoch, by one worker";
    if (files_known && files > 0) s.files = files;
    return s;
  }
  // Name the sources (nodes with no input and no function) to say what
  // cannot be split.
  std::string leaves;
  for (int i = 0; i < program.size(); ++i) {
    if (!program.children(i).empty() || program.enclosing_interleave(i) >= 0) continue;
    leaves += (leaves.empty() ? "" : ", ") + Describe(program, i);
  }
  s.reason = "the source" + (leaves.empty() ? std::string() : ", " + leaves + ",") +
             " is not file-based, so it can not be sharded: each worker runs the whole pipeline and sees the whole "
             "dataset (in its own random order if the pipeline shuffles), and an epoch on the trainer holds every "
             "element once per worker";
  return s;
}

}  // namespace

const char* ShardingPolicyName(ShardingPolicy policy) {
  return policy == ShardingPolicy::kDynamic ? "DYNAMIC" : "OFF";
}

StatusOr<ServiceSizing> SizeService(double target, double single_machine_rate, double compute_rate,
                                    std::optional<double> network_bytes_per_s,
                                    std::optional<double> bytes_per_minibatch) {
  if (!(target > 0) || !std::isfinite(target)) {
    return Status::InvalidArgument("the target rate must be positive, got " + FormatSignificant(target, 6));
  }
  if (network_bytes_per_s && !(*network_bytes_per_s > 0 && std::isfinite(*network_bytes_per_s))) {
    return Status::InvalidArgument("the worker network must be a positive rate, got " +
                                   FormatSignificant(*network_bytes_per_s, 6) + " bytes/s");
  }
  // A minibatch always carries bytes: none recorded means unknown, and a
  // bound from it would be no bound at all.
  if (network_bytes_per_s && !(bytes_per_minibatch && *bytes_per_minibatch > 0)) {
    return Status::InvalidArgument(
        "a network bound needs the bytes of a minibatch where distribute goes, and the trace does not record them");
  }
  ServiceSizing s;
  s.worker_rate = compute_rate;
  s.bound = "compute";
  if (network_bytes_per_s) {
    s.network_rate = *network_bytes_per_s / *bytes_per_minibatch;
    if (*s.network_rate < compute_rate) {
      s.worker_rate = *s.network_rate;
      s.bound = "network";
    }
  }
  // The solver's answers carry a relative tolerance of about 1e-9: a
  // machine that reaches the target within it reaches it.
  s.service_needed = !(single_machine_rate >= target * (1 - 1e-9));
  if (!s.service_needed) return s;
  if (!(s.worker_rate > 0)) {
    return Status::FailedPrecondition("a worker reaches no minibatches at all (bound: " + s.bound +
                                      "), so no number of workers reaches the target");
  }
  const double workers = std::ceil(target / s.worker_rate * (1 - 1e-9));
  if (workers > kMaxWorkers) {
    return Status::FailedPrecondition("target " + FormatSignificant(target, 4) + " minibatches/s needs " +
                                      FormatSignificant(workers, 4) + " workers at " +
                                      FormatSignificant(s.worker_rate, 4) + " minibatches/s each (bound: " + s.bound +
                                      "), more than the " + FormatSignificant(kMaxWorkers, 6) + " plumber plans");
  }
  s.workers = static_cast<int>(workers);
  return s;
}

StatusOr<ServicePlan> PlanService(const Analysis& machine, const Analysis& worker, const ServiceRequest& request) {
  if (worker.cores <= 0) {
    return Status::InvalidArgument(
        "the trace does not record its machine's cores, so a worker's rate is unknown: give --worker-cores");
  }
  if (machine.cores <= 0) {
    return Status::InvalidArgument(
        "the trace does not record its machine's cores, so one machine's rate is unknown: give --cores");
  }
  ServicePlan p;
  p.target = request.target;
  p.warnings = machine.warnings;
  // The worker's what-ifs may warn of their own (say, memory below the
  // buffers); the trace's warnings are already there once.
  for (const auto& w : worker.warnings) {
    if (std::find(p.warnings.begin(), p.warnings.end(), w) == p.warnings.end()) p.warnings.push_back(w);
  }
  p.worker_network_bytes_per_s = request.worker_network_bytes_per_s;
  p.worker_overridden = request.worker_cores.has_value() || request.worker_memory_bytes.has_value();

  PLUMBER_ASSIGN_OR_RETURN(Plan one, MakePlan(machine));
  p.machine_cores = machine.cores;
  p.machine_cores_from = machine.cores_from;
  p.machine_cores_source = machine.cores_source;
  p.machine_cores_noted = machine.cores_from != CoresFrom::kMachine || machine.effective_cores.has_value();
  p.machine_memory_bytes = machine.memory_bytes;
  p.single_machine_rate = one.throughput;
  p.single_machine_binding = Binding(one);
  p.single_machine_cache = one.cache_node;

  const Sharding sharding = ChooseSharding(worker);
  p.sharding = sharding.policy;
  p.sharding_reason = sharding.reason;
  p.file_readers = sharding.readers;
  p.files = sharding.files;

  // With dynamic sharding a worker's share of the data changes from epoch
  // to epoch, so its cache could never replay an epoch: plan without one.
  PlanOptions worker_options;
  worker_options.allow_cache = p.sharding == ShardingPolicy::kOff;
  PLUMBER_ASSIGN_OR_RETURN(Plan per_worker, MakePlan(worker, worker_options));
  p.worker_cores = worker.cores;
  p.worker_memory_bytes = worker.memory_bytes;
  p.worker_compute_rate = per_worker.throughput;
  p.worker_compute_binding = Binding(per_worker);
  for (const auto& stage : per_worker.stages) p.worker_cores_used += stage.cores;
  p.worker_cache = per_worker.cache_node;
  p.worker_cache_bytes = per_worker.cache_bytes;
  p.worker_memory_needed_bytes = static_cast<double>(worker.buffered_bytes) + p.worker_cache_bytes;
  p.worker_as_traced_rate = worker.as_traced.throughput;
  if (p.worker_memory_needed_bytes > static_cast<double>(p.worker_memory_bytes)) {
    p.warnings.push_back("a worker's memory (" + units::FormatBytes(static_cast<double>(p.worker_memory_bytes)) +
                         ") is less than the " + units::FormatBytes(p.worker_memory_needed_bytes) +
                         " its buffers held in the trace: give the workers more memory (--worker-mem)");
  }
  if (p.sharding == ShardingPolicy::kDynamic) {
    p.cache_note =
        "caching is planned off on the workers: with dynamic sharding each worker reads only the files the "
        "dispatcher hands it, a different share each epoch, so a cache on a worker never holds a whole epoch to "
        "replay";
    if (!p.single_machine_cache.empty()) {
      p.cache_note += " (one machine alone would cache after " + Quoted(p.single_machine_cache) + ")";
    }
  } else if (!p.worker_cache.empty()) {
    p.cache_note = "each worker caches after " + Quoted(p.worker_cache) + " (" +
                   units::FormatBytes(p.worker_cache_bytes) +
                   "): without sharding every worker sees the whole dataset, and it fits in one worker's cache "
                   "budget of " + units::FormatBytes(worker.cache_budget_bytes);
  } else {
    p.cache_note = "no cache on the workers: " +
                   (per_worker.cache_note.empty()
                        ? "none that is re-read fits in one worker's cache budget of " +
                              units::FormatBytes(worker.cache_budget_bytes) + " and pays off"
                        : per_worker.cache_note);
  }

  // The distribute point: below the prefetches at the output, which stay on
  // the trainer to overlap receiving with training.
  const ProgramGraph& program = worker.program_graph();
  int at = program.output();
  while (program.op(at).prefetches && program.inputs(at).size() == 1) {
    p.trainer_nodes.insert(p.trainer_nodes.begin(), program.name(at));
    at = program.inputs(at).front();
  }
  p.distribute_after = program.name(at);
  if (const NodeModel* m = worker.Find(p.distribute_after);
      m != nullptr && m->bytes_per_element && *m->bytes_per_element * m->visit_ratio > 0) {
    p.bytes_per_minibatch = *m->bytes_per_element * m->visit_ratio;
  }
  p.distribute_code = std::string("dataset = dataset.apply(tf.data.experimental.service.distribute(") +
                      "processing_mode=tf.data.experimental.service.ShardingPolicy." +
                      ShardingPolicyName(p.sharding) + ", service=DISPATCHER_ADDRESS))";

  auto sizing = SizeService(request.target, p.single_machine_rate, p.worker_compute_rate,
                            request.worker_network_bytes_per_s, p.bytes_per_minibatch);
  if (!sizing.ok()) {
    if (request.worker_network_bytes_per_s && !p.bytes_per_minibatch) {
      return Status::InvalidArgument("--worker-network: the trace records no bytes for '" + p.distribute_after +
                                     "', where distribute goes, so the bytes a worker sends per minibatch are "
                                     "unknown; plan without --worker-network");
    }
    return sizing.status();
  }
  p.sizing = *sizing;

  p.disk_bytes_per_minibatch = per_worker.disk_bytes_per_minibatch;
  p.worker_disk_bandwidth = worker.disk_bandwidth;
  p.disk_bandwidth_from = worker.disk_bandwidth_from;

  if (!p.sizing.service_needed) {
    p.assumptions.push_back("one machine reaches the target, so the plan rests on no service assumption");
    return p;
  }
  // The assumptions, each a sentence the user can check against their
  // cluster.
  const std::string n = std::to_string(p.sizing.workers);
  p.assumptions.push_back((p.sizing.workers == 1 ? std::string("the one worker has ")
                                                 : "the " + n + " workers are identical: ") +
                          Cores(p.worker_cores) + " and " +
                          units::FormatBytes(static_cast<double>(p.worker_memory_bytes)) +
                          (p.sizing.workers == 1 ? " (" : " each (") +
                          (p.worker_overridden                        ? "as --worker-cores/--worker-mem give"
                           : p.machine_cores_from == CoresFrom::kRun ? "what the traced run had of its machine"
                                                                      : "the machine of the trace") +
                          ")");
  if (worker.cpu_is_wall_time) {
    p.assumptions.push_back(
        "the trace's CPU figures are tf.data's wall time in each node's own work (CPU plus waiting): the rate per "
        "worker is a lower bound, so the number of workers an upper one");
  }
  // The plan's rate needs the plan's parallelism; the pipeline as the user
  // runs it today may be far slower, and would need more workers.
  std::string command = "plumber rewrite " + worker.source + " --cores " + std::to_string(p.worker_cores);
  if (request.worker_memory_bytes) command += " --mem " + std::to_string(*request.worker_memory_bytes);
  if (p.sharding == ShardingPolicy::kDynamic) command += " --no-cache";
  std::string rewrite =
      "each worker runs the pipeline with the parallelism plumber plans for it (`" + command + "` " +
      (worker.imported_from.empty() ? "writes it" : "gives the tf.data edits") + ")";
  if (p.worker_as_traced_rate && *p.worker_as_traced_rate > 0 &&
      *p.worker_as_traced_rate < p.sizing.worker_rate * (1 - 1e-6)) {
    const double as_traced_workers = std::ceil(request.target / *p.worker_as_traced_rate * (1 - 1e-9));
    rewrite += "; as traced, a worker reaches " + FormatSignificant(*p.worker_as_traced_rate, 4) +
               " minibatches/s, and the target would need " + FormatSignificant(as_traced_workers, 6) + " workers";
  }
  p.assumptions.push_back(rewrite);
  p.assumptions.push_back(
      "the rate grows linearly with the workers: the dispatcher is no bottleneck, and the trainer's side of "
      "distribute (receiving minibatches" +
      std::string(p.trainer_nodes.empty() ? "" : ", the prefetch above it") + ") costs nothing");
  if (p.disk_bytes_per_minibatch > 0) {
    const std::string total = units::FormatRate(request.target * p.disk_bytes_per_minibatch);
    if (p.worker_disk_bandwidth) {
      p.assumptions.push_back("each worker sees the storage bandwidth of the trace (" +
                              units::FormatRate(*p.worker_disk_bandwidth) + ", " + p.disk_bandwidth_from +
                              ") whatever the others read: the storage must serve " + total + " in all at the target");
    } else {
      p.assumptions.push_back("the storage bandwidth is unknown, so it bounds no worker: the storage must serve " +
                              total + " in all at the target");
    }
  } else {
    p.assumptions.push_back("the pipeline reads no storage in steady state, so storage bounds no worker");
  }
  if (p.worker_network_bytes_per_s) {
    p.assumptions.push_back(
        "each worker sends at most " + units::FormatRate(*p.worker_network_bytes_per_s) +
        " to the trainer, which receives " + units::FormatRate(request.target * p.bytes_per_minibatch.value_or(0)) +
        " in all at the target (" + units::FormatBytes(p.bytes_per_minibatch.value_or(0)) + " per minibatch after " +
        Quoted(p.distribute_after) + ")");
  } else {
    p.assumptions.push_back("the network bounds no worker (give --worker-network to bound what each one sends)");
  }
  p.assumptions.push_back(p.cache_note);
  if (p.sharding == ShardingPolicy::kDynamic && p.files && *p.files < p.sizing.workers) {
    // The count above is right for the rate, but the data as it is cut
    // cannot feed it: say what the files allow and how to cut it so that
    // every worker counted helps.
    p.assumptions.push_back(
        "the dispatcher hands out whole files: " + FormatCount(*p.files, "file", "files") + " keep at most " +
        std::to_string(*p.files) + " of the " + n + " workers reading at once, so as the data is cut the service " +
        "reaches at most " + FormatSignificant(static_cast<double>(*p.files) * p.sizing.worker_rate, 4) +
        " minibatches/s; write the data as at least " + n + " files (more shards of the same records) for all " + n +
        " workers to help");
  }
  return p;
}

StatusOr<ServicePlan> PlanServiceForTrace(const LoadedTrace& trace, const AnalysisOptions& options,
                                          const ServiceRequest& request) {
  // The analysis assumes one core for such a trace and warns; a deployment
  // sized on an assumed worker would be invented, so ask instead.
  if (trace.header.machine().cores() <= 0 && !options.cores && !request.worker_cores) {
    return Status::InvalidArgument(
        trace.source +
        ": the trace does not record its machine's cores, so the size of a worker is unknown: give --worker-cores "
        "(and --cores for the machine one trainer would have)");
  }
  // Likewise memory: a worker of "0 B" would be an invented figure.
  const auto& m = trace.header.machine();
  if (m.memory_bytes() <= 0 && m.available_memory_bytes() <= 0 && !options.memory_bytes &&
      !request.worker_memory_bytes) {
    return Status::InvalidArgument(
        trace.source +
        ": the trace does not record its machine's memory, so the size of a worker is unknown: give --worker-mem "
        "(and --mem for the machine one trainer would have)");
  }
  AnalysisOptions machine_options = options;
  machine_options.solve_programs = false;  // the plans below are all it needs
  PLUMBER_ASSIGN_OR_RETURN(Analysis machine, Analyze(trace, machine_options));
  std::optional<Analysis> worker;
  if (request.worker_cores || request.worker_memory_bytes) {
    AnalysisOptions worker_options = machine_options;
    if (request.worker_cores) worker_options.cores = *request.worker_cores;
    if (request.worker_memory_bytes) worker_options.memory_bytes = *request.worker_memory_bytes;
    PLUMBER_ASSIGN_OR_RETURN(worker, Analyze(trace, worker_options));
  }
  auto plan = PlanService(machine, worker ? *worker : machine, request);
  if (!plan.ok()) return plan.status().WithContext(trace.source);
  return plan;
}

StatusOr<ServicePlan> PlanServiceForFile(Env* env, const std::string& path, const AnalysisOptions& options,
                                         const ServiceRequest& request) {
  PLUMBER_ASSIGN_OR_RETURN(LoadedTrace trace,
                           LoadTraceFile(env, path, options.window, options.max_memory_bytes));
  return PlanServiceForTrace(trace, options, request);
}

}  // namespace plumber::analysis
