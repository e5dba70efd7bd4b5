// Thread groups: which nodes of a program run on
// which threads, read off the op table's ThreadUse. Inline work runs on its
// consumer's thread; a pooled stage runs its work on its own workers, which
// also pull its input one at a time under a lock; a prefetch runs its input
// on a thread of its own; a parallel interleave runs its function's
// instances on its workers. Nodes sharing threads add up: a group of n
// threads whose members need s_i seconds of service per minibatch delivers
// at most n / sum(s_i) minibatches/s (the evaluator's group limit,
// evaluator.h).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipeline/program_graph.h"

namespace plumber::analysis {

struct ThreadGroup {
  // "consumer" for the thread that pulls the output; else what the threads
  // are, e.g. "decode's workers", "prefetch's thread", "decode's input lock".
  std::string name;
  // The node that starts the threads; -1 for the consumer.
  int owner = -1;
  int threads = 1;
  // Nodes whose own work runs on these threads (program order).
  std::vector<int> members;
  // A pooled stage's input: its workers pull it one at a time, so however
  // many workers there are, its members run as if on one thread. These
  // members also belong to the workers' group.
  bool serialized = false;

  // Its threads hand each element its owner makes to the owner's
  // consumer's thread (a pool's, a prefetch's, a parallel interleave's).
  bool hands_off() const { return owner >= 0 && !serialized; }
};

struct ThreadGroups {
  std::vector<ThreadGroup> groups;  // groups[0] is the consumer's
  // Per node: the group its own work runs in (never a serialized one);
  // -1 for a node the output does not reach.
  std::vector<int> group_of;

  // Node i starts threads that hand each element it makes to its
  // consumer's thread (a pool's, a prefetch's, a parallel interleave's).
  bool HandsOff(int i) const;
};

ThreadGroups BuildThreadGroups(const ProgramGraph& graph);

}  // namespace plumber::analysis
