// Window selection over a stream of snapshots; see window.h.
#include "analysis/window.h"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "base/number_format.h"
#include "base/units.h"

namespace plumber::analysis {

namespace {

// The cumulative counters that must never decrease (trace_check.cc checks
// the same set for `plumber validate`). Read directly rather than through
// pointers to members: this runs for every node of every snapshot.
void ReadCumulative(const schema::NodeStats& s, int64_t (&out)[WindowSelector::kCounters]) {
  out[0] = s.elements_produced();
  out[1] = s.elements_consumed();
  out[2] = s.bytes_produced();
  out[3] = s.bytes_consumed();
  out[4] = s.active_cpu_ns();
  out[5] = s.wall_ns();
  out[6] = s.storage_bytes_read();
  out[7] = s.files_opened();
  out[8] = s.files_completed();
  out[9] = s.completed_file_bytes();
  out[10] = s.completed_file_records();
}

std::string Seconds(int64_t ns) { return units::FormatSeconds(static_cast<double>(ns) * 1e-9); }

}  // namespace

std::vector<NodeWindow> ResolveNodeWindows(const SelectedWindow& window, const ProgramGraph& graph) {
  std::vector<NodeWindow> out(graph.size());
  for (const auto& s : window.end.nodes()) {
    const int i = graph.Find(s.name());
    if (i >= 0) out[i].end = &s;
  }
  if (window.start) {
    for (const auto& s : window.start->nodes()) {
      const int i = graph.Find(s.name());
      if (i >= 0) out[i].start = &s;
    }
  }
  return out;
}

std::optional<CpuWindow> ResolveCpuWindow(const SelectedWindow& window) {
  const schema::Snapshot& e = window.end;
  const schema::Snapshot* s = window.start ? &*window.start : nullptr;
  if (!e.has_machine_idle_ns() || !e.has_machine_busy_ns()) return std::nullopt;
  if (s && (!s->has_machine_idle_ns() || !s->has_machine_busy_ns())) return std::nullopt;
  const int64_t cpu = e.process_cpu_ns() - (s ? s->process_cpu_ns() : 0);
  const int64_t idle = e.machine_idle_ns() - (s ? s->machine_idle_ns() : 0);
  const int64_t busy = e.machine_busy_ns() - (s ? s->machine_busy_ns() : 0);
  if (cpu < 0 || idle < 0 || busy < 0 || idle + busy <= 0) return std::nullopt;
  return CpuWindow{static_cast<double>(cpu) * 1e-9, static_cast<double>(idle) * 1e-9,
                   static_cast<double>(busy) * 1e-9};
}

// Why and when: window.h.
std::vector<double> UnchargedHandoffCpu(const SelectedWindow& window, const std::vector<NodeWindow>& stats,
                                        bool imported) {
  std::vector<double> out(stats.size(), 0.0);
  const auto cpu = ResolveCpuWindow(window);
  if (!cpu || imported || !window.unreliable_nodes.empty()) return out;
  double charged = 0;
  std::vector<double> handoffs(stats.size(), 0.0);
  double all_handoffs = 0;
  for (size_t i = 0; i < stats.size(); ++i) {
    const NodeWindow& s = stats[i];
    const int64_t node_cpu = s.Delta(&schema::NodeStats::active_cpu_ns);
    const int64_t node_handoffs = s.Delta(&schema::NodeStats::handoffs);
    if (s.Delta(&schema::NodeStats::wait_ns) > 0 || node_cpu < 0 || node_handoffs < 0) return out;
    charged += static_cast<double>(node_cpu) * 1e-9;
    handoffs[i] = static_cast<double>(node_handoffs);
    all_handoffs += handoffs[i];
  }
  const double uncharged = cpu->process_cpu_seconds - charged;
  if (all_handoffs <= 0 || !(uncharged > 0)) return out;
  for (size_t i = 0; i < stats.size(); ++i) out[i] = uncharged * handoffs[i] / all_handoffs;
  return out;
}

StatusOr<WindowSpec> ParseWindowSpec(std::string_view text) {
  const size_t colon = text.find(':');
  WindowSpec spec;
  if (colon == std::string_view::npos) {
    auto span = units::ParseSeconds(text);
    if (!span.ok() || !(*span > 0)) {
      return Status::InvalidArgument("--window '" + std::string(text) +
                                     "': expected START:END in seconds, e.g. 2:10, or, for an imported dump, the "
                                     "positive time its counters cover, e.g. 30s");
    }
    spec.span_seconds = *span;
    return spec;
  }
  const std::string_view a = text.substr(0, colon);
  const std::string_view b = text.substr(colon + 1);
  if (!a.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(double s, units::ParseSeconds(a));
    spec.start_seconds = s;
  }
  if (!b.empty()) {
    PLUMBER_ASSIGN_OR_RETURN(double e, units::ParseSeconds(b));
    spec.end_seconds = e;
  }
  if (spec.start_seconds && spec.end_seconds && *spec.end_seconds <= *spec.start_seconds) {
    return Status::InvalidArgument("--window '" + std::string(text) + "': END must be after START");
  }
  return spec;
}

WindowSelector::WindowSelector(const WindowSpec& spec, double warmup_seconds, std::vector<std::string> node_names)
    : spec_(spec), warmup_seconds_(warmup_seconds), names_(std::move(node_names)), tracks_(names_.size()) {
  for (size_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], static_cast<int>(i));
}

int64_t WindowSelector::NsFor(double seconds) const { return static_cast<int64_t>(std::llround(seconds * 1e9)); }

void WindowSelector::Check(const schema::Snapshot& s, bool in_window) {
  if (position_cache_.size() < static_cast<size_t>(s.nodes_size())) position_cache_.resize(s.nodes_size(), -1);
  for (int j = 0; j < s.nodes_size(); ++j) {
    const schema::NodeStats& stats = s.nodes(j);
    int idx = position_cache_[j];
    if (idx < 0 || names_[idx] != stats.name()) {
      auto it = index_.find(stats.name());
      if (it == index_.end()) {
        if (std::find(unknown_nodes_.begin(), unknown_nodes_.end(), stats.name()) == unknown_nodes_.end()) {
          unknown_nodes_.push_back(stats.name());
        }
        continue;
      }
      idx = it->second;
      position_cache_[j] = idx;
    }
    NodeTrack& t = tracks_[idx];
    int64_t now[kCounters];
    ReadCumulative(stats, now);
    for (int c = 0; c < kCounters; ++c) {
      if (t.seen && now[c] < t.last[c]) {
        t.went_backwards = true;
        if (in_window) t.backwards_in_window = true;
      }
      t.last[c] = now[c];
    }
    t.seen = true;
  }
}

void WindowSelector::Add(schema::Snapshot* snapshot) {
  ++seen_;
  const int64_t wall = snapshot->wall_ns();
  if (wall <= last_wall_ || wall < 0) {
    // A snapshot that does not move time forward cannot bound a window.
    ++time_problems_;
    return;
  }
  last_wall_ = wall;
  const bool explicit_start = spec_.start_seconds.has_value();
  const int64_t start_ns = NsFor(explicit_start ? *spec_.start_seconds : warmup_seconds_);
  const bool after_end = spec_.end_seconds && wall > NsFor(*spec_.end_seconds);
  // Only a decrease between the window's first and last snapshot corrupts
  // its deltas.
  Check(*snapshot, start_ && !after_end);
  if (after_end) return;
  if (wall < start_ns) {
    if (!before_start_) before_start_.emplace();
    before_start_->Swap(snapshot);
    return;
  }
  ++in_window_;
  if (!start_) start_ = *snapshot;
  if (!end_) end_.emplace();
  end_->Swap(snapshot);
}

StatusOr<SelectedWindow> WindowSelector::Finish() {
  SelectedWindow w;
  w.snapshots_seen = seen_;
  if (time_problems_ > 0) {
    warnings_.push_back(FormatCount(time_problems_, "snapshot", "snapshots") + (time_problems_ == 1 ? " does" : " do") +
                        " not move time forward and " + (time_problems_ == 1 ? "was" : "were") + " skipped");
  }
  for (const auto& name : unknown_nodes_) {
    warnings_.push_back("counters for node '" + name + "', which the program does not have, were ignored");
  }
  const bool explicit_start = spec_.start_seconds.has_value();
  if (!end_) {
    if (!before_start_) {
      return Status::InvalidArgument(seen_ == 0 ? "the trace has no snapshots: nothing ran long enough to measure"
                                                : "no snapshot lies in the requested window");
    }
    if (explicit_start) {
      return Status::InvalidArgument("no snapshot at or after " + units::FormatSeconds(*spec_.start_seconds) +
                                     " (the last is at " + Seconds(before_start_->wall_ns()) + ")");
    }
    // The run was shorter than its warm-up: better a window that includes
    // warm-up than no answer.
    warnings_.push_back("the trace ends (" + Seconds(before_start_->wall_ns()) + ") before its warm-up of " +
                        units::FormatSeconds(warmup_seconds_) +
                        " is over; the window starts at the beginning of the run and includes warm-up");
    end_ = std::move(before_start_);
    before_start_.reset();
    in_window_ = 1;
  } else if (start_ && start_->wall_ns() == end_->wall_ns()) {
    if (explicit_start) {
      return Status::InvalidArgument("the requested window holds a single snapshot (at " + Seconds(end_->wall_ns()) +
                                     "); it needs two to measure rates");
    }
    if (before_start_) {
      warnings_.push_back("only one snapshot after the warm-up; the window starts at " +
                          Seconds(before_start_->wall_ns()) + ", inside the warm-up");
      start_ = std::move(before_start_);
      ++in_window_;
    } else {
      w.single_snapshot = true;
      start_.reset();
    }
  }
  if (start_ && start_->wall_ns() >= end_->wall_ns()) start_.reset();
  if (end_->wall_ns() <= 0) {
    return Status::InvalidArgument("zero elapsed time: the only snapshot is at 0 ns");
  }
  for (size_t i = 0; i < tracks_.size(); ++i) {
    if (tracks_[i].backwards_in_window) {
      w.unreliable_nodes.push_back(names_[i]);
      warnings_.push_back("cumulative counters of node '" + names_[i] +
                          "' go backwards inside the window; its rates are left out");
    } else if (tracks_[i].went_backwards) {
      warnings_.push_back("cumulative counters of node '" + names_[i] +
                          "' go backwards outside the window; the window is unaffected");
    }
  }
  for (const auto& warning : warnings_) spdlog::debug("window: {}", warning);
  w.snapshots_in_window = in_window_;
  w.start = std::move(start_);
  w.end = std::move(*end_);
  w.warnings = std::move(warnings_);
  return w;
}

}  // namespace plumber::analysis
