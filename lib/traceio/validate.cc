// Pipeline validation: every rule reports the node and the JSON field path it
// concerns, so a user can find the mistake in the file they edit.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "traceio/op_registry.h"
#include "traceio/pipeline_io.h"

namespace plumber {
namespace {

using schema::Node;
using schema::Pipeline;
using schema::UdfOp;

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == ':';
  });
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
      if (n.op() == "interleave" && !n.interleave().function().empty()) todo.push_back(n.interleave().function());
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
      for (const auto& op : AllOps()) known.push_back(op.name);
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
                             ? std::to_string(def->min_inputs)
                             : std::to_string(def->min_inputs) + " to " + std::to_string(def->max_inputs);
      Add(name, "inputs", Quote(n.op()) + " takes " + want + " input(s), got " + std::to_string(inputs));
    }
    for (int i = 0; i < inputs; ++i) {
      const std::string& in = n.inputs(i);
      if (!index_.count(in)) {
        Add(name, "inputs[" + std::to_string(i) + "]", "input " + Quote(in) + " is not a node of the pipeline");
      } else if (in == name) {
        Add(name, "inputs[" + std::to_string(i) + "]", "the node reads from itself (a cycle)");
      }
    }
    CheckParams(n);
  }

  void Min(const Node& n, const std::string& field, int64_t value, int64_t lo) {
    if (value < lo) Add(n.name(), field, "must be >= " + std::to_string(lo) + ", got " + std::to_string(value));
  }

  // Each unit of parallelism is a thread (and each cycle slot an open
  // input): a typo of 100000 must be refused here, not exhaust the
  // machine's threads mid-run.
  void Threads(const Node& n, const std::string& field, int64_t value) {
    Min(n, field, value, 1);
    if (value > kMaxParallelism) {
      Add(n.name(), field, "must be at most " + std::to_string(kMaxParallelism) + ", got " + std::to_string(value));
    }
  }

  void CheckCompression(const Node& n, const std::string& field, const std::string& c) {
    if (c != "" && c != "GZIP" && c != "ZLIB") {
      Add(n.name(), field, "unknown compression " + Quote(c) + " (expected \"\", \"GZIP\" or \"ZLIB\")");
    }
  }

  void CheckReaderSource(const Node& n, int files) {
    if (files == 0 && n.inputs_size() == 0 && !in_function_.count(n.name())) {
      Add(n.name(), n.op() + ".files",
          "a reader needs files, an input of file names, or to be part of an interleave function");
    }
    if (files > 0 && n.inputs_size() > 0) {
      Add(n.name(), n.op() + ".files", "give either files or an input of file names, not both");
    }
  }

  void CheckParams(const Node& n) {
    const std::string& op = n.op();
    if (op == "range") {
      if (n.range().has_step() && n.range().step() == 0) Add(n.name(), "range.step", "must not be 0");
    } else if (op == "list_files") {
      if (n.list_files().files().empty() && n.list_files().pattern().empty()) {
        Add(n.name(), "list_files.files", "give files or a pattern");
      }
    } else if (op == "tfrecord") {
      CheckCompression(n, "tfrecord.compression", n.tfrecord().compression());
      CheckReaderSource(n, n.tfrecord().files_size());
    } else if (op == "text_line") {
      CheckCompression(n, "text_line.compression", n.text_line().compression());
      CheckReaderSource(n, n.text_line().files_size());
    } else if (op == "map") {
      if (n.map().has_parallelism()) Threads(n, "map.parallelism", n.map().parallelism());
      if (n.map().udf().empty()) Add(n.name(), "map.udf", "a map needs at least one UDF op");
      CheckUdf(n, "map.udf", n.map().udf(), /*is_filter=*/false);
    } else if (op == "filter") {
      if (n.filter().predicate().empty()) Add(n.name(), "filter.predicate", "a filter needs a predicate");
      CheckUdf(n, "filter.predicate", n.filter().predicate(), /*is_filter=*/true);
    } else if (op == "interleave") {
      const auto& p = n.interleave();
      if (p.function().empty()) {
        Add(n.name(), "interleave.function", "an interleave needs the name of its function's root node");
      } else if (!index_.count(p.function())) {
        Add(n.name(), "interleave.function", "function " + Quote(p.function()) + " is not a node of the pipeline");
      }
      if (p.has_cycle_length()) Threads(n, "interleave.cycle_length", p.cycle_length());
      if (p.has_block_length()) Min(n, "interleave.block_length", p.block_length(), 1);
      if (p.has_parallelism()) {
        Threads(n, "interleave.parallelism", p.parallelism());
        const int cycle = p.has_cycle_length() ? p.cycle_length() : 1;
        if (p.parallelism() > cycle && cycle >= 1) {
          Add(n.name(), "interleave.parallelism",
              "must be at most cycle_length (" + std::to_string(cycle) + "), got " + std::to_string(p.parallelism()));
        }
      }
    } else if (op == "shuffle") {
      Min(n, "shuffle.buffer_size", n.shuffle().buffer_size(), 1);
    } else if (op == "repeat") {
      if (n.repeat().has_count()) Min(n, "repeat.count", n.repeat().count(), -1);
    } else if (op == "batch") {
      Min(n, "batch.batch_size", n.batch().batch_size(), 1);
      if (n.batch().has_parallelism()) Threads(n, "batch.parallelism", n.batch().parallelism());
    } else if (op == "padded_batch") {
      Min(n, "padded_batch.batch_size", n.padded_batch().batch_size(), 1);
      for (int i = 0; i < n.padded_batch().padded_shape_size(); ++i) {
        Min(n, "padded_batch.padded_shape[" + std::to_string(i) + "]", n.padded_batch().padded_shape(i), -1);
      }
    } else if (op == "prefetch") {
      Min(n, "prefetch.buffer_size", n.prefetch().buffer_size(), 0);
    } else if (op == "take") {
      Min(n, "take.count", n.take().count(), -1);
    } else if (op == "skip") {
      Min(n, "skip.count", n.skip().count(), -1);
    }
  }

  void CheckUdf(const Node& n, const std::string& field, const google::protobuf::RepeatedPtrField<UdfOp>& udf,
                bool is_filter) {
    for (int i = 0; i < udf.size(); ++i) {
      const UdfOp& step = udf[i];
      const std::string where = field + "[" + std::to_string(i) + "]";
      const UdfOpDef* def = FindUdfOp(step.op());
      if (def == nullptr) {
        std::vector<std::string_view> known;
        for (const auto& u : AllUdfOps()) known.push_back(u.name);
        Add(n.name(), where + ".op", "unknown UDF op " + Quote(step.op()) + " (known: " + JoinNames(known) + ")");
        continue;
      }
      const bool last = i + 1 == udf.size();
      if (def->predicate && !(is_filter && last)) {
        Add(n.name(), where + ".op", Quote(step.op()) + " is a predicate: it may only end a filter's predicate");
      } else if (is_filter && last && !def->predicate) {
        Add(n.name(), where + ".op", "a filter's predicate must end in a predicate op such as 'length_filter'");
      }
      CheckArgs(n, where, *def, step);
    }
  }

  void CheckArgs(const Node& n, const std::string& where, const UdfOpDef& def, const UdfOp& step) {
    // Sorted so the problems come out in a stable order.
    std::map<std::string, const google::protobuf::Value*> given;
    for (const auto& [k, v] : step.args()) given[k] = &v;
    for (const auto& entry : given) {
      const std::string& key = entry.first;
      const google::protobuf::Value* value = entry.second;
      const auto it = std::find_if(def.args.begin(), def.args.end(), [&](const UdfArgDef& a) { return a.name == key; });
      const std::string field = where + ".args." + key;
      if (it == def.args.end()) {
        std::vector<std::string_view> known;
        for (const auto& a : def.args) known.push_back(a.name);
        Add(n.name(), field,
            Quote(def.name) + " takes no argument " + Quote(key) +
                (known.empty() ? std::string(" (it takes none)") : " (it takes: " + JoinNames(known) + ")"));
        continue;
      }
      if (!TypeMatches(it->type, *value)) {
        Add(n.name(), field, "must be " + TypeName(it->type));
        continue;
      }
      if (it->type == ArgType::kNumber) {
        const double v = value->number_value();
        if (!std::isfinite(v) || (key != "value" && v < 0)) {
          Add(n.name(), field, "must be a finite number >= 0");
        } else if ((key == "height" || key == "width" || key == "vocab_size") && v < 1) {
          Add(n.name(), field, "must be >= 1");
        }
      }
      if (def.name == "decompress" && key == "format") {
        const std::string& f = value->string_value();
        if (f != "gzip" && f != "zlib" && f != "zstd") {
          Add(n.name(), field, "unknown format " + Quote(f) + " (expected gzip, zlib or zstd)");
        }
      }
    }
    for (const auto& a : def.args) {
      if (a.required && !given.count(std::string(a.name))) {
        Add(n.name(), where + ".args." + std::string(a.name), Quote(def.name) + " requires this argument");
      }
    }
  }

  static bool TypeMatches(ArgType type, const google::protobuf::Value& v) {
    using K = google::protobuf::Value::KindCase;
    auto all_of_kind = [&](K kind) {
      if (v.kind_case() != K::kListValue) return false;
      for (const auto& e : v.list_value().values()) {
        if (e.kind_case() != kind) return false;
      }
      return true;
    };
    switch (type) {
      case ArgType::kNumber: return v.kind_case() == K::kNumberValue;
      case ArgType::kString: return v.kind_case() == K::kStringValue;
      case ArgType::kBool: return v.kind_case() == K::kBoolValue;
      case ArgType::kStringList: return all_of_kind(K::kStringValue);
      case ArgType::kNumberList: return all_of_kind(K::kNumberValue);
    }
    return false;
  }

  static std::string TypeName(ArgType type) {
    switch (type) {
      case ArgType::kNumber: return "a number";
      case ArgType::kString: return "a string";
      case ArgType::kBool: return "true or false";
      case ArgType::kStringList: return "a list of strings";
      case ArgType::kNumberList: return "a list of numbers";
    }
    return "?";
  }

  // Kahn's algorithm over input and function edges; iterative so deep
  // pipelines cannot overflow the stack.
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
      if (node.op() == "interleave") edge(node.interleave().function());
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
    std::set<std::string> consumed;
    for (const Node& node : p_.nodes()) {
      for (const auto& in : node.inputs()) consumed.insert(in);
      if (node.op() == "interleave") consumed.insert(node.interleave().function());
    }
    std::vector<std::string> sinks;
    for (const Node& node : p_.nodes()) {
      if (!consumed.count(node.name())) sinks.push_back(node.name());
    }
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

std::string Problem::ToString() const {
  std::string out;
  if (!node.empty()) out += "node " + Quote(node) + ": ";
  if (!field.empty()) out += "field " + Quote(field) + ": ";
  return out + message;
}

std::vector<Problem> ValidatePipeline(const Pipeline& pipeline) { return Validator(pipeline).Run(); }

}  // namespace plumber
