// Building the program graph; see program_graph.h.
#include "pipeline/program_graph.h"

#include "base/number_format.h"
#include "pipeline/validate.h"  // ValidatePipeline

namespace plumber {

StatusOr<ProgramGraph> ProgramGraph::Build(schema::Pipeline program, const std::string& where) {
  const auto problems = ValidatePipeline(program);
  if (!problems.empty()) {
    std::string msg = where + ": " + problems.front().ToString();
    if (problems.size() > 1) msg += " (and " + FormatCount(problems.size() - 1, "more problem", "more problems") + ")";
    return Status::InvalidArgument(msg);
  }
  ProgramGraph g;
  g.program_ = std::move(program);
  g.Index();
  return g;
}

int ProgramGraph::Find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? -1 : it->second;
}

void ProgramGraph::Index() {
  const int n = program_.nodes_size();
  for (int i = 0; i < n; ++i) index_.emplace(program_.nodes(i).name(), i);
  ops_.resize(n);
  inputs_.resize(n);
  function_.assign(n, -1);
  children_.resize(n);
  consumers_.resize(n);
  owner_.assign(n, -1);
  depth_.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    const schema::Node& node = program_.nodes(i);
    ops_[i] = FindOp(node.op());
    for (const auto& in : node.inputs()) {
      const int j = index_.at(in);
      inputs_[i].push_back(j);
      consumers_[j].push_back(i);
    }
    if (const std::string* root = NodeFunction(node)) {
      function_[i] = index_.at(*root);
      consumers_[function_[i]].push_back(i);
    }
    children_[i] = inputs_[i];
    if (function_[i] >= 0) children_[i].push_back(function_[i]);
  }
  // Validation leaves exactly one node that nothing consumes (and a
  // declared output, if any, names it).
  for (int i = 0; i < n && output_ < 0; ++i) {
    if (consumers_[i].empty()) output_ = i;
  }

  // Function membership: everything reachable from a function's root
  // through inputs belongs to that interleave; the first interleave in
  // program order that reaches a node keeps it.
  for (int i = 0; i < n; ++i) {
    if (function_[i] < 0) continue;
    std::vector<int> stack = {function_[i]};
    std::vector<bool> seen(n, false);
    while (!stack.empty()) {
      const int j = stack.back();
      stack.pop_back();
      if (seen[j]) continue;
      seen[j] = true;
      if (owner_[j] < 0) owner_[j] = i;
      for (int k : inputs_[j]) stack.push_back(k);
    }
  }

  std::vector<int> queue = {output_};
  depth_[output_] = 0;
  for (size_t q = 0; q < queue.size(); ++q) {
    const int i = queue[q];
    for (int j : children_[i]) {
      if (depth_[j] < 0) {
        depth_[j] = depth_[i] + 1;
        queue.push_back(j);
      }
    }
  }

  // Post-order without recursion, so 100,000-node chains are fine.
  std::vector<char> state(n, 0);
  for (int root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < children_[i].size()) {
        const int j = children_[i][next++];
        if (!state[j]) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
      } else {
        order_.push_back(i);
        stack.pop_back();
      }
    }
  }
}

}  // namespace plumber
