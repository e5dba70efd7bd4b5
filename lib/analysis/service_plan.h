// The service plan: a tf.data service deployment for a target rate that one
// machine cannot reach (`plumber provision --workers`). It
// rests on the single-machine plan (plan.h) solved for one worker: workers
// = ceil(target / per-worker rate), where the per-worker rate is the best
// the worker machine reaches, bounded by the bytes its network can send at
// the point where `distribute` hands minibatches to the trainer. It also
// says how the dispatcher shards the data (DYNAMIC for file-based sources,
// OFF otherwise), where the `distribute` call goes, what becomes of caching
// on the workers, and every assumption the arithmetic makes, since a
// deployment plan is only as good as those.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/trace_source.h"
#include "base/env.h"
#include "base/status.h"

namespace plumber::analysis {

struct ServiceRequest {
  double target = 0;  // minibatches/s the trainer must receive
  // The worker machine; unset: the machine the analysis plans for (the
  // trace's, with --cores/--mem applied).
  std::optional<int> worker_cores;
  std::optional<uint64_t> worker_memory_bytes;
  // Bytes/s one worker can send to the trainer; unset: not a limit.
  std::optional<double> worker_network_bytes_per_s;
};

// tf.data.experimental.service.ShardingPolicy values plumber plans.
enum class ShardingPolicy { kOff, kDynamic };
// "OFF", "DYNAMIC": the member names of the enum in tf.data.
const char* ShardingPolicyName(ShardingPolicy policy);

// The arithmetic of the deployment, apart from the trace so that it can be
// checked by hand.
struct ServiceSizing {
  bool service_needed = true;  // false: one machine reaches the target
  int workers = 1;
  double worker_rate = 0;      // min(compute, network)
  std::string bound;           // "compute" or "network": which one binds
  // network / bytes per minibatch; nullopt when the network is not given
  // (or the distributed elements carry no bytes).
  std::optional<double> network_rate;
};

// `single_machine_rate`: what one machine reaches (cache allowed as its
// plan says); `compute_rate`: what one worker reaches with the cache advice
// of the service. InvalidArgument for a non-positive network or a network
// bound without bytes per minibatch; FailedPrecondition when a worker
// reaches nothing or the target needs an absurd number of workers.
StatusOr<ServiceSizing> SizeService(double target, double single_machine_rate, double compute_rate,
                                    std::optional<double> network_bytes_per_s,
                                    std::optional<double> bytes_per_minibatch);

struct ServicePlan {
  double target = 0;

  // The single machine (what-ifs applied) and its plan.
  int machine_cores = 0;
  // Where its cores come from (Analysis::cores_from, cores_source).
  CoresFrom machine_cores_from = CoresFrom::kMachine;
  std::string machine_cores_source;
  // Also said in text: the cores are not simply the machine's, or the
  // trace records what the run had.
  bool machine_cores_noted = false;
  uint64_t machine_memory_bytes = 0;
  double single_machine_rate = 0;
  std::string single_machine_binding;  // as Plan::binding_without_cache
  std::string single_machine_cache;    // empty: no cache

  ServiceSizing sizing;

  // The worker machine and its plan under the service's cache advice.
  int worker_cores = 0;
  uint64_t worker_memory_bytes = 0;
  double worker_compute_rate = 0;
  std::string worker_compute_binding;
  double worker_cores_used = 0;        // at the worker's compute rate
  // Memory a worker holds: the buffers as traced plus its cache, if any.
  double worker_memory_needed_bytes = 0;
  // The pipeline exactly as traced on one worker (no rewrite); nullopt
  // when the model cannot bound it.
  std::optional<double> worker_as_traced_rate;
  std::optional<double> worker_network_bytes_per_s;
  std::string worker_cache;            // node each worker caches after; empty: none
  double worker_cache_bytes = 0;
  std::string cache_note;              // why caching is what it is on the workers

  ShardingPolicy sharding = ShardingPolicy::kOff;
  std::string sharding_reason;
  std::vector<std::string> file_readers;  // reads_storage nodes
  std::optional<int64_t> files;           // files the dispatcher can split, when known
  // True when --worker-cores or --worker-mem set the worker apart from the
  // machine of the trace.
  bool worker_overridden = false;

  // `distribute` goes after this node; the prefetches above it stay on the
  // trainer, nearest the distribute point first.
  std::string distribute_after;
  std::vector<std::string> trainer_nodes;
  // Bytes of one minibatch at that point: its bytes per element times its
  // visit ratio; nullopt when the trace does not record them.
  std::optional<double> bytes_per_minibatch;
  std::string distribute_code;  // the Python line to add

  // Storage: bytes read per minibatch, the bandwidth each worker is
  // assumed to see (and where it comes from), and the storage's total load
  // at the target.
  double disk_bytes_per_minibatch = 0;
  std::optional<double> worker_disk_bandwidth;
  std::string disk_bandwidth_from;

  std::vector<std::string> assumptions;
  std::vector<std::string> warnings;  // the analysis' own, for the caller to print
};

// The plan from the analysis of the machine and that of the worker (the
// same trace with the worker's cores and memory as what-ifs).
StatusOr<ServicePlan> PlanService(const Analysis& machine, const Analysis& worker, const ServiceRequest& request);

// Analyses the trace once per machine (the read is shared) and plans.
// Errors name the trace.
StatusOr<ServicePlan> PlanServiceForTrace(const LoadedTrace& trace, const AnalysisOptions& options,
                                          const ServiceRequest& request);
StatusOr<ServicePlan> PlanServiceForFile(Env* env, const std::string& path, const AnalysisOptions& options,
                                         const ServiceRequest& request);

}  // namespace plumber::analysis
