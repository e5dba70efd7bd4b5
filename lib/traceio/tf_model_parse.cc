// Parsing and checking one tf.data model dump; see tf_model_parse.h. The two
// forms share field numbers with different types, so a dump is parsed as
// each form and kept as the one it fits; a field that arrives with the wrong
// wire type for its number (the protobuf parser then keeps it as unknown)
// means the bytes are not that form, which is what keeps plumber's own
// binary pipelines and most other protobufs from being taken for a model.
#include "traceio/tf_model_parse.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include <cctype>
#include <cmath>
#include <set>

#include "tf_model.pb.h"
#include "traceio/trace_io.h"

namespace plumber::tfmodel {
namespace {

namespace pb = ::google::protobuf;
using MapModel = ::plumber::tfmodel::ModelProto;
using NestedModel = ::plumber::tfmodel::NestedModelProto;

// Highest field number each message of ours knows. A field at or below it
// that the parser left unknown came with another wire type than ours.
constexpr int kTopFields = 7;  // either form: 1..7 (nested has 1..4, and 5..7 mean the map form)
constexpr int kNodeFields = 17;
constexpr int kEntryFields = 2;

bool HasMismatchedField(const pb::Message& m, int known) {
  const pb::UnknownFieldSet& u = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < u.field_count(); ++i) {
    if (u.field(i).number() >= 1 && u.field(i).number() <= known) return true;
  }
  return false;
}

// Text when no byte is a control character other than tab and line ends:
// binary dumps always hold some (every node starts with tag 0x08 or 0x12).
bool IsText(std::string_view bytes) {
  if (bytes.empty()) return false;
  for (unsigned char c : bytes) {
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
  }
  return true;
}

// The first field name of a text dump, past blank lines and # comments.
std::string FirstToken(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else {
      break;
    }
  }
  size_t j = i;
  while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
  return std::string(text.substr(i, j - i));
}

bool IsTopLevelName(const std::string& name) {
  static const std::set<std::string> kNames = {"nodes",          "output",     "id_counter",
                                               "optimization_params", "gap_times", "dataset_name",
                                               "collect_resource_usage"};
  return kNames.count(name) > 0;
}

// Keeps the text parser's first error (with its place) instead of logging.
class FirstError : public pb::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (message_.empty()) message_ = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, int, const std::string&) override {}
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

bool ParseText(std::string_view text, pb::Message* out, std::string* error) {
  FirstError errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  const bool ok = parser.ParseFromString(std::string(text), out);
  if (!ok) *error = errors.message().empty() ? "not a text ModelProto" : errors.message();
  return ok;
}

// Binary map form with nothing of another form in it.
bool MapFits(const MapModel& m) {
  if (m.nodes_size() == 0 || HasMismatchedField(m, kTopFields)) return false;
  for (const auto& entry : m.nodes()) {
    if (HasMismatchedField(entry, kEntryFields) || !entry.has_value()) return false;
    if (HasMismatchedField(entry.value(), kNodeFields)) return false;
  }
  return true;
}

bool NestedFits(const NestedModel& m) {
  if (!m.has_output() || HasMismatchedField(m, kTopFields)) return false;
  std::vector<const NestedModel::Node*> todo = {&m.output()};
  while (!todo.empty()) {
    const NestedModel::Node* n = todo.back();
    todo.pop_back();
    if (HasMismatchedField(*n, kNodeFields)) return false;
    for (const auto& in : n->inputs()) todo.push_back(&in);
  }
  return true;
}

// Detection is stricter than a parse: every node named and, in the map
// form, every entry's key its node's id. Parse() reports those precisely
// for files a user says are dumps; detection just declines them.
bool MapNamed(const MapModel& m) {
  for (const auto& entry : m.nodes()) {
    if (entry.value().name().empty() || entry.key() != entry.value().id()) return false;
  }
  return true;
}

bool NestedNamed(const NestedModel& m) {
  std::vector<const NestedModel::Node*> todo = {&m.output()};
  while (!todo.empty()) {
    const NestedModel::Node* n = todo.back();
    todo.pop_back();
    if (n->name().empty()) return false;
    for (const auto& in : n->inputs()) todo.push_back(&in);
  }
  return true;
}

// ---- checks with places ------------------------------------------------------------

class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  Status Error(const std::string& place, const std::string& what) const {
    return Status::InvalidArgument(path_ + ": " + place + ": " + what);
  }
  static std::string At(int64_t id, const std::string& type) {
    return "node id " + std::to_string(id) + (type.empty() ? "" : " (" + type + ")");
  }

  Status Count(const std::string& place, const char* field, int64_t v) const {
    if (v < 0 || v > kMaxExact) {
      return Error(place, std::string("field '") + field + "' is " + std::to_string(v) +
                              ", out of range (0 to 2^53)");
    }
    return Status::OK();
  }
  // Times may pass 2^53 ns (104 days summed over a pool's threads) but not
  // 2^60 (36 years), which keeps every sum the import makes inside int64.
  Status Time(const std::string& place, const char* field, int64_t v) const {
    if (v < 0) return Error(place, std::string("field '") + field + "' is a negative time (" + std::to_string(v) + " ns)");
    if (v > kMaxTimeNs) {
      return Error(place, std::string("field '") + field + "' is " + std::to_string(v) + " ns, out of range (0 to 2^60)");
    }
    return Status::OK();
  }

 private:
  const std::string& path_;
};

// One node's own fields, whichever form it came from.
template <typename ProtoNode>
StatusOr<Node> ReadNode(const ProtoNode& p, const Checker& c) {
  Node n;
  n.id = p.id();
  n.type = p.name();
  const std::string at = Checker::At(p.id(), n.type);
  if (p.id() < 0 || p.id() > kMaxExact) return c.Error(at, "the id is out of range (0 to 2^53)");
  if (n.type.empty()) return c.Error(at, "field 'name' is empty (the iterator's type, e.g. \"ParallelMapV2\")");
  if (n.type.size() > 200) return c.Error(at, "field 'name' is longer than 200 bytes");
  // TensorFlow's types are identifiers; anything else would only carry
  // bytes a report or a JSON trace cannot hold.
  for (unsigned char ch : n.type) {
    if (ch < 0x20 || ch >= 0x7f) return c.Error(Checker::At(p.id(), ""), "field 'name' is not printable ASCII");
  }
  PLUMBER_RETURN_IF_ERROR(c.Count(at, "buffered_bytes", p.buffered_bytes()));
  PLUMBER_RETURN_IF_ERROR(c.Count(at, "buffered_elements", p.buffered_elements()));
  PLUMBER_RETURN_IF_ERROR(c.Count(at, "bytes_consumed", p.bytes_consumed()));
  PLUMBER_RETURN_IF_ERROR(c.Count(at, "bytes_produced", p.bytes_produced()));
  PLUMBER_RETURN_IF_ERROR(c.Count(at, "num_elements", p.num_elements()));
  PLUMBER_RETURN_IF_ERROR(c.Time(at, "processing_time", p.processing_time()));
  n.buffered_bytes = p.buffered_bytes();
  n.buffered_elements = p.buffered_elements();
  n.bytes_consumed = p.bytes_consumed();
  n.bytes_produced = p.bytes_produced();
  n.num_elements = p.num_elements();
  n.processing_time_ns = p.processing_time();
  const int cls = static_cast<int>(p.node_class());
  if (cls < NodeClass_MIN || cls > NodeClass_MAX) {
    return c.Error(at, "field 'node_class' is " + std::to_string(cls) + ", not a node class (0 to " +
                           std::to_string(NodeClass_MAX) + ")");
  }
  n.node_class = cls;
  if (!std::isfinite(p.ratio()) || p.ratio() < 0 || p.ratio() > 1e9) {
    return c.Error(at, "field 'ratio' is " + std::to_string(p.ratio()) + ", out of range (0 to 1e9)");
  }
  n.ratio = p.ratio();
  for (int i = 0; i < p.parameters_size(); ++i) {
    const Parameter& param = p.parameters(i);
    if (!std::isfinite(param.state_value())) {
      return c.Error(at, "parameters[" + std::to_string(i) + "] ('" + param.name() + "'): state_value is not finite");
    }
    if (!param.name().empty()) n.parameters[param.name()] = param.state_value();
  }
  return n;
}

// A named node takes at least 11 bytes in binary (entry, key, id, a
// one-letter name) and more in text: a file claiming more nodes than an
// eighth of its size is crafted.
Status CheckNodeCount(size_t n, size_t bytes, const Checker& c) {
  if (n > kMaxNodes || n > bytes / 8 + 1) {
    return c.Error("nodes", std::to_string(n) + " nodes is too many for a file of " + std::to_string(bytes) + " bytes");
  }
  return Status::OK();
}

// The map form, entry by entry.
StatusOr<Model> FromMap(const MapModel& m, size_t bytes, const Checker& c) {
  PLUMBER_RETURN_IF_ERROR(CheckNodeCount(static_cast<size_t>(m.nodes_size()), bytes, c));
  Model out;
  out.form = Form::kMap;
  for (int i = 0; i < m.nodes_size(); ++i) {
    const auto& entry = m.nodes(i);
    const std::string place = "nodes[" + std::to_string(i) + "]";
    if (!entry.has_value()) return c.Error(place + " (key " + std::to_string(entry.key()) + ")", "the entry has no node");
    if (entry.key() != entry.value().id()) {
      return c.Error(place, "the entry's key " + std::to_string(entry.key()) + " differs from its node's id " +
                                std::to_string(entry.value().id()));
    }
    PLUMBER_ASSIGN_OR_RETURN(Node n, ReadNode(entry.value(), c));
    for (int64_t in : entry.value().inputs()) n.inputs.push_back(in);
    const int64_t id = n.id;
    if (!out.nodes.emplace(id, std::move(n)).second) {
      return c.Error(Checker::At(id, entry.value().name()), "the id appears twice");
    }
  }
  out.output = m.output();
  if (m.has_optimization_params()) {
    const auto& o = m.optimization_params();
    out.has_optimization_params = true;
    out.algorithm = static_cast<int>(o.algorithm());
    if (out.algorithm < ModelProto::AutotuneAlgorithm_MIN || out.algorithm > ModelProto::AutotuneAlgorithm_MAX) {
      return c.Error("optimization_params", "field 'algorithm' is " + std::to_string(out.algorithm) +
                                                ", not an autotuning algorithm of any TF version (0 to 4)");
    }
    out.cpu_budget = o.cpu_budget();
    out.ram_budget = o.ram_budget();
  }
  for (int i = 0; i < m.gap_times_size(); ++i) {
    if (m.gap_times(i) > static_cast<uint64_t>(kMaxExact)) {
      return c.Error("gap_times[" + std::to_string(i) + "]", "out of range (0 to 2^53 microseconds)");
    }
    out.gap_times_us.push_back(m.gap_times(i));
  }
  out.dataset_name = m.dataset_name();
  return out;
}

// The nested form, flattened without recursion.
StatusOr<Model> FromNested(const NestedModel& m, size_t bytes, const Checker& c) {
  Model out;
  out.form = Form::kNested;
  if (!m.has_output()) return c.Error("output", "the model has no output node");
  out.output = m.output().id();
  std::vector<const NestedModel::Node*> todo = {&m.output()};
  while (!todo.empty()) {
    const NestedModel::Node* p = todo.back();
    todo.pop_back();
    PLUMBER_ASSIGN_OR_RETURN(Node n, ReadNode(*p, c));
    for (const auto& in : p->inputs()) {
      n.inputs.push_back(in.id());
      todo.push_back(&in);
    }
    const int64_t id = n.id;
    if (!out.nodes.emplace(id, std::move(n)).second) return c.Error(Checker::At(id, p->name()), "the id appears twice");
    PLUMBER_RETURN_IF_ERROR(CheckNodeCount(out.nodes.size(), bytes, c));
  }
  if (m.has_optimization_params()) {
    const auto& o = m.optimization_params();
    out.has_optimization_params = true;
    out.algorithm = static_cast<int>(o.algorithm());
    if (out.algorithm < NestedModelProto::AutotuneAlgorithm_MIN ||
        out.algorithm > NestedModelProto::AutotuneAlgorithm_MAX) {
      return c.Error("optimization_params", "field 'algorithm' is " + std::to_string(out.algorithm) +
                                                ", not an autotuning algorithm of TF 2.5-2.6 (0 or 1)");
    }
    out.cpu_budget = o.cpu_budget();
    out.ram_budget = o.ram_budget();
  }
  return out;
}

// The nodes form one tree under the output: every input a known id, each
// node the input of at most one other, no cycle, nothing left over.
Status CheckTree(const Model& m, size_t bytes, const Checker& c) {
  const size_t n = m.nodes.size();
  if (n == 0) return c.Error("nodes", "the model has no nodes");
  PLUMBER_RETURN_IF_ERROR(CheckNodeCount(n, bytes, c));
  if (m.has_optimization_params) {
    if (m.cpu_budget < 0 || m.cpu_budget > 1'000'000) {
      return c.Error("optimization_params", "field 'cpu_budget' is " + std::to_string(m.cpu_budget) +
                                                ", out of range (0 to 1000000 threads)");
    }
    PLUMBER_RETURN_IF_ERROR(c.Count("optimization_params", "ram_budget", m.ram_budget));
  }
  if (!m.nodes.count(m.output)) {
    return c.Error("output", "the output node's id " + std::to_string(m.output) + " is not a node of the model");
  }
  std::map<int64_t, int64_t> parent;
  for (const auto& [id, node] : m.nodes) {
    if (node.inputs.size() > n) return c.Error(Checker::At(id, node.type), "more inputs than the model has nodes");
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int64_t in = node.inputs[k];
      const std::string place = Checker::At(id, node.type) + ": field 'inputs[" + std::to_string(k) + "]'";
      if (!m.nodes.count(in)) return c.Error(place, "names id " + std::to_string(in) + ", which is not a node");
      if (in == id) return c.Error(place, "the node is its own input (a cycle)");
      if (in == m.output) return c.Error(place, "names the output node (id " + std::to_string(in) + "): a cycle");
      auto [it, fresh] = parent.emplace(in, id);
      if (!fresh) {
        return c.Error(place, "node id " + std::to_string(in) + " is already an input of node id " +
                                  std::to_string(it->second) + " (tf.data's model is a tree)");
      }
    }
  }
  // From the output down; with one parent each, what is not reached hangs
  // off a cycle or off another root.
  std::set<int64_t> reached = {m.output};
  std::vector<int64_t> todo = {m.output};
  while (!todo.empty()) {
    const int64_t id = todo.back();
    todo.pop_back();
    for (int64_t in : m.nodes.at(id).inputs) {
      if (reached.insert(in).second) todo.push_back(in);
    }
  }
  for (const auto& [id, node] : m.nodes) {
    if (reached.count(id)) continue;
    std::set<int64_t> seen;
    int64_t at = id;
    while (parent.count(at) && seen.insert(at).second) at = parent.at(at);
    if (parent.count(at)) {
      return c.Error(Checker::At(at, m.nodes.at(at).type), "the inputs form a cycle (not reachable from the output)");
    }
    return c.Error(Checker::At(id, node.type), "not reachable from the output node (id " + std::to_string(m.output) +
                                                  "): the model has a second root, id " + std::to_string(at));
  }
  return Status::OK();
}

// Where the value of the first field `name` of a text dump starts (past
// the name, a ':' and blanks), or npos. Comments and quoted strings are
// skipped. Scanned by hand: a regular expression over a large file can
// exhaust the stack.
size_t FieldValue(std::string_view text, std::string_view name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
    } else if (word(c)) {
      size_t j = i;
      while (j < text.size() && word(text[j])) ++j;
      if (text.substr(i, j - i) == name) {
        while (j < text.size() && blank(text[j])) ++j;
        if (j < text.size() && (text[j] == ':' || text[j] == '{')) {
          if (text[j] == ':') ++j;
          while (j < text.size() && blank(text[j])) ++j;
          return j;
        }
      }
      i = j;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

// The algorithm as a text dump names it (TensorFlow writes names; a
// number written by hand is as ambiguous as in binary, so it gives "").
std::string NamedAlgorithm(std::string_view text) {
  size_t i = FieldValue(text, "algorithm");
  if (i == std::string_view::npos || i >= text.size() || !std::isalpha(static_cast<unsigned char>(text[i]))) return "";
  size_t j = i;
  while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
  return std::string(text.substr(i, j - i));
}

// Only the nested form writes `output` as a message.
bool NestedLike(std::string_view text) {
  const size_t i = FieldValue(text, "output");
  return i != std::string_view::npos && i < text.size() && text[i] == '{';
}

}  // namespace

bool Detect(std::string_view bytes) {
  if (LooksLikeBinaryTrace(bytes) && bytes.size() >= 8) return false;
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return false;  // protobuf's limit
  if (IsText(bytes)) return IsTopLevelName(FirstToken(bytes));
  MapModel map;
  if (map.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && MapFits(map)) return MapNamed(map);
  NestedModel nested;
  if (nested.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && NestedFits(nested)) {
    return NestedNamed(nested);
  }
  return false;
}

StatusOr<Model> Parse(std::string_view bytes, const std::string& path) {
  Checker c(path);
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return c.Error("file", "larger than 2 GiB");
  StatusOr<Model> model = Status::InvalidArgument("");
  if (IsText(bytes)) {
    MapModel map;
    NestedModel nested;
    std::string map_error, nested_error;
    if (ParseText(bytes, &map, &map_error)) {
      model = FromMap(map, bytes.size(), c);
    } else if (ParseText(bytes, &nested, &nested_error)) {
      model = FromNested(nested, bytes.size(), c);
    } else {
      // Report the error of the form the text looks like.
      const bool nested_like = NestedLike(bytes);
      return c.Error("text format (" + std::string(nested_like ? "nested form" : "map form") + ")",
                     nested_like ? nested_error : map_error);
    }
    if (model.ok()) {
      model->text = true;
      model->algorithm_name = NamedAlgorithm(bytes);
    }
  } else {
    MapModel map;
    NestedModel nested;
    if (map.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && MapFits(map)) {
      model = FromMap(map, bytes.size(), c);
    } else if (nested.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && NestedFits(nested)) {
      model = FromNested(nested, bytes.size(), c);
    } else {
      return c.Error("binary", "not a tf.data model dump (a ModelProto of neither the map nor the nested form)");
    }
  }
  if (!model.ok()) return model.status();
  PLUMBER_RETURN_IF_ERROR(CheckTree(*model, bytes.size(), c));
  return model;
}

}  // namespace plumber::tfmodel
