// The throughput program of the Plumber paper (section 4.3): share the
// machine's cores among the stages so the slowest one is as fast as it can
// be, under storage limits. Plain structs in, plain structs out, so it is
// testable without traces.
//
//   maximise X  subject to
//     c_i X <= theta_i            for every stage with CPU cost (c_i = 1/R_i)
//     sum theta_i <= cores,  0 <= theta_i <= max_cores_i
//     D X <= B                    when storage is read and B is known
//     D X <= m_k p + b_k          for each piece of the measured bandwidth-
//                                 vs-parallelism curve, 1 <= p <= max_p
//     s_i X <= max_threads_i      for every stage that waits (s_i = CPU plus
//                                 waiting per minibatch: waiting takes a
//                                 thread, not a core)
//     sum over g of s_i X <= n_g  for every thread group g of n_g threads
//                                 (stages sharing threads add up)
//
// A stage with no CPU cost has no constraint: its rate is unbounded, never 0.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "lp/linear_program.h"

namespace plumber::lp {

struct StageCost {
  std::string name;
  // CPU seconds per minibatch (1 / rate per core); 0 for a free stage.
  double cpu_seconds_per_minibatch = 0;
  // Most cores the stage can use (1 for a sequential stage).
  double max_cores = 1;
  // Seconds per minibatch the stage holds a thread (CPU and waiting); 0 or
  // equal to the CPU cost for a stage that never waits (no thread row).
  double service_seconds_per_minibatch = 0;
  // Most threads it may have; with service above its CPU cost.
  double max_threads = 1;
};

// Stages that run on the same threads (indices into the stages).
struct ThreadGroupCost {
  std::string name;
  std::vector<int> stages;
  double threads = 1;
  // Service of the group outside any stage (the consumer's model step).
  double extra_seconds_per_minibatch = 0;
};

struct BandwidthPiece {
  double slope = 0;      // bytes/s per unit of read parallelism
  double intercept = 0;  // bytes/s
};

struct StorageCost {
  // Storage bytes read per minibatch; 0 when the pipeline reads nothing.
  double bytes_per_minibatch = 0;
  // Bandwidth limit, bytes/s; 0 when unknown (no constraint).
  double bandwidth = 0;
  // Concave piecewise-linear bandwidth(p) of the reader; empty when not
  // calibrated.
  std::vector<BandwidthPiece> curve;
  double max_parallelism = 1;
};

struct ThroughputProblem {
  double cores = 0;
  std::vector<StageCost> stages;
  std::vector<ThreadGroupCost> groups;
  StorageCost storage;
};

struct ThroughputPlan {
  double throughput = 0;             // minibatches/s
  std::vector<double> cores;         // theta per stage, in input order
  double read_parallelism = 0;       // p, when a curve was given
  // What holds X down: "cores" (all cores busy), "stage:NAME" (a stage at its
  // core cap), "threads:NAME" (a waiting stage at its thread cap),
  // "group:NAME" (a thread group), "storage" (B / D) or "bandwidth_curve".
  std::string binding;
};

StatusOr<ThroughputPlan> SolveThroughput(const ThroughputProblem& problem,
                                         const LinearProgram::Options& options = {});

}  // namespace plumber::lp
