// Picks the window of a trace the model is computed over, one snapshot at a
// time, so a trace of any length is analysed without holding its snapshots:
// only the window's first and last snapshots are kept. While streaming it
// also notes what is wrong with the counters (time not moving forward,
// counters going backwards, nodes the program lacks) so the analysis can
// warn and still say what the data allows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "pipeline/program_graph.h"
#include "trace.pb.h"

namespace plumber::analysis {

// `--window START:END` in seconds since the run began; either end optional.
// `--window SECONDS` (no colon) is for imported dumps instead: the time
// their counters cover (import.h).
struct WindowSpec {
  std::optional<double> start_seconds;
  std::optional<double> end_seconds;
  std::optional<double> span_seconds;
};

// Parses "START:END", "START:" or ":END" (seconds, units allowed: "2s:1m"),
// or a bare "SECONDS" (a span, for imported dumps).
StatusOr<WindowSpec> ParseWindowSpec(std::string_view text);

// The two snapshots that bound the window. `start` is null when the window
// starts at the beginning of the run, where every counter is zero.
struct SelectedWindow {
  std::optional<schema::Snapshot> start;
  schema::Snapshot end;
  int snapshots_seen = 0;
  // Those from the window's first to its last (what its rates rest on).
  int snapshots_in_window = 0;
  // Plain-language notes on the data (each names what it concerns).
  std::vector<std::string> warnings;
  // The trace has one snapshot, so the window starts at the run's start
  // and includes warm-up (the analysis says so, except for an imported
  // dump, whose counters always count from the start).
  bool single_snapshot = false;
  // Nodes whose counters went backwards inside the window: their deltas
  // mean nothing.
  std::vector<std::string> unreliable_nodes;
};

// A node's cumulative counters at the window's two ends; null where the
// node had not been opened yet (every counter zero).
struct NodeWindow {
  const schema::NodeStats* start = nullptr;
  const schema::NodeStats* end = nullptr;

  // end - start of one cumulative counter.
  int64_t Delta(int64_t (schema::NodeStats::*counter)() const) const {
    return (end ? (end->*counter)() : 0) - (start ? (start->*counter)() : 0);
  }
};

// One entry per node of `graph`, in program order (stats of nodes the
// program lacks are left out; the selector warned about them).
std::vector<NodeWindow> ResolveNodeWindows(const SelectedWindow& window, const ProgramGraph& graph);

// The CPU the run had over the window, as deltas of the snapshots' own
// CPU time and the machine's (Snapshot.machine_idle_ns, machine_busy_ns),
// in seconds.
struct CpuWindow {
  double process_cpu_seconds = 0;
  double machine_idle_seconds = 0;
  double machine_busy_seconds = 0;
};

// Nullopt when an end of the window does not record the machine's CPU
// time (an older trace, an imported dump, a run without /proc/stat) or
// when a delta is negative or the machine's time did not move (the
// numbers mean nothing then). A window that starts at the beginning of the
// run counts from zero, like every other counter.
std::optional<CpuWindow> ResolveCpuWindow(const SelectedWindow& window);

// A pooled stage's hand-offs cost CPU that tracing charges to no node: a
// thread parks and is woken (on a virtual machine, in the hypervisor too),
// the consumer takes and frees what another core wrote, outside any node's
// call. The process's CPU over the window counts it. On the cached
// example's rewrite (a batch of 1.6 MB pooled on 2 cores) it was 16% to
// 28% of the process's CPU, and the analysis of that run, counting node
// CPU only, predicted 1.35x to 1.77x what it ran; on the text example's
// (small elements) 1% to 2%. What the nodes were not charged is charged
// to the pooled stages, in proportion to their hand-offs, so that the
// model (and what the optimize loop learns from it) pays for a pool what
// it really cost. Left alone when a node waits: parked waiters' wake-ups
// are in the same remainder and are priced on their own (the rewrite's
// WakeupSeconds). Also left alone without the process's CPU (older
// traces, imported dumps) or with a node whose counters went backwards.
// The remainder holds the consumer's loop and the tracer's monitor as
// well, about 1% of a core in the examples' runs.
// Per node of `stats` (ResolveNodeWindows' order), seconds; all zero when
// left alone. `imported`: the trace came from another tool.
std::vector<double> UnchargedHandoffCpu(const SelectedWindow& window, const std::vector<NodeWindow>& stats,
                                        bool imported);

class WindowSelector {
 public:
  // `warmup_seconds` is skipped unless `spec` gives a start; `node_names`
  // are the program's nodes (stats for others are ignored with a warning).
  WindowSelector(const WindowSpec& spec, double warmup_seconds, std::vector<std::string> node_names);

  // Takes the snapshot's contents (it may be left in any state).
  void Add(schema::Snapshot* snapshot);

  // Fails (InvalidArgument) when no window with elapsed time exists.
  StatusOr<SelectedWindow> Finish();

 public:
  // Cumulative counters checked per node (see window.cc).
  static constexpr int kCounters = 11;

 private:
  struct NodeTrack {
    int64_t last[kCounters] = {};
    bool seen = false;
    bool went_backwards = false;
    bool backwards_in_window = false;
  };
  int64_t NsFor(double seconds) const;
  void Check(const schema::Snapshot& s, bool in_window);

  WindowSpec spec_;
  double warmup_seconds_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::string> names_;
  std::vector<NodeTrack> tracks_;
  // Name of the node at each position of the previous snapshot, so the
  // common case (same order every time) needs no hash lookup.
  std::vector<int> position_cache_;

  std::optional<schema::Snapshot> start_;
  std::optional<schema::Snapshot> end_;
  // Last snapshot before the requested start: used when nothing is at or
  // after it (a trace shorter than its warm-up).
  std::optional<schema::Snapshot> before_start_;
  int seen_ = 0;
  int in_window_ = 0;  // from start_ to end_
  int64_t last_wall_ = -1;
  int time_problems_ = 0;
  std::vector<std::string> unknown_nodes_;
  std::vector<std::string> warnings_;
};

}  // namespace plumber::analysis
