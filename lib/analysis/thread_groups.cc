// Thread groups from the op table (see thread_groups.h).
#include "analysis/thread_groups.h"

#include <algorithm>

#include "pipeline/op_table.h"

namespace plumber::analysis {
namespace {

class Grouper {
 public:
  explicit Grouper(const ProgramGraph& g) : g_(g) { out_.group_of.assign(g.size(), -1); }

  ThreadGroups Run() {
    NewGroup("consumer", -1, 1, false);
    // An explicit stack: a 100,000-node chain must not overflow the call
    // stack. Each entry: node, its group, the serialized group it is
    // pulled under (-1: none).
    std::vector<Visit> stack{{g_.output(), 0, -1}};
    while (!stack.empty()) {
      const Visit v = stack.back();
      stack.pop_back();
      Place(v, &stack);
    }
    for (auto& group : out_.groups) std::sort(group.members.begin(), group.members.end());
    return std::move(out_);
  }

 private:
  struct Visit {
    int node;
    int group;
    int lock;
  };

  int NewGroup(std::string name, int owner, int threads, bool serialized) {
    out_.groups.push_back(ThreadGroup{std::move(name), owner, std::max(1, threads), {}, serialized});
    return static_cast<int>(out_.groups.size()) - 1;
  }

  void Place(const Visit& v, std::vector<Visit>* stack) {
    const int i = v.node;
    if (out_.group_of[i] >= 0) return;  // reached twice (shared input): first placement wins
    const ThreadUse tu = NodeThreads(g_.node(i));
    const std::string& name = g_.name(i);
    int work = v.group;
    if (tu.threads > 0 && tu.work == Placement::kOwnThreads) {
      work = NewGroup(name + "'s workers", i, tu.threads, false);
    }
    out_.group_of[i] = work;
    out_.groups[work].members.push_back(i);
    // Pulled under a pool's input lock, its work is serialized only when
    // it runs in the puller's turn: a pool of its own makes its elements
    // on its workers, and the lock only takes them out of its buffer.
    if (v.lock >= 0 && work == v.group) out_.groups[v.lock].members.push_back(i);

    int inputs = v.group;
    int lock = v.lock;
    if (tu.threads > 0 && tu.inputs == Placement::kOwnThreads) {
      if (work != v.group) {
        // A pool: its workers pull the input, taking turns.
        inputs = work;
        lock = NewGroup(name + "'s input lock", i, 1, true);
      } else {
        inputs = NewGroup(name + "'s thread" + (tu.threads > 1 ? "s" : ""), i, tu.threads, false);
        lock = -1;
      }
    }
    for (int k : g_.inputs(i)) stack->push_back({k, inputs, lock});
    const int f = g_.function(i);
    if (f >= 0) {
      int fgroup = work;
      int flock = v.lock;
      if (tu.threads > 0 && tu.function == Placement::kOwnThreads) {
        const OpDef& op = g_.op(i);
        const int cycle = op.cycle_length != nullptr ? op.cycle_length(g_.node(i)) : tu.threads;
        fgroup = NewGroup(name + "'s workers", i, std::min(tu.threads, std::max(1, cycle)), false);
        flock = -1;
      }
      stack->push_back({f, fgroup, flock});
    }
  }

  const ProgramGraph& g_;
  ThreadGroups out_;
};

}  // namespace

ThreadGroups BuildThreadGroups(const ProgramGraph& graph) { return Grouper(graph).Run(); }

bool ThreadGroups::HandsOff(int i) const {
  return std::any_of(groups.begin(), groups.end(), [i](const ThreadGroup& g) { return g.owner == i && g.hands_off(); });
}

}  // namespace plumber::analysis
