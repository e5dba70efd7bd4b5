// Moving and fusing nodes of a pipeline definition; see shape_edits.h.
#include "rewrite/shape_edits.h"

#include <algorithm>

#include "pipeline/op_table.h"

namespace plumber::rewrite {
namespace {

int IndexOf(const schema::Pipeline& p, const std::string& name) {
  for (int i = 0; i < p.nodes_size(); ++i) {
    if (p.nodes(i).name() == name) return i;
  }
  return -1;
}

// Every reader of `from` (inputs, interleave functions, the declared
// output) reads `to` instead, except `skip` itself.
void Redirect(schema::Pipeline* p, const std::string& from, const std::string& to, const std::string& skip) {
  for (auto& node : *p->mutable_nodes()) {
    if (node.name() == skip) continue;
    for (auto& in : *node.mutable_inputs()) {
      if (in == from) in = to;
    }
    const std::string* function = NodeFunction(node);
    if (function != nullptr && *function == from) {
      FindOp(node.op())->set_function(&node, to);
    }
  }
  if (p->output() == from) p->set_output(to);
}

// The two nodes, `lower` the only input of `upper`.
Status FindPair(const schema::Pipeline& p, const std::string& upper, const std::string& lower, int* u, int* l) {
  *u = IndexOf(p, upper);
  *l = IndexOf(p, lower);
  if (*u < 0 || *l < 0) return Status::InvalidArgument("no node '" + (*u < 0 ? upper : lower) + "'");
  if (p.nodes(*u).inputs_size() != 1 || p.nodes(*u).inputs(0) != lower) {
    return Status::InvalidArgument("'" + lower + "' is not the only input of '" + upper + "'");
  }
  return Status::OK();
}

}  // namespace

Status MoveAbove(schema::Pipeline* p, const std::string& upper, const std::string& lower) {
  int u = 0, l = 0;
  PLUMBER_RETURN_IF_ERROR(FindPair(*p, upper, lower, &u, &l));
  Redirect(p, upper, lower, upper);
  schema::Node& up = *p->mutable_nodes(u);
  schema::Node& low = *p->mutable_nodes(l);
  *up.mutable_inputs() = low.inputs();
  low.clear_inputs();
  low.add_inputs(upper);
  // Program order follows the data: `upper` now comes first.
  if (u > l) std::swap(*p->mutable_nodes(u), *p->mutable_nodes(l));
  return Status::OK();
}

Status FuseMaps(schema::Pipeline* p, const std::string& upper, const std::string& lower) {
  int u = 0, l = 0;
  PLUMBER_RETURN_IF_ERROR(FindPair(*p, upper, lower, &u, &l));
  // A lower map's fused filter would have to run between the two maps'
  // steps, which no map can hold.
  if (!p->nodes(u).has_map() || !p->nodes(l).has_map() || !p->nodes(l).map().keep_if().empty()) {
    return Status::InvalidArgument("only two maps fuse, the lower keeping every element: '" + lower + "' and '" +
                                   upper + "'");
  }
  const schema::MapParams low = p->nodes(l).map();
  schema::Node& up = *p->mutable_nodes(u);
  schema::MapParams fused = low;
  for (const auto& step : up.map().udf()) *fused.add_udf() = step;
  *fused.mutable_keep_if() = up.map().keep_if();
  fused.set_parallelism(std::max(NodeParallelism(p->nodes(l)), NodeParallelism(up)));
  const bool low_free = low.has_deterministic() && !low.deterministic();
  const bool up_free = up.map().has_deterministic() && !up.map().deterministic();
  fused.clear_deterministic();
  if (low_free && up_free) fused.set_deterministic(false);
  *up.mutable_map() = std::move(fused);
  *up.mutable_inputs() = p->nodes(l).inputs();
  p->mutable_nodes()->DeleteSubrange(l, 1);
  return Status::OK();
}

Status FuseFilter(schema::Pipeline* p, const std::string& upper, const std::string& lower) {
  int u = 0, l = 0;
  PLUMBER_RETURN_IF_ERROR(FindPair(*p, upper, lower, &u, &l));
  if (!p->nodes(u).has_filter() || !p->nodes(l).has_map() || !p->nodes(l).map().keep_if().empty()) {
    return Status::InvalidArgument("only a filter fuses into a map that keeps every element: '" + upper + "' and '" +
                                   lower + "'");
  }
  *p->mutable_nodes(l)->mutable_map()->mutable_keep_if() = p->nodes(u).filter().predicate();
  Redirect(p, upper, lower, upper);
  p->mutable_nodes()->DeleteSubrange(u, 1);
  return Status::OK();
}

}  // namespace plumber::rewrite
