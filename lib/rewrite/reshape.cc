// Shape changes applied to a trace, counters and all; see reshape.h.
#include "rewrite/reshape.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "analysis/thread_groups.h"
#include "pipeline/op_table.h"
#include "pipeline/udf_table.h"
#include "rewrite/shape_edits.h"

namespace plumber::rewrite {
namespace {

const char* RuleOf(MovesAboveMap moves) {
  switch (moves) {
    case MovesAboveMap::kPredicate: return "filter above map";
    case MovesAboveMap::kPrefix: return "take above map";
    case MovesAboveMap::kSkipsPrefix: return "skip above map";
    case MovesAboveMap::kPermutes: return "shuffle above map";
    case MovesAboveMap::kNever: break;
  }
  return "move";
}

schema::NodeStats* FindStats(schema::Snapshot* s, const std::string& name) {
  for (auto& n : *s->mutable_nodes()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// A node the change removed (fused into another) leaves the snapshot.
void EraseStats(schema::Snapshot* s, const std::string& name) {
  auto& nodes = *s->mutable_nodes();
  nodes.erase(std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.name() == name; }));
}

double Ratio(int64_t num, int64_t den) { return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 1.0; }

int64_t Scaled(int64_t v, double r) { return static_cast<int64_t>(std::llround(static_cast<double>(v) * r)); }

// The counters that measure a node's own work, scaled by `r`: the node
// does that share of its elements and of what they cost.
void ScaleWork(schema::NodeStats* n, double r) {
  n->set_elements_produced(Scaled(n->elements_produced(), r));
  n->set_elements_consumed(Scaled(n->elements_consumed(), r));
  n->set_bytes_produced(Scaled(n->bytes_produced(), r));
  n->set_bytes_consumed(Scaled(n->bytes_consumed(), r));
  n->set_active_cpu_ns(Scaled(n->active_cpu_ns(), r));
  n->set_wall_ns(Scaled(n->wall_ns(), r));
  n->set_self_wall_ns(Scaled(n->self_wall_ns(), r));
  n->set_wait_ns(Scaled(n->wait_ns(), r));
  n->set_storage_bytes_read(Scaled(n->storage_bytes_read(), r));
  n->set_storage_requests(Scaled(n->storage_requests(), r));
  n->set_storage_request_ns(Scaled(n->storage_request_ns(), r));
  n->set_worker_busy_ns(Scaled(n->worker_busy_ns(), r));
  n->set_handoffs(Scaled(n->handoffs(), r));
  n->set_wakeups(Scaled(n->wakeups(), r));
  n->set_input_lock_wait_ns(Scaled(n->input_lock_wait_ns(), r));
}

// `upper` moved above map `lower` in one snapshot. The map now sees what
// `upper` passes: a filter's or a take's share of its elements (1 for a
// shuffle), at the same cost each. `upper` now sees the map's inputs, as
// many as the map had: its work per element stays (a predicate tests a
// scalar, a shuffle swaps a pointer) unless its row says it follows the
// bytes, and what it holds and hands on is the map's inputs' bytes.
void MoveCounters(schema::Snapshot* s, const std::string& upper, const std::string& lower, bool counts_change,
                  bool cost_follows_bytes) {
  schema::NodeStats* u = FindStats(s, upper);
  schema::NodeStats* l = FindStats(s, lower);
  if (u == nullptr || l == nullptr) return;  // not opened yet at this snapshot
  const schema::NodeStats was_u = *u, was_l = *l;
  const double kept = counts_change ? Ratio(was_u.elements_produced(), was_u.elements_consumed()) : 1.0;
  ScaleWork(l, kept);
  l->clear_cardinality();
  if (was_u.has_cardinality()) l->set_cardinality(was_u.cardinality());
  const double in_bytes = Ratio(was_l.bytes_consumed(), was_l.elements_consumed());
  const double out_bytes = Ratio(was_l.bytes_produced(), was_l.elements_produced());
  ScaleWork(u, Ratio(was_l.elements_consumed(), was_u.elements_consumed()));
  // A predicate whose cost grows with its component's bytes now reads the
  // map's inputs: its work per element scales with their size.
  if (cost_follows_bytes && out_bytes > 0) {
    const double r = in_bytes / out_bytes;
    u->set_active_cpu_ns(Scaled(u->active_cpu_ns(), r));
    u->set_self_wall_ns(Scaled(u->self_wall_ns(), r));
  }
  u->set_elements_produced(was_u.elements_produced());
  u->set_bytes_consumed(was_l.bytes_consumed());
  u->set_bytes_produced(Scaled(was_u.elements_produced(), in_bytes));
  if (out_bytes > 0) u->set_peak_buffered_bytes(Scaled(was_u.peak_buffered_bytes(), in_bytes / out_bytes));
}

// Map `lower` fused into map `upper` in one snapshot: one node with both
// nodes' work, `lower`'s inputs and `upper`'s outputs, less `handoff_ns`
// per element of `lower` (the crossing the fusion removes).
void FuseCounters(schema::Snapshot* s, const std::string& upper, const std::string& lower, double handoff_ns) {
  schema::NodeStats* u = FindStats(s, upper);
  schema::NodeStats* l = FindStats(s, lower);
  if (u == nullptr || l == nullptr) return;
  const auto saved = static_cast<int64_t>(handoff_ns * static_cast<double>(l->elements_produced()));
  u->set_elements_consumed(l->elements_consumed());
  u->set_bytes_consumed(l->bytes_consumed());
  const int64_t cpu = l->active_cpu_ns() + u->active_cpu_ns();
  u->set_active_cpu_ns(std::max(cpu - saved, cpu / 2));
  u->set_self_wall_ns(std::max(l->self_wall_ns() + u->self_wall_ns() - saved, int64_t{0}));
  u->set_wait_ns(l->wait_ns() + u->wait_ns());
  u->set_wall_ns(std::max(l->wall_ns(), u->wall_ns()));
  u->set_storage_bytes_read(l->storage_bytes_read() + u->storage_bytes_read());
  u->set_storage_requests(l->storage_requests() + u->storage_requests());
  u->set_storage_request_ns(l->storage_request_ns() + u->storage_request_ns());
  u->set_wakeups(l->wakeups() + u->wakeups());
  u->set_parallelism(std::max(l->parallelism(), u->parallelism()));
  EraseStats(s, lower);
}

// Filter `filter` fused into map `map` in one snapshot: the map does both
// nodes' work and passes what the filter passed, and its pool no longer
// hands over the elements the filter dropped (`handoff_ns` each).
void FuseFilterCounters(schema::Snapshot* s, const std::string& filter, const std::string& map, double handoff_ns) {
  schema::NodeStats* f = FindStats(s, filter);
  schema::NodeStats* m = FindStats(s, map);
  if (f == nullptr || m == nullptr) return;
  const int64_t dropped = std::max<int64_t>(m->elements_produced() - f->elements_produced(), 0);
  const auto saved = static_cast<int64_t>(handoff_ns * static_cast<double>(dropped));
  m->set_elements_produced(f->elements_produced());
  m->set_bytes_produced(f->bytes_produced());
  const int64_t cpu = m->active_cpu_ns() + f->active_cpu_ns();
  m->set_active_cpu_ns(std::max(cpu - saved, cpu / 2));
  m->set_self_wall_ns(std::max(m->self_wall_ns() + f->self_wall_ns() - saved, int64_t{0}));
  m->clear_cardinality();
  if (f->has_cardinality()) m->set_cardinality(f->cardinality());
  EraseStats(s, filter);
}

// What handing `lower`'s elements to `upper` cost per element, in
// nanoseconds: 0 unless `lower`'s workers hand them across threads.
double HandoffNs(const ProgramGraph& g, const analysis::LoadedTrace& trace, int lower,
                 const analysis::HandoffPrice& price) {
  if (!price.known || !analysis::BuildThreadGroups(g).HandsOff(lower)) return 0;
  const schema::NodeStats* end = nullptr;
  for (const auto& n : trace.window.end.nodes()) {
    if (n.name() == g.name(lower)) end = &n;
  }
  if (end == nullptr || end->elements_produced() <= 0) return 0;
  const double per = static_cast<double>(end->elements_produced());
  const double work_ns = static_cast<double>(std::max(end->self_wall_ns(), end->active_cpu_ns())) / per;
  return 1e9 * price.SecondsPerElement(static_cast<double>(end->bytes_produced()) / per, work_ns);
}

}  // namespace

std::string DescribeChange(const ShapeChange& c) {
  switch (c.kind) {
    case ShapeKind::kFuseMaps: return "fuse '" + c.lower + "' into '" + c.upper + "'";
    case ShapeKind::kFuseFilter: return "fuse '" + c.upper + "' into '" + c.lower + "'";
    case ShapeKind::kMoveAbove: break;
  }
  return "move '" + c.upper + "' above '" + c.lower + "'";
}

std::vector<ShapeChange> LegalShapeChanges(const ProgramGraph& g, const LegalityOptions& options) {
  std::vector<ShapeChange> out;
  for (int i = 0; i < g.size(); ++i) {
    if (g.inputs(i).size() != 1) continue;
    const int lower = g.inputs(i)[0];
    if (const MoveVerdict v = CanMoveAbove(g, i, lower, options); v.legal) {
      out.push_back({ShapeKind::kMoveAbove, g.name(i), g.name(lower), v.reason, RuleOf(g.op(i).moves_above_map)});
    }
    if (const MoveVerdict v = CanFuseMaps(g, i, lower); v.legal) {
      out.push_back({ShapeKind::kFuseMaps, g.name(i), g.name(lower), v.reason, "map fusion"});
    }
    if (const MoveVerdict v = CanFuseFilter(g, i, lower); v.legal) {
      out.push_back({ShapeKind::kFuseFilter, g.name(i), g.name(lower), v.reason, "map and filter fusion"});
    }
  }
  return out;
}

std::vector<ShapeChange> ImportedShapeChanges(const ProgramGraph& g) {
  std::vector<ShapeChange> out;
  for (int i = 0; i < g.size(); ++i) {
    if (g.inputs(i).size() != 1) continue;
    const int lower = g.inputs(i)[0];
    if (const MoveVerdict v = ImportedMoveConditions(g, i, lower); v.legal) {
      ShapeChange c{ShapeKind::kMoveAbove, g.name(i), g.name(lower), v.reason, RuleOf(g.op(i).moves_above_map)};
      c.conditional = true;
      out.push_back(std::move(c));
    }
  }
  return out;
}

void ForgetChanged(const ShapeChange& change, MeasuredCosts* costs) {
  costs->Forget(change.upper);
  costs->Forget(change.lower);
}

Status ApplyShapeChange(schema::Pipeline* program, const ShapeChange& c) {
  switch (c.kind) {
    case ShapeKind::kFuseMaps: return FuseMaps(program, c.upper, c.lower);
    case ShapeKind::kFuseFilter: return FuseFilter(program, c.upper, c.lower);
    case ShapeKind::kMoveAbove: break;
  }
  return MoveAbove(program, c.upper, c.lower);
}

StatusOr<analysis::LoadedTrace> Reshape(const analysis::LoadedTrace& trace, const ShapeChange& change,
                                        const analysis::HandoffPrice& price) {
  const ProgramGraph& g = *trace.graph;
  const int upper = g.Find(change.upper), lower = g.Find(change.lower);
  if (upper < 0 || lower < 0) {
    return Status::InvalidArgument("no node '" + (upper < 0 ? change.upper : change.lower) + "' to reshape");
  }
  schema::Pipeline program = g.program();
  PLUMBER_RETURN_IF_ERROR(ApplyShapeChange(&program, change));
  // How the counters of one snapshot move with the change; applied to the
  // window's end and start alike.
  std::function<void(schema::Snapshot*)> move;
  const std::string &u = change.upper, &l = change.lower;
  switch (change.kind) {
    case ShapeKind::kFuseMaps:
      move = [&, handoff_ns = HandoffNs(g, trace, lower, price)](schema::Snapshot* s) {
        FuseCounters(s, u, l, handoff_ns);
      };
      break;
    case ShapeKind::kFuseFilter:
      move = [&, handoff_ns = HandoffNs(g, trace, lower, price)](schema::Snapshot* s) {
        FuseFilterCounters(s, u, l, handoff_ns);
      };
      break;
    case ShapeKind::kMoveAbove: {
      const bool counts_change = g.op(upper).moves_above_map != MovesAboveMap::kPermutes;
      bool bytes = false;
      if (const NodeUdfSteps* steps = g.op(upper).udf != nullptr ? g.op(upper).udf(g.node(upper)) : nullptr) {
        for (const auto& step : *steps) {
          const UdfOpDef* row = FindUdfOp(step.op());
          bytes = bytes || (row != nullptr && row->cost == CostFollows::kBytes);
        }
      }
      move = [&, counts_change, bytes](schema::Snapshot* s) { MoveCounters(s, u, l, counts_change, bytes); };
      break;
    }
  }
  analysis::LoadedTrace out = trace;
  move(&out.window.end);
  if (out.window.start) move(&*out.window.start);
  auto graph = ProgramGraph::Build(std::move(program), trace.source + " (" + DescribeChange(change) + ")");
  if (!graph.ok()) return graph.status();
  out.graph = std::make_shared<const ProgramGraph>(std::move(*graph));
  return out;
}

}  // namespace plumber::rewrite
