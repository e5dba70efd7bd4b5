// The rewrite's parallelism knobs: each parallelism parameter of the
// program, the plan's cores and costs of the stages on its threads, and
// the whole threads they are given (the plan's cores rounded, spare cores
// to the slowest stage, threads for what a stage waits). The rewriter
// searches around what AssignParallelism and AddWaitThreads start from.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "pipeline/op_table.h"

namespace plumber::rewrite {

// A parallelism parameter of the program and the stages whose work runs on
// its threads: the node itself and, for an interleave, its function's nodes.
struct Knob {
  int node = -1;
  std::string name;
  const OpDef* op = nullptr;
  int current = 1;
  double cost = 0;     // CPU seconds per minibatch of its active members
  double service = 0;  // CPU and waiting seconds per minibatch of them
  double cores = 0;    // plan's cores for its members
  double max_threads = std::numeric_limits<double>::infinity();
  bool active = false;
  int parallelism = 1;
  // Threads beyond its cores for the time its members wait (storage
  // requests, remote calls): they hold no core.
  int wait_threads = 0;
  std::string why;

  // Minibatches/s p cores sustain of its CPU; what its threads sustain,
  // waiting included, AddWaitThreads settles.
  double Capacity(int p) const { return (!active || cost <= 0) ? std::numeric_limits<double>::infinity() : p / cost; }
  // Waits enough that threads, not cores, decide what it sustains.
  bool Waits() const { return active && service > 1.05 * cost && service - cost > 1e-9; }
};

// Cores a knob holds against the budget (see knobs.cc).
int Holds(const Knob& k);

// Gives each knob whole threads from the plan's cores within `budget`.
void AssignParallelism(std::vector<Knob>& knobs, int budget);

// Threads beyond the cores for what each stage waits at `target`
// minibatches/s (Little's law with headroom).
void AddWaitThreads(std::vector<Knob>& knobs, double target);

}  // namespace plumber::rewrite
