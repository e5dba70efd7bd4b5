// The evaluator: how fast one configured program runs on a machine, given
// what each of its nodes costs. The as-traced prediction (model.cc) asks it
// of the traced program with the traced costs; the rewrite's model
// (rewrite/emitted_model.h) asks it of every program it considers with
// those costs moved by what the program changes (hand-offs added or
// removed, caches and their replay, costs measured at other parallelism),
// and the figure it reports for the emitted pipeline is this function's.
//
// The steady state is the least of the closed-form limits of
// lp/steady_limits.h over the program's thread groups (thread_groups.h; the
// consumer's group also runs the model step), the cores shared by all the
// CPU, storage, and a ceiling from elsewhere (the plan's); the epoch
// restart's fill and drain (epoch_restart.h) are then added to each epoch.
// Each cost rule lives in one of those three places, so a change to one is
// made once. The LP (lp/throughput.h) solves the same rows and is the
// tests' cross-check.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/epoch_restart.h"
#include "analysis/thread_groups.h"
#include "pipeline/program_graph.h"

namespace plumber::analysis {

struct NodeModel;

// What a node's own work costs per minibatch in the configuration
// evaluated. A node that does no steady-state work (under a cache, not
// counted, not reached) leaves `works` false.
struct WorkCost {
  bool works = false;
  double cpu_seconds = 0;
  // The time it holds its thread: CPU and waiting, and what it waits for
  // beyond its CPU (a hand-off's heap lock); at least cpu_seconds.
  double service_seconds = 0;
  double storage_bytes = 0;
};

struct ProgramCosts {
  std::vector<WorkCost> nodes;  // by node index of the graph
  // Per thread group (by index; missing: none), time per minibatch its
  // threads are held beyond their members' service: a pool's input lock
  // passing between its workers.
  std::vector<double> group_extra_seconds;
};

struct EvaluationMachine {
  double cores = 1;
  std::optional<double> storage_bandwidth;  // bytes/s; nullopt: no limit known
  // The consumer's own time per minibatch (the model step).
  double step_seconds = 0;
  // A bound from elsewhere, minibatches/s (a plan's ceiling).
  std::optional<double> ceiling;
};

// For the epoch restart: the traced model of the elements node i carries
// (itself, or for a node a rewrite inserted the node it serves; null when
// none), and whether its own work runs every epoch.
struct RestartModels {
  std::function<const NodeModel*(int)> carried;
  std::function<bool(int)> works;
};

struct Evaluation {
  // Over whole epochs: the steady state with the epoch restart; nullopt
  // when nothing bounds the program.
  std::optional<double> throughput;
  std::optional<double> steady_throughput;
  // What holds the steady state: "threads" (a thread group), "cpu" (the
  // cores), "storage" or "ceiling"; empty when nothing does.
  std::string limit;
  // The node that costs the limiting resource most (the group's member
  // with the most service, the node with the most CPU or storage bytes);
  // for a thread group with no costed member its name; else empty.
  std::string bottleneck;
  // The steady bounds by kind, for the restart and for reports, and each
  // thread group's (by index into the ThreadGroups; nullopt: no service).
  SteadyBounds bounds;
  std::vector<std::optional<double>> group_throughput;
  std::optional<EpochRestart> restart;
  // Per node: the cores its CPU takes at the steady throughput (c_i X),
  // its share of the machine.
  std::vector<double> cores;
};

// `threads` is BuildThreadGroups(graph); `restart` may be null (no epoch
// restart is applied).
Evaluation Evaluate(const ProgramGraph& graph, const ThreadGroups& threads, const ProgramCosts& costs,
                    const EvaluationMachine& machine, const RestartModels* restart);

}  // namespace plumber::analysis
