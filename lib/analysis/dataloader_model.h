// The DataLoader's model: how a PyTorch DataLoader (a trace from
// python/plumber_torch, ImportInfo.dataloader set) runs, as the evaluator's
// thread groups and terms, so the as-traced prediction and the DataLoader
// advice (rewrite/torch_advice.h) both ask the one evaluator.
//
// A DataLoader's workers are processes, and each builds whole batches:
// read, decode and every transform of batch_size samples, then the collate,
// on the same worker. So the nodes below the hand-off form ONE pool of
// num_workers processes (no input lock: each worker is handed its own
// indices by the sampler); with num_workers 0 the main process builds every
// batch inline. A batch costs CPU to cross from a worker (pickling,
// unpickling, shared memory, the queues), measured as the main process's and
// the workers' CPU beyond the nodes': it is the hand-off node's work, in the
// main process beside the step and on the same cores as the workers. At most
// prefetch_factor x num_workers batches are in flight, so by Little's law the
// throughput is at most that many over a batch's time in flight (its build
// on one worker plus its crossing). Each epoch restarts the pool's work (the
// epoch restart's terms, epoch_restart.h): a non-persistent pool first starts
// its workers one after the other (torch starts them in a loop) with the
// cores idle, and the epoch's last round of batches is uneven, some workers
// idle while others build the last batches.
#pragma once

#include <optional>

#include "analysis/evaluator.h"
#include "analysis/thread_groups.h"
#include "analysis/window.h"
#include "pipeline/program_graph.h"

namespace plumber::analysis {

struct DataLoaderSetting {
  int num_workers = 0;
  int prefetch_factor = 2;
  bool persistent_workers = false;

  bool operator==(const DataLoaderSetting&) const = default;
};

// What the traced run measured of the DataLoader beyond its nodes.
struct DataLoaderMeasured {
  DataLoaderSetting traced;
  bool pin_memory = false;
  int64_t batch_size = 0;
  // Batches per epoch (len(dataset) over batch_size); 0: unknown.
  double batches_per_epoch = 0;
  int64_t epochs = 0;
  // One worker's share of what a restarting pool costs at each epoch,
  // seconds: from a non-persistent trace, the main process's wait at each
  // epoch's start and end beyond one batch's build (the workers' start,
  // their late first batches, their shutdown) over the workers; from a
  // persistent one, which restarts once, only the start (the time from
  // iter() until the last worker came up, over the workers started).
  // nullopt when no worker started.
  std::optional<double> worker_start_seconds;
  // The process CPU per batch (the main process's and the workers') beyond
  // the nodes' (a batch's crossing); nullopt when the traced run had no
  // workers, so nothing crossed.
  std::optional<double> crossing_seconds;

  // What restarting the pool of `setting` costs at each epoch, seconds
  // (0 for a persistent pool or none).
  double RestartSeconds(const DataLoaderSetting& setting) const {
    if (setting.persistent_workers || setting.num_workers <= 0) return 0;
    return setting.num_workers * worker_start_seconds.value_or(0.0);
  }
};

// What a DataLoader's trace measured (`header.imported.dataloader` set), over
// `window`, whose nodes took `nodes_cpu_seconds` for `minibatches` batches;
// nullopt for every other trace.
std::optional<DataLoaderMeasured> MeasureDataLoader(const schema::TraceHeader& header, const SelectedWindow& window,
                                                    int64_t minibatches, double nodes_cpu_seconds);

// The thread groups of the program run by a DataLoader of `num_workers`:
// group 0 the main process, which runs the hand-off node (the output, when
// it is not itself a worker's node) and, at 0 workers, every node; group 1
// the workers, every node below the hand-off.
ThreadGroups DataLoaderThreadGroups(const ProgramGraph& graph, int num_workers);

// The node the main process runs to take a batch from the workers (the
// output when it is a prefetch: the tracer's worker queue), else -1.
int DataLoaderHandOff(const ProgramGraph& graph);

// True for a node of a DataLoader's trace whose output is a random draw: a
// transform of torchvision's random augmentations (RandomResizedCrop,
// RandomHorizontalFlip, ColorJitter, ...), told by its type name. A user's
// own transform reads as deterministic; docs/pytorch.md says so.
bool DataLoaderNodeIsRandom(const schema::Node& node);

struct DataLoaderEvaluation {
  Evaluation evaluation;  // throughput over whole epochs, restart included
  // The in-flight bound (prefetch_factor x num_workers batches over a
  // batch's time in flight); nullopt at 0 workers.
  std::optional<double> in_flight_bound;
  double restart_seconds = 0;  // per epoch: worker start and first batch
};

// The DataLoader of `setting` over `graph` with `costs` (the nodes' costs
// per batch as traced) on `cores`, the consumer's own step `step_seconds`
// a batch. The measured crossing is the hand-off node's cost whenever
// the setting has workers, whatever `costs` gives it.
DataLoaderEvaluation EvaluateDataLoader(const ProgramGraph& graph, const ProgramCosts& costs,
                                        const DataLoaderMeasured& measured, const DataLoaderSetting& setting,
                                        double cores, double step_seconds);

}  // namespace plumber::analysis
