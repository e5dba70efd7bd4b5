// Whole threads for the parallelism knobs; see knobs.h.
#include "rewrite/knobs.h"

#include <algorithm>
#include <cmath>

#include "base/number_format.h"

namespace plumber::rewrite {
namespace {

// A stage that needs less than this many cores at the planned rate keeps
// one thread: rounding 0.002 cores up to a whole core gains nothing.
constexpr double kLightCores = 0.5;

bool Heavy(const Knob& k) { return k.active && k.cost > 0 && k.cores >= kLightCores; }

// A stage that waits needs as many threads as requests (or calls) in
// flight at the target rate, X * service (Little's law), and some more:
// Little's law counts threads that are never idle, while an ordered stage's
// threads idle whenever the element the consumer needs next is still on its
// way (the e2e bench measured 38 readers at 0.57 of 64, 83 remote calls at
// 0.91 of 128). The threads past its cores wait and hold no core. A stage
// already running more threads than that keeps them: on remote storage the
// measured latency is a mean, and fewer readers than configured would risk
// what it sustains now.
constexpr double kWaitThreadHeadroom = 1.5;

}  // namespace

void AddWaitThreads(std::vector<Knob>& knobs, double target) {
  if (!(target > 0) || !std::isfinite(target)) return;
  for (auto& k : knobs) {
    if (!k.Waits()) continue;
    const double in_flight = target * k.service;
    int want = std::max(k.current, static_cast<int>(std::ceil(kWaitThreadHeadroom * in_flight - 1e-6)));
    if (std::isfinite(k.max_threads)) want = std::min(want, std::max(1, static_cast<int>(k.max_threads)));
    if (want <= k.parallelism) continue;
    k.wait_threads = want - k.parallelism;
    k.why += "; it waits " + FormatSignificant(100 * (k.service - k.cost) / k.service, 2) +
             "% of its service, so " + FormatSignificant(target, 3) + " minibatches/s keep " +
             FormatSignificant(in_flight, 3) + " of its elements in flight (Little's law; 1.5x that for the "
             "moments its threads idle): " + FormatCount(want, "thread", "threads") + ", " +
             std::to_string(k.wait_threads) + " of them waiting outside the core budget";
    k.parallelism = want;
  }
}

// Cores a knob holds against the budget: the threads of a multi-threaded
// stage. A single-threaded stage runs its one thread (or its consumer's)
// like any sequential stage: the LP accounts for its CPU, and reserving a
// whole core for it would take a thread from a stage that needs several
// (on 2 cores, decode needing 1.5 and batch 0.5 would both round to one).
int Holds(const Knob& k) {
  const int p = k.parallelism - k.wait_threads;
  return k.parallelism > 1 && p > 1 ? p : 0;
}

// Gives each knob whole threads: the plan's cores rounded up for heavy
// stages, one thread for light and idle ones; shrink where the threads of
// multi-threaded stages overshoot the budget; then hand spare cores one at a time to the stage that can
// sustain least, so no core is left idle while a stage could use it.
void AssignParallelism(std::vector<Knob>& knobs, int budget) {
  for (auto& k : knobs) {
    if (Heavy(k)) {
      k.parallelism = static_cast<int>(std::clamp(std::ceil(k.cores - 1e-6), 1.0, k.max_threads));
      k.why = "the plan gives it " + FormatCount(k.cores, "core", "cores", 3);
    } else if (k.active && k.cost > 0) {
      k.parallelism = 1;
      k.why = "needs " + FormatCount(k.cores, "core", "cores", 2) + " at the planned rate: one thread";
    } else {
      k.parallelism = 1;
      k.why = k.active ? "no measurable CPU cost: one thread"
                       : "under the cache: works only in the first epoch, one thread";
    }
  }
  auto used = [&] {
    int t = 0;
    for (const auto& k : knobs) t += Holds(k);
    return t;
  };
  while (used() > budget) {
    Knob* victim = nullptr;
    for (auto& k : knobs) {
      if (k.parallelism > 1 && (!victim || k.Capacity(k.parallelism - 1) > victim->Capacity(victim->parallelism - 1))) {
        victim = &k;
      }
    }
    if (victim == nullptr) break;  // every knob at one thread: nothing to give back
    --victim->parallelism;
    if (victim->why.find("trimmed") == std::string::npos) victim->why += "; trimmed to fit the core budget";
  }
  while (true) {
    const int spare = budget - used();
    Knob* slowest = nullptr;
    for (auto& k : knobs) {
      if (!k.active || k.cost <= 0 || k.parallelism + 1 > k.max_threads) continue;
      const int cost = Holds(k) == 0 ? 2 : 1;  // a single-threaded stage starts holding both its threads
      if (cost > spare) continue;
      if (!slowest || k.Capacity(k.parallelism) < slowest->Capacity(slowest->parallelism)) slowest = &k;
    }
    if (slowest == nullptr) break;
    ++slowest->parallelism;
    if (slowest->why.find("spare") == std::string::npos) slowest->why += "; spare cores go to the slowest stage";
  }
}

}  // namespace plumber::rewrite
