// Pipeline validation; see validate.h. Iterative throughout, so a pipeline
// of 100,000 nodes cannot overflow the stack.
#include "pipeline/validate.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "base/number_format.h"
#include "pipeline/op_table.h"
#include "pipeline/param_check.h"

namespace plumber {
namespace {

using schema::Node;
using schema::Pipeline;

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == ':';
  });
}

// Names of the nodes no node reads as an input or a function, in program
// order: the output of a valid pipeline is the only one.
std::vector<std::string> Sinks(const Pipeline& p) {
  std::set<std::string> consumed;
  for (const Node& node : p.nodes()) {
    for (const auto& in : node.inputs()) consumed.insert(in);
    if (const std::string* root = NodeFunction(node)) consumed.insert(*root);
  }
  std::vector<std::string> sinks;
  for (const Node& node : p.nodes()) {
    if (!consumed.count(node.name())) sinks.push_back(node.name());
  }
  return sinks;
}

class Validator {
 public:
  explicit Validator(const Pipeline& p) : p_(p) {}

  std::vector<Problem> Run() {
    IndexNames();
    if (p_.nodes().empty()) Add("", "nodes", "the pipeline has no nodes");
    MarkFunctionBodies();
    for (const Node& n : p_.nodes()) CheckNode(n);
    if (problems_.empty()) CheckAcyclic();
    if (problems_.empty()) CheckSingleOutput();
    return std::move(problems_);
  }

 private:
  void Add(const std::string& node, std::string field, std::string message) {
    problems_.push_back({node, std::move(field), std::move(message)});
  }

  void IndexNames() {
    for (int i = 0; i < p_.nodes_size(); ++i) {
      const Node& n = p_.nodes(i);
      if (!ValidName(n.name())) {
        Add(n.name(), "name",
            "node " + std::to_string(i) + " has " + (n.name().empty() ? "no name" : "an invalid name " + Quote(n.name())) +
                " (use letters, digits and _ . - / :)");
        continue;
      }
      if (!index_.emplace(n.name(), i).second) Add(n.name(), "name", "the name is used by two nodes");
    }
  }

  // Readers inside an interleave function may take their file from the
  // interleave instead of params or inputs.
  void MarkFunctionBodies() {
    std::deque<std::string> todo;
    for (const Node& n : p_.nodes()) {
      if (const std::string* root = NodeFunction(n)) todo.push_back(*root);
    }
    while (!todo.empty()) {
      std::string name = todo.front();
      todo.pop_front();
      auto it = index_.find(name);
      if (it == index_.end() || !in_function_.insert(name).second) continue;
      for (const auto& in : p_.nodes(it->second).inputs()) todo.push_back(in);
    }
  }

  void CheckNode(const Node& n) {
    const std::string& name = n.name();
    const OpDef* def = FindOp(n.op());
    if (def == nullptr) {
      std::vector<std::string_view> known;
      // The ops a pipeline may be written with (opaque only comes from an import).
      for (const auto& op : AllOps()) {
        if (!op.imported_only) known.push_back(op.name);
      }
      Add(name, "op",
          (n.op().empty() ? std::string("no op given") : "unknown op " + Quote(n.op())) + " (known: " +
              JoinNames(known) + ")");
      return;
    }
    if (n.params_case() != Node::PARAMS_NOT_SET && n.params_case() != def->params_case) {
      const auto* field = Node::descriptor()->FindFieldByNumber(static_cast<int>(n.params_case()));
      Add(name, field ? field->name() : "params",
          "parameters for " + Quote(field ? field->name() : "?") + " given to a node whose op is " + Quote(n.op()));
      return;  // its own parameters are absent; checking them would only add noise
    }
    const int inputs = n.inputs_size();
    if (inputs < def->min_inputs || inputs > def->max_inputs) {
      std::string want = def->min_inputs == def->max_inputs
                             ? FormatCount(def->min_inputs, "input", "inputs")
                             : std::to_string(def->min_inputs) + " to " + FormatCount(def->max_inputs, "input", "inputs");
      Add(name, "inputs", Quote(n.op()) + " takes " + want + ", got " + std::to_string(inputs));
    }
    for (int i = 0; i < inputs; ++i) {
      const std::string& in = n.inputs(i);
      if (!index_.count(in)) {
        Add(name, "inputs[" + std::to_string(i) + "]", "input " + Quote(in) + " is not a node of the pipeline");
      } else if (in == name) {
        Add(name, "inputs[" + std::to_string(i) + "]", "the node reads from itself (a cycle)");
      }
    }
    if (def->check != nullptr) {
      ParamChecker checker(n, in_function_.count(name) > 0,
                           [this](const std::string& other) { return index_.count(other) > 0; }, &problems_);
      checker.set_imported(!p_.imported_from().empty());
      def->check(n, checker);
    }
  }

  // Kahn's algorithm over input and function edges.
  void CheckAcyclic() {
    const int n = p_.nodes_size();
    std::vector<std::vector<int>> users(n);
    std::vector<int> pending(n, 0);
    for (int i = 0; i < n; ++i) {
      const Node& node = p_.nodes(i);
      auto edge = [&](const std::string& dep) {
        users[index_.at(dep)].push_back(i);
        ++pending[i];
      };
      for (const auto& in : node.inputs()) edge(in);
      if (const std::string* root = NodeFunction(node)) edge(*root);
    }
    std::vector<int> ready;
    for (int i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push_back(i);
    }
    int done = 0;
    while (!ready.empty()) {
      int i = ready.back();
      ready.pop_back();
      ++done;
      for (int u : users[i]) {
        if (--pending[u] == 0) ready.push_back(u);
      }
    }
    if (done == n) return;
    std::vector<std::string> cyclic;
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) cyclic.push_back(p_.nodes(i).name());
    }
    std::string list;
    for (size_t i = 0; i < cyclic.size(); ++i) list += (i ? ", " : "") + Quote(cyclic[i]);
    Add(cyclic.front(), "inputs", "the pipeline has a cycle through " + list);
  }

  void CheckSingleOutput() {
    const std::vector<std::string> sinks = Sinks(p_);
    if (sinks.size() > 1) {
      std::string list;
      for (size_t i = 0; i < sinks.size(); ++i) list += (i ? ", " : "") + Quote(sinks[i]);
      Add(sinks[1], "inputs", "the pipeline has " + std::to_string(sinks.size()) + " output nodes (" + list +
                                  "): every node but one must feed another");
      return;
    }
    if (!p_.output().empty() && sinks.size() == 1 && sinks[0] != p_.output()) {
      Add("", "output",
          "output is " + Quote(p_.output()) + " but the node that nothing consumes is " + Quote(sinks[0]));
    }
  }

  const Pipeline& p_;
  std::unordered_map<std::string, int> index_;
  std::set<std::string> in_function_;
  std::vector<Problem> problems_;
};

}  // namespace

std::vector<Problem> ValidatePipeline(const Pipeline& pipeline) { return Validator(pipeline).Run(); }

std::string OutputNodeName(const Pipeline& pipeline) {
  if (!pipeline.output().empty()) return pipeline.output();
  const std::vector<std::string> sinks = Sinks(pipeline);
  return sinks.empty() ? "" : sinks.front();
}

}  // namespace plumber
