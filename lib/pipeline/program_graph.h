// ProgramGraph: a validated pipeline definition with its edges resolved, the
// one way plumber walks a program. It answers each node's inputs, the
// interleave function edge, consumers, the output, a topological order,
// which interleave a function node belongs to, and each node's distance
// from the output. It can only be built from a program that passes every
// rule of ValidatePipeline, so no command walks a cyclic or dangling one.
//
// Nodes are addressed by their index in the program (its `nodes` order).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "pipeline.pb.h"
#include "pipeline/op_table.h"

namespace plumber {

class ProgramGraph {
 public:
  // Validates and indexes `program`. Invalid programs fail with
  // InvalidArgument "<where>: <first problem> (and N more problem(s))",
  // `where` naming the file (and, for a trace, that it is its program).
  static StatusOr<ProgramGraph> Build(schema::Pipeline program, const std::string& where);

  const schema::Pipeline& program() const { return program_; }
  int size() const { return static_cast<int>(inputs_.size()); }
  const schema::Node& node(int i) const { return program_.nodes(i); }
  const std::string& name(int i) const { return program_.nodes(i).name(); }
  // The node's row; never null in a valid program.
  const OpDef& op(int i) const { return *ops_[i]; }
  // Index of the node named `name`, or -1.
  int Find(std::string_view name) const;

  const std::vector<int>& inputs(int i) const { return inputs_[i]; }
  // Root of the node's function, or -1 when it has none.
  int function(int i) const { return function_[i]; }
  // Inputs, then the function root: what the node's output depends on.
  const std::vector<int>& children(int i) const { return children_[i]; }
  // Nodes that read this one as an input or as their function, in program
  // order.
  const std::vector<int>& consumers(int i) const { return consumers_[i]; }
  int output() const { return output_; }
  // Every node after its children: a post-order from the nodes in program
  // order, so the same program always gives the same order.
  const std::vector<int>& topological_order() const { return order_; }
  // The interleave whose function the node is part of (reached from the
  // function's root through inputs), or -1 outside any function.
  int enclosing_interleave(int i) const { return owner_[i]; }
  // Hops from the output along children (breadth first).
  int depth(int i) const { return depth_[i]; }

 private:
  ProgramGraph() = default;
  void Index();

  schema::Pipeline program_;
  std::vector<const OpDef*> ops_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::vector<int>> inputs_;
  std::vector<int> function_;
  std::vector<std::vector<int>> children_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> order_;
  std::vector<int> owner_;
  std::vector<int> depth_;
  int output_ = -1;
};

}  // namespace plumber
