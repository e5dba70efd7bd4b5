// The DataLoader's groups and evaluation; see dataloader_model.h.
#include "analysis/dataloader_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "analysis/epoch_restart.h"

namespace plumber::analysis {

bool DataLoaderNodeIsRandom(const schema::Node& node) {
  constexpr std::string_view kTransform = "transform ";
  const std::string& t = node.imported_type();
  if (t.rfind(kTransform, 0) != 0) return false;
  const std::string_view type = std::string_view(t).substr(kTransform.size());
  if (type.rfind("Random", 0) == 0) return true;  // RandomResizedCrop, RandomHorizontalFlip, RandomApply...
  static constexpr std::array<std::string_view, 7> kRandom = {
      "ColorJitter", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "GaussianBlur", "ElasticTransform"};
  return std::find(kRandom.begin(), kRandom.end(), type) != kRandom.end();
}

int DataLoaderHandOff(const ProgramGraph& g) {
  const int out = g.output();
  return out >= 0 && g.op(out).prefetches ? out : -1;
}

std::optional<DataLoaderMeasured> MeasureDataLoader(const schema::TraceHeader& header, const SelectedWindow& window,
                                                    int64_t minibatches, double nodes_cpu_seconds) {
  if (!header.has_imported() || !header.imported().has_dataloader()) return std::nullopt;
  const schema::DataLoaderConfig& c = header.imported().dataloader();
  DataLoaderMeasured d;
  d.traced = {c.num_workers(), std::max(1, c.prefetch_factor()), c.persistent_workers()};
  d.pin_memory = c.pin_memory();
  d.batch_size = c.batch_size();
  if (c.batch_size() > 0 && c.dataset_length() > 0) {
    const double batches = static_cast<double>(c.dataset_length()) / static_cast<double>(c.batch_size());
    d.batches_per_epoch = c.drop_last() ? std::floor(batches) : std::ceil(batches);
  }
  // Worker starts are rare (one pool an epoch at most): the whole run's
  // counters, not the window's, price them.
  const schema::DataLoaderCounters& k = window.end.dataloader();
  d.epochs = k.epochs();
  if (k.workers_started() > 0) {
    d.worker_start_seconds = static_cast<double>(k.worker_start_ns()) * 1e-9 / static_cast<double>(k.workers_started());
  }
  if (c.num_workers() > 0 && minibatches > 0) {
    const int64_t start_cpu = window.start ? window.start->process_cpu_ns() : 0;
    const double main_cpu = static_cast<double>(window.end.process_cpu_ns() - start_cpu) * 1e-9 - nodes_cpu_seconds;
    d.crossing_seconds = std::max(0.0, main_cpu) / static_cast<double>(minibatches);
  }
  // A pool that restarts costs more than its workers' start: the fresh
  // workers' first batches come late (copy-on-write faults, their own
  // set-up) and the old ones are shut down at the epoch's end, all while
  // the main process waits. What it waited at each epoch's start and end
  // beyond the first round's build (which the cores count anyway: one batch
  // on each worker, the workers sharing the cores) is the restart, and its
  // share per worker prices other pool sizes.
  if (c.num_workers() > 0 && !c.persistent_workers() && k.epochs() > 0 && minibatches > 0) {
    const double cores = header.machine().cores() > 0 ? header.machine().cores() : 1.0;
    const double batch = (nodes_cpu_seconds / static_cast<double>(minibatches) + d.crossing_seconds.value_or(0.0)) *
                         std::max(1.0, c.num_workers() / cores);
    const double waited = static_cast<double>(k.first_batch_wait_ns() + k.epoch_end_wait_ns()) * 1e-9 /
                          static_cast<double>(k.epochs());
    const double restart = std::max(0.0, waited - batch) / c.num_workers();
    if (restart > d.worker_start_seconds.value_or(0.0)) d.worker_start_seconds = restart;
  }
  return d;
}

ThreadGroups DataLoaderThreadGroups(const ProgramGraph& g, int num_workers) {
  ThreadGroups tg;
  tg.group_of.assign(static_cast<size_t>(g.size()), -1);
  tg.groups.push_back(ThreadGroup{"consumer", -1, 1, {}, false});
  const int hand_off = DataLoaderHandOff(g);
  int pool = 0;
  if (num_workers > 0) {
    tg.groups.push_back(ThreadGroup{"DataLoader workers", hand_off, num_workers, {}, false});
    pool = 1;
  }
  // Every node the output reaches: reaching is what depth says.
  for (int i = 0; i < g.size(); ++i) {
    if (g.depth(i) < 0) continue;
    const int k = i == hand_off ? 0 : pool;
    tg.group_of[i] = k;
    tg.groups[k].members.push_back(i);
  }
  return tg;
}

DataLoaderEvaluation EvaluateDataLoader(const ProgramGraph& g, const ProgramCosts& costs,
                                        const DataLoaderMeasured& measured, const DataLoaderSetting& setting,
                                        double cores, double step_seconds) {
  const int n = std::max(0, setting.num_workers);
  const ThreadGroups tg = DataLoaderThreadGroups(g, n);
  // The hand-off node's counters are the main process's wait, not work: it
  // costs the crossing instead, and only when something crosses. The
  // crossing is CPU the main process spends beside the workers on the same
  // cores, so it is the hand-off's work, not the consumer's step.
  ProgramCosts c = costs;
  const int hand_off = DataLoaderHandOff(g);
  const double crossing = n > 0 ? measured.crossing_seconds.value_or(0.0) : 0.0;
  if (hand_off >= 0) c.nodes[hand_off] = WorkCost{crossing > 0, crossing, crossing, 0};
  // One batch on one worker: every node's service but the hand-off's.
  double batch_seconds = 0;
  for (int i = 0; i < g.size(); ++i) {
    if (i != hand_off && c.nodes[i].works && tg.group_of[i] >= 0) batch_seconds += c.nodes[i].service_seconds;
  }
  DataLoaderEvaluation out;
  EvaluationMachine machine;
  machine.cores = cores;
  // Without a hand-off node to carry it, the crossing can only be the step's.
  machine.step_seconds = step_seconds + (hand_off < 0 ? crossing : 0.0);
  if (n > 0 && batch_seconds + crossing > 0) {
    out.in_flight_bound = static_cast<double>(std::max(1, setting.prefetch_factor)) * n / (batch_seconds + crossing);
    machine.ceiling = out.in_flight_bound;
  }
  out.evaluation = Evaluate(g, tg, c, machine, /*restart=*/nullptr);
  Evaluation& e = out.evaluation;
  if (n > 0 && measured.batches_per_epoch > 0 && e.throughput) {
    // A restarting pool starts before anything is built: the cores idle
    // through it. The epoch's first wave is work the cores bound counts,
    // but its last is uneven: `last` workers build the final round while
    // the others idle, so the workers' term pays the round's unfilled part
    // and the cores' term the cores left idle in it.
    const double start = measured.RestartSeconds(setting);
    const double batches = measured.batches_per_epoch;
    const double rounds = std::ceil(batches / n);
    const double last = batches - (rounds - 1) * n;
    const double busy = std::min(static_cast<double>(n), cores);
    EpochRestart r;
    r.repeat = "DataLoader epoch";
    r.minibatches_per_epoch = batches;
    r.fill_wait_seconds = start + batch_seconds * std::max(0.0, busy - last) / std::max(1.0, cores);
    r.drain_seconds = start + batch_seconds * (rounds - batches / n) + crossing;
    out.restart_seconds = start + batch_seconds + crossing;
    e.restart = r;
    e.throughput = r.Apply(e.bounds);
  }
  return out;
}

}  // namespace plumber::analysis
