// Importing the Plumber fork's stats dumps (tensorflow.PipelineSnapshot,
// schemas/pipeline_snapshot.proto) as a plumber trace; see
// pipeline_snapshot_import.h and docs/tf-import.md. The program is rebuilt
// from the dump's dataset graph (the GraphDef the fork stores, rooted at
// its "dataset" _Retval node, with interleave functions in its library);
// each op's global counters become the node's NodeStats.
//
// Every number read from a dump is checked before it is used: counts and
// times must be non-negative and below the ceilings below, and nothing is
// sized from a number (only from what the protobuf parser already holds).
// The graph walk is iterative, so a deep or cyclic graph from a damaged or
// hostile file cannot exhaust the stack.
//
// Long because: one format's whole mapping (checks, graph walk, op mapping,
// counters) shares one Importer's state; split, each part would need it all.
#include "traceio/pipeline_snapshot_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "pipeline/param_check.h"
#include "pipeline/program_graph.h"
#include "pipeline/tf_types.h"
#include "pipeline_snapshot.pb.h"
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include "traceio/import_time.h"

namespace plumber {
namespace {

using tfsnap::PipelineSnapshot;
using OpStats = tfsnap::PipelineSnapshot::OpStats;

constexpr char kFormat[] = "Plumber PipelineSnapshot";
// Ceilings for counters read from a dump: far above any real run (a million
// elements a second for thirty years is 1e15), low enough that sums and
// products of a few of them stay exact in doubles and inside int64.
constexpr int64_t kMaxCount = 1'000'000'000'000'000;      // elements
constexpr int64_t kMaxBytes = 1'000'000'000'000'000'000;  // bytes, 1 EB
constexpr int64_t kMaxNs = 1'000'000'000'000'000'000;     // ~31.7 years
constexpr int64_t kMaxCores = 1 << 20;
// The fork's cardinality codes (tf.data's kInfiniteCardinality and
// kUnknownCardinality).
constexpr int64_t kInfinite = -1;
constexpr int64_t kUnknown = -2;

// What this format's importer makes of a TF dataset type.
enum class Kind {
  kOpaque, kMap, kParallelMap, kFilter, kBatch, kParallelBatch, kMapAndBatch, kPaddedBatch, kPrefetch,
  kShuffle, kRepeat, kCache, kTake, kSkip, kTfRecord, kTextLine, kInterleave,
};
struct KindInfo {
  Kind kind;
  // Interleaves: how many trailing inputs follow the captured arguments,
  // and the positions of cycle_length and block_length among them.
  int tail = 0;
};

// ParallelInterleave's trailing inputs depend on its version: V2 and V3
// end in cycle_length, block_length, num_parallel_calls; V4 adds
// buffer_output_elements and prefetch_input_elements before the last.
int ParallelInterleaveTail(std::string_view version) { return version == "V4" ? 5 : 3; }

// The type's row in the shared TF type table, in the terms this format's
// graph inputs are read in.
std::optional<KindInfo> Classify(std::string_view op) {
  const TfTypeDef* def = FindTfType(op);
  if (def == nullptr) return std::nullopt;
  switch (def->kind) {
    case TfKind::kMap: return KindInfo{Kind::kMap};
    case TfKind::kParallelMap: return KindInfo{Kind::kParallelMap};
    case TfKind::kFilter: return KindInfo{Kind::kFilter};
    case TfKind::kBatch: return KindInfo{Kind::kBatch};
    case TfKind::kParallelBatch: return KindInfo{Kind::kParallelBatch};
    case TfKind::kMapAndBatch: return KindInfo{Kind::kMapAndBatch};
    case TfKind::kPaddedBatch: return KindInfo{Kind::kPaddedBatch};
    case TfKind::kPrefetch: return KindInfo{Kind::kPrefetch};
    case TfKind::kShuffle: return KindInfo{Kind::kShuffle};
    case TfKind::kRepeat: return KindInfo{Kind::kRepeat};
    case TfKind::kCache: return KindInfo{Kind::kCache};
    case TfKind::kTake: return KindInfo{Kind::kTake};
    case TfKind::kSkip: return KindInfo{Kind::kSkip};
    case TfKind::kTfRecord: return KindInfo{Kind::kTfRecord};
    case TfKind::kTextLine: return KindInfo{Kind::kTextLine};
    // input_dataset, other_arguments..., cycle_length, block_length.
    case TfKind::kInterleave: return KindInfo{Kind::kInterleave, 2};
    case TfKind::kParallelInterleave:
      return KindInfo{Kind::kInterleave, ParallelInterleaveTail(SplitTfType(op).version)};
    // Their graph inputs are not the op's (a flat_map has no cycle_length,
    // a shuffle_and_repeat also repeats, a memory cache names no file):
    // kept opaque here.
    case TfKind::kShuffleAndRepeat:
    case TfKind::kMemoryCache:
    case TfKind::kFlatMap: return std::nullopt;
  }
  return std::nullopt;
}

// The fork's own test for a tf.data node of the graph.
bool IsDatasetOp(std::string_view op) { return op.find("Dataset") != std::string_view::npos; }

// "node", "node:1", "node:handle:0" -> "node"; control inputs ("^node")
// are not data and give "".
std::string InputNode(std::string_view input) {
  if (input.empty() || input[0] == '^') return "";
  return std::string(input.substr(0, input.find(':')));
}

// Names in a dump are bytes, not checked text: messages and notes that
// quote them keep printable ASCII only, so the trace (whose strings must be
// UTF-8) and the terminal get text.
std::string Printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

bool HasNoUnknownFields(const google::protobuf::Message& m) {
  return m.GetReflection()->GetUnknownFields(m).empty();
}

// One scope of node names: the graph, or one function of its library.
struct Scope {
  std::string where;  // "the graph" or "function 'f'"
  const google::protobuf::RepeatedPtrField<tfsnap::NodeDef>* nodes = nullptr;
  std::unordered_map<std::string, int> index;
};

// A dataset node of the rebuilt program, before it becomes a schema::Node.
struct Op {
  int scope = 0;
  int node = 0;
  std::vector<int> inputs;  // indices into the ops vector
  int function = -1;        // interleave: index of the function's root op
  std::string name;         // plumber's name
};

class Importer {
 public:
  Importer(const ImportInput& in, const PipelineSnapshot& snap) : in_(in), snap_(snap) {}

  // Checks every number the import reads, then rebuilds the program.
  Status Build();
  const schema::Pipeline& program() const { return program_; }
  // Topology only (names, ops, edges), to check that dumps imported
  // together show one pipeline; parameters may move (autotuning).
  std::string Shape() const;
  // What the import had to assume or leave out, for ImportInfo.notes.
  const std::vector<std::string>& notes() const { return notes_; }
  bool thread_cpu() const { return thread_cpu_; }
  bool file_sizes_known() const { return file_sizes_known_; }
  // This dump's counters; wall_ns is left to PlaceSnapshotsInTime.
  StatusOr<schema::Snapshot> Counters(bool use_clock) const;
  // Seconds since the root iterator was created, when the dump says.
  std::optional<double> SourceSeconds() const;
  int64_t start_unix_ns() const { return snap_.snapshot_info().start_time(); }
  void FillMachine(schema::Machine* m) const;

 private:
  Status Bad(const std::string& what) const { return Status::InvalidArgument(in_.path + ": " + Printable(what)); }
  const tfsnap::NodeDef& Def(const Op& op) const { return scopes_[op.scope].nodes->Get(op.node); }
  Status CheckNumbers();
  Status IndexScopes();
  Status Walk(int scope, const std::string& root, int* out);
  StatusOr<int> FunctionRoot(const tfsnap::NodeDef& def, int* scope, std::string* root);
  std::optional<int64_t> ConstInput(const Op& op, int position, bool from_end) const;
  Status MakeNode(const Op& op, schema::Node* node);
  std::string UniqueName(const tfsnap::NodeDef& def, const std::string& type);
  const OpStats* StatsOf(const Op& op) const;
  bool FileCounters(const OpStats& reader, schema::NodeStats* ns) const;

  const ImportInput& in_;
  const PipelineSnapshot& snap_;
  std::unordered_map<std::string, const OpStats*> by_name_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, int> function_scope_;
  std::vector<Op> ops_;
  std::vector<Kind> kinds_;                   // per op
  std::map<std::pair<int, int>, int> op_of_;  // (scope, node) -> op
  std::set<std::string> names_;
  std::unordered_map<std::string, int> next_suffix_;
  schema::Pipeline program_;
  std::vector<std::string> notes_;
  std::vector<int> readers_;
  int output_ = -1;
  bool thread_cpu_ = false;
  bool file_sizes_known_ = false;
};

Status Importer::IndexScopes() {
  scopes_.push_back(Scope{"the graph", &snap_.graph().node(), {}});
  const auto& lib = snap_.graph().library().function();
  for (int f = 0; f < lib.size(); ++f) {
    const std::string& fname = lib.Get(f).signature().name();
    if (!function_scope_.emplace(fname, static_cast<int>(scopes_.size())).second) {
      return Bad("graph library function " + std::to_string(f) + " repeats the name '" + fname + "'");
    }
    scopes_.push_back(Scope{"function '" + fname + "'", &lib.Get(f).node_def(), {}});
  }
  for (auto& s : scopes_) {
    for (int i = 0; i < s.nodes->size(); ++i) {
      const std::string& name = s.nodes->Get(i).name();
      if (name.empty()) return Bad(s.where + ": node " + std::to_string(i) + " has no name");
      auto [it, fresh] = s.index.emplace(name, i);
      if (!fresh) {
        return Bad(s.where + ": node " + std::to_string(i) + " repeats the name '" + name + "' of node " +
                   std::to_string(it->second));
      }
    }
  }
  return Status::OK();
}

// The dataset a function returns: the node its first `ret` names, else the
// one dataset node of the function no other dataset node reads.
StatusOr<int> Importer::FunctionRoot(const tfsnap::NodeDef& def, int* scope, std::string* root) {
  auto fit = def.attr().find("f");
  if (fit == def.attr().end() || fit->second.func().name().empty()) {
    return Bad("op '" + def.name() + "' (" + def.op() + ") names no function (attr f)");
  }
  const std::string& fname = fit->second.func().name();
  auto sit = function_scope_.find(fname);
  if (sit == function_scope_.end()) {
    return Bad("op '" + def.name() + "': function '" + fname + "' is not in the graph's library");
  }
  *scope = sit->second;
  const auto& fdef = snap_.graph().library().function(sit->second - 1);
  // map<> iteration order is unspecified: take the smallest output name.
  std::string first_key;
  for (const auto& [k, v] : fdef.ret()) {
    if (first_key.empty() || k < first_key) {
      first_key = k;
      *root = InputNode(v);
    }
  }
  if (root->empty() || !scopes_[*scope].index.count(*root)) {
    std::set<std::string> read;
    std::vector<std::string> datasets;
    for (const auto& n : fdef.node_def()) {
      if (!IsDatasetOp(n.op())) continue;
      datasets.push_back(n.name());
      for (const auto& i : n.input()) read.insert(InputNode(i));
    }
    root->clear();
    for (const auto& d : datasets) {
      if (read.count(d)) continue;
      if (!root->empty()) return Bad("function '" + fname + "' returns no dataset and has several unread ones");
      *root = d;
    }
  }
  if (root->empty()) return Bad("function '" + fname + "' of op '" + def.name() + "' holds no dataset");
  return 0;
}

// Iterative depth-first walk from `root`: every dataset reached gets an op
// (children first), and a node met again while still open is a cycle.
Status Importer::Walk(int scope0, const std::string& root0, int* out) {
  struct Frame {
    int scope, node;
    std::vector<std::pair<int, std::string>> children;  // (scope, name)
    size_t next = 0;
    int function_slot = -1;  // index in children of the function root
  };
  std::map<std::pair<int, int>, int> state;  // 1 open, 2 done
  std::vector<Frame> stack;
  auto open = [&](int scope, const std::string& name) -> Status {
    auto it = scopes_[scope].index.find(name);
    if (it == scopes_[scope].index.end()) return Bad(scopes_[scope].where + ": no node '" + name + "'");
    const int node = it->second;
    const int s = state[{scope, node}];
    if (s == 1) return Bad(scopes_[scope].where + ": the datasets form a cycle through '" + name + "'");
    if (s == 2) return Status::OK();
    state[{scope, node}] = 1;
    Frame f{scope, node, {}, 0, -1};
    const auto& def = scopes_[scope].nodes->Get(node);
    for (const auto& input : def.input()) {
      const std::string in = InputNode(input);
      auto jt = scopes_[scope].index.find(in);
      if (in.empty() || jt == scopes_[scope].index.end()) continue;  // a function argument
      if (IsDatasetOp(scopes_[scope].nodes->Get(jt->second).op())) f.children.emplace_back(scope, in);
    }
    auto kind = Classify(def.op());
    if (kind && kind->kind == Kind::kInterleave) {
      int fscope = 0;
      std::string froot;
      PLUMBER_RETURN_IF_ERROR(FunctionRoot(def, &fscope, &froot).status());
      f.function_slot = static_cast<int>(f.children.size());
      f.children.emplace_back(fscope, froot);
    } else if (auto fit = def.attr().find("f"); fit != def.attr().end()) {
      auto sit = function_scope_.find(fit->second.func().name());
      if (sit != function_scope_.end()) {
        for (const auto& n : *scopes_[sit->second].nodes) {
          if (IsDatasetOp(n.op())) {
            notes_.push_back("the datasets inside the function of '" + def.name() + "' (" + def.op() +
                                   ") are not modelled: plumber has no op for it, so its cost includes theirs");
            break;
          }
        }
      }
    }
    stack.push_back(std::move(f));
    return Status::OK();
  };
  PLUMBER_RETURN_IF_ERROR(open(scope0, root0));
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.children.size()) {
      const auto [scope, name] = f.children[f.next++];
      PLUMBER_RETURN_IF_ERROR(open(scope, name));
      continue;
    }
    Op op;
    op.scope = f.scope;
    op.node = f.node;
    for (size_t c = 0; c < f.children.size(); ++c) {
      const auto& [scope, name] = f.children[c];
      const int child = op_of_.at({scope, scopes_[scope].index.at(name)});
      if (static_cast<int>(c) == f.function_slot) {
        op.function = child;
      } else {
        op.inputs.push_back(child);
      }
    }
    state[{f.scope, f.node}] = 2;
    const int id = static_cast<int>(ops_.size());
    op_of_[{f.scope, f.node}] = id;
    ops_.push_back(std::move(op));
    stack.pop_back();
    if (stack.empty()) *out = id;
  }
  return Status::OK();
}

// The int64 constant feeding one of the op's inputs, counted from the start
// (0 = first) or from the end (1 = last) of its data inputs.
std::optional<int64_t> Importer::ConstInput(const Op& op, int position, bool from_end) const {
  const Scope& scope = scopes_[op.scope];
  std::vector<std::string> data;
  for (const auto& input : Def(op).input()) {
    if (!input.empty() && input[0] != '^') data.push_back(InputNode(input));
  }
  const int n = static_cast<int>(data.size());
  const int k = from_end ? n - position : position;
  if (k < 0 || k >= n) return std::nullopt;
  auto it = scope.index.find(data[k]);
  if (it == scope.index.end()) return std::nullopt;
  const auto& def = scope.nodes->Get(it->second);
  auto vit = def.attr().find("value");
  if (vit == def.attr().end() || vit->second.tensor().int64_val_size() != 1) return std::nullopt;
  return vit->second.tensor().int64_val(0);
}

// Keeps a node name inside plumber's alphabet, [A-Za-z0-9_.-]+.
std::string Sanitize(std::string_view s) {
  std::string out;
  for (char c : s) {
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ? c : '.');
  }
  return out;
}

std::string Importer::UniqueName(const tfsnap::NodeDef& def, const std::string& type) {
  // The fork's graphs name nodes "<Op>/_<n>": that becomes "<Type>.<n>".
  std::string base;
  const std::string& raw = def.name();
  const size_t slash = raw.rfind("/_");
  if (slash != std::string::npos && slash + 2 < raw.size() &&
      raw.find_first_not_of("0123456789", slash + 2) == std::string::npos) {
    base = type + "." + raw.substr(slash + 2);
  } else {
    base = raw;
  }
  base = Sanitize(base);
  if (base.empty()) base = "op";
  // Each base remembers its last suffix, so that many clashing names (a
  // crafted dump) stay linear.
  std::string name = base;
  int& k = next_suffix_[base];
  if (k < 2) k = 2;
  while (names_.count(name)) name = base + "." + std::to_string(k++);
  names_.insert(name);
  return name;
}

// Parallelism in effect, as the fork recorded it (0 when it did not).
int64_t StatParallelism(const OpStats* s) {
  if (s == nullptr) return 0;
  return s->aggregate_parallelism() > 0 ? s->aggregate_parallelism() : s->parallelism();
}

Status Importer::CheckNumbers() {
  struct Field {
    const char* name;
    int64_t value;
    int64_t max;
  };
  auto check = [&](const std::string& where, std::initializer_list<Field> fields) -> Status {
    for (const Field& f : fields) {
      if (f.value < 0) return Bad(where + ": " + f.name + " is negative (" + std::to_string(f.value) + ")");
      if (f.value > f.max) {
        return Bad(where + ": " + f.name + " is " + std::to_string(f.value) + ", beyond any real run (at most " +
                   std::to_string(f.max) + ")");
      }
    }
    return Status::OK();
  };
  for (int i = 0; i < snap_.stats_size(); ++i) {
    const OpStats& s = snap_.stats(i);
    if (s.name().empty()) return Bad("stats[" + std::to_string(i) + "] names no op");
    const std::string where = "stats[" + std::to_string(i) + "] (op '" + s.name() + "')";
    if (!by_name_.emplace(s.name(), &s).second) return Bad(where + ": repeats the op name of an earlier entry");
    PLUMBER_RETURN_IF_ERROR(check(where, {
        {"aggregate_elements_produced", s.aggregate_elements_produced(), kMaxCount},
        {"aggregate_elements_consumed", s.aggregate_elements_consumed(), kMaxCount},
        {"aggregate_bytes_produced", s.aggregate_bytes_produced(), kMaxBytes},
        {"aggregate_bytes_consumed", s.aggregate_bytes_consumed(), kMaxBytes},
        {"aggregate_processing_time", s.aggregate_processing_time(), kMaxNs},
        {"aggregate_processing_time_clock", s.aggregate_processing_time_clock(), kMaxNs},
        {"aggregate_disk_bytes_read", s.aggregate_disk_bytes_read(), kMaxBytes},
        {"aggregate_max_buffer_size", s.aggregate_max_buffer_size(), kMaxCount},
        {"parallelism", s.parallelism(), kMaxParallelism},
        {"aggregate_parallelism", s.aggregate_parallelism(), kMaxParallelism},
    }));
    if (s.cardinality() < kUnknown) {
      return Bad(where + ": cardinality " + std::to_string(s.cardinality()) +
                 " is none of a count, -1 (infinite) or -2 (unknown)");
    }
    if (s.cardinality() > kMaxCount) {
      return Bad(where + ": cardinality " + std::to_string(s.cardinality()) + " is beyond any real dataset");
    }
  }
  const auto& m = snap_.machine_info();
  PLUMBER_RETURN_IF_ERROR(check("machine_info", {{"num_cores", m.num_cores(), kMaxCores},
                                                 {"memory_free", m.memory_free(), kMaxBytes},
                                                 {"memory_total", m.memory_total(), kMaxBytes}}));
  if (!(m.estimated_disk_bandwidth() >= 0) || !(m.estimated_disk_bandwidth() <= static_cast<double>(kMaxBytes))) {
    return Bad("machine_info: estimated_disk_bandwidth is not a bandwidth (" +
               std::to_string(m.estimated_disk_bandwidth()) + ")");
  }
  std::set<std::string> files;
  int64_t total = 0;
  const auto& sizes = snap_.ctx_info().file_sizes();
  for (int i = 0; i < sizes.size(); ++i) {
    const std::string where = "ctx_info.file_sizes[" + std::to_string(i) + "] ('" + sizes[i].name() + "')";
    if (sizes[i].name().empty()) return Bad("ctx_info.file_sizes[" + std::to_string(i) + "] names no file");
    if (!files.insert(sizes[i].name()).second) return Bad(where + ": the file is listed twice");
    PLUMBER_RETURN_IF_ERROR(check(where, {{"size", sizes[i].size(), kMaxBytes - total}}));
    total += sizes[i].size();
  }
  const auto& it = snap_.iter_stats();
  for (auto [name, v] : {std::pair{"avg_wallclock_duration", it.avg_wallclock_duration()},
                         std::pair{"avg_duration", it.avg_duration()}}) {
    if (!(v >= 0) || !(v <= static_cast<double>(kMaxNs))) {
      return Bad(std::string("iter_stats: ") + name + " is not a duration (" + std::to_string(v) + ")");
    }
  }
  const auto& si = snap_.snapshot_info();
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  PLUMBER_RETURN_IF_ERROR(check("snapshot_info", {{"start_time", si.start_time(), kAny},
                                                  {"current_time", si.current_time(), kAny},
                                                  {"process_start_time", si.process_start_time(), kAny},
                                                  {"process_current_time", si.process_current_time(), kAny}}));
  if (si.start_time() > 0 && si.current_time() > 0 && si.current_time() < si.start_time()) {
    return Bad("snapshot_info: current_time is before start_time");
  }
  if (si.process_current_time() < si.process_start_time()) {
    return Bad("snapshot_info: process_current_time is before process_start_time");
  }
  return Status::OK();
}

const OpStats* Importer::StatsOf(const Op& op) const {
  auto it = by_name_.find(Def(op).name());
  return it == by_name_.end() ? nullptr : it->second;
}

Status Importer::MakeNode(const Op& op, schema::Node* node) {
  const auto& def = Def(op);
  const TfTypeName t = SplitTfType(def.op());
  node->set_name(op.name);
  node->set_imported_type(Sanitize(t.type));
  for (int in : op.inputs) node->add_inputs(ops_[in].name);
  const OpStats* s = StatsOf(op);
  const int p = static_cast<int>(std::clamp<int64_t>(StatParallelism(s), 0, kMaxParallelism));
  const auto info = Classify(def.op());
  Kind kind = info ? info->kind : Kind::kOpaque;
  const bool reader = kind == Kind::kTfRecord || kind == Kind::kTextLine;
  const bool one_input = kind != Kind::kOpaque && !reader && kind != Kind::kInterleave;
  if ((one_input && op.inputs.size() != 1) || (reader && !op.inputs.empty()) ||
      (kind == Kind::kInterleave && op.inputs.size() != 1)) {
    notes_.push_back("'" + op.name + "' (" + t.type + ") reads " + std::to_string(op.inputs.size()) +
                     " datasets, unlike plumber's op for it: kept as an opaque node");
    kind = Kind::kOpaque;
  }
  if (kind == Kind::kOpaque && op.inputs.size() > 64) {
    return Bad("op '" + def.name() + "' reads " + std::to_string(op.inputs.size()) + " datasets; at most 64 are supported");
  }
  auto count = [&](int position, bool from_end, int64_t fallback, const char* what) {
    auto v = ConstInput(op, position, from_end);
    if (v && *v >= -1 && *v <= kMaxCount) return *v;
    notes_.push_back("the " + std::string(what) + " of '" + op.name + "' is not a constant in the graph; taken as " +
                     std::to_string(fallback));
    return fallback;
  };
  // A batch's size: the constant input, else elements consumed per batch.
  auto batch_size = [&](int position, bool from_end) -> int64_t {
    auto v = ConstInput(op, position, from_end);
    if (v && *v >= 1 && *v <= kMaxCount) return *v;
    int64_t b = 1;
    if (s && s->aggregate_elements_produced() > 0) {
      b = std::max<int64_t>(1, std::llround(static_cast<double>(s->aggregate_elements_consumed()) /
                                            static_cast<double>(s->aggregate_elements_produced())));
    }
    notes_.push_back("the batch size of '" + op.name + "' is not a constant in the graph; taken as " +
                     std::to_string(b) + " from its elements consumed per batch");
    return b;
  };
  switch (kind) {
    case Kind::kMap:
      node->set_op("map");
      node->mutable_map();
      break;
    case Kind::kParallelMap:
      node->set_op("map");
      node->mutable_map()->set_parallelism(std::max(1, p));
      break;
    case Kind::kFilter:
      node->set_op("filter");
      node->mutable_filter();
      break;
    case Kind::kBatch:
    case Kind::kParallelBatch:
    case Kind::kMapAndBatch: {
      node->set_op("batch");
      // MapAndBatch: input_dataset, other_arguments..., batch_size,
      // num_parallel_calls, drop_remainder.
      const bool mab = kind == Kind::kMapAndBatch;
      node->mutable_batch()->set_batch_size(mab ? batch_size(3, true) : batch_size(1, false));
      if (kind != Kind::kBatch) node->mutable_batch()->set_parallelism(std::max(1, p));
      break;
    }
    case Kind::kPaddedBatch:
      node->set_op("padded_batch");
      node->mutable_padded_batch()->set_batch_size(batch_size(1, false));
      break;
    case Kind::kPrefetch: {
      node->set_op("prefetch");
      auto v = ConstInput(op, 1, false);
      int64_t buffer = v && *v >= 0 && *v <= kMaxCount ? *v : -1;
      if (buffer < 0) {
        // AUTOTUNE (-1) or not a constant: the largest buffer it held.
        buffer = s && s->aggregate_max_buffer_size() > 0 ? s->aggregate_max_buffer_size() : 1;
        notes_.push_back("the buffer of '" + op.name + "' was autotuned; taken as " + std::to_string(buffer) +
                         " (the largest it held)");
      }
      node->mutable_prefetch()->set_buffer_size(buffer);
      break;
    }
    case Kind::kShuffle: {
      node->set_op("shuffle");
      auto v = ConstInput(op, 1, false);
      node->mutable_shuffle()->set_buffer_size(v && *v >= 1 && *v <= kMaxCount ? *v : 0);
      break;
    }
    case Kind::kRepeat:
      node->set_op("repeat");
      node->mutable_repeat()->set_count(count(1, false, -1, "count"));
      break;
    case Kind::kCache:
      node->set_op("cache");
      node->mutable_cache();
      break;
    case Kind::kTake:
      node->set_op("take");
      node->mutable_take()->set_count(count(1, false, -1, "count"));
      break;
    case Kind::kSkip:
      node->set_op("skip");
      node->mutable_skip()->set_count(count(1, false, 0, "count"));
      break;
    case Kind::kTfRecord:
      node->set_op("tfrecord");
      node->mutable_tfrecord();
      break;
    case Kind::kTextLine:
      node->set_op("text_line");
      node->mutable_text_line();
      break;
    case Kind::kInterleave: {
      node->set_op("interleave");
      auto* il = node->mutable_interleave();
      il->set_function(ops_[op.function].name);
      const int tail = info->tail;
      const bool parallel = tail > 2;
      int par = 1;
      if (parallel) {
        auto npc = ConstInput(op, 1, true);
        par = p > 0 ? p : (npc && *npc >= 1 && *npc <= kMaxParallelism ? static_cast<int>(*npc) : 1);
      }
      auto cycle = ConstInput(op, tail, true);
      int c = 0;
      if (cycle && *cycle >= 1 && *cycle <= kMaxParallelism) {
        c = static_cast<int>(*cycle);
      } else {
        c = std::max(par, 1);
        notes_.push_back("the cycle_length of '" + op.name + "' was autotuned or is not a constant; taken as " +
                         std::to_string(c) + " (its parallelism)");
      }
      il->set_cycle_length(c);
      if (auto block = ConstInput(op, tail - 1, true); block && *block >= 1 && *block <= kMaxCount) {
        il->set_block_length(static_cast<int>(std::min<int64_t>(*block, std::numeric_limits<int32_t>::max())));
      }
      if (parallel) il->set_parallelism(std::min(par, c));
      break;
    }
    case Kind::kOpaque:
      node->set_op("opaque");
      node->mutable_opaque();
      if (p > 1) node->mutable_opaque()->set_parallelism(p);
      break;
  }
  if (reader) readers_.push_back(static_cast<int>(&op - ops_.data()));
  return Status::OK();
}

Status Importer::Build() {
  PLUMBER_RETURN_IF_ERROR(CheckNumbers());
  PLUMBER_RETURN_IF_ERROR(IndexScopes());
  auto rit = scopes_[0].index.find("dataset");
  if (rit == scopes_[0].index.end()) {
    return Bad("the graph has no root: no node named 'dataset' (the _Retval node the fork writes above the "
               "pipeline's last dataset)");
  }
  std::string out;
  for (const auto& input : scopes_[0].nodes->Get(rit->second).input()) {
    out = InputNode(input);
    if (!out.empty()) break;
  }
  auto oit = scopes_[0].index.find(out);
  if (out.empty() || oit == scopes_[0].index.end() || !IsDatasetOp(scopes_[0].nodes->Get(oit->second).op())) {
    return Bad("the root node 'dataset' reads no dataset op" + (out.empty() ? std::string() : " ('" + out + "')"));
  }
  PLUMBER_RETURN_IF_ERROR(Walk(0, out, &output_));
  // Output first, so that reports list the program top-down.
  std::vector<int> order;
  for (int i = static_cast<int>(ops_.size()) - 1; i >= 0; --i) order.push_back(i);
  for (int i : order) ops_[i].name = UniqueName(Def(ops_[i]), SplitTfType(Def(ops_[i]).op()).type);
  for (int i : order) PLUMBER_RETURN_IF_ERROR(MakeNode(ops_[i], program_.add_nodes()));
  program_.set_output(ops_[output_].name);
  program_.set_imported_from(kFormat);
  // Reports name the program: the dump's file name stands in for the
  // Python program the graph came from.
  program_.set_name(in_.path.substr(in_.path.find_last_of('/') + 1));
  program_.set_description("imported from " + in_.path);

  std::set<std::string> modelled;
  for (const Op& op : ops_) modelled.insert(Def(op).name());
  std::vector<std::string> unmatched;
  for (const auto& s : snap_.stats()) {
    if (!modelled.count(s.name())) unmatched.push_back("'" + s.name() + "'");
    if (s.aggregate_processing_time_clock() > 0) thread_cpu_ = true;
  }
  if (!unmatched.empty()) {
    std::string list;
    for (size_t i = 0; i < unmatched.size() && i < 5; ++i) list += (i ? ", " : "") + unmatched[i];
    if (unmatched.size() > 5) list += " and " + std::to_string(unmatched.size() - 5) + " more";
    notes_.push_back("the stats of ops outside the modelled pipeline were left out: " + list);
  }
  const int nfiles = snap_.ctx_info().file_sizes_size();
  const OpStats* reader = readers_.size() == 1 ? StatsOf(ops_[readers_[0]]) : nullptr;
  schema::NodeStats scratch;
  file_sizes_known_ = nfiles > 0 && reader != nullptr && FileCounters(*reader, &scratch);
  if (nfiles > 0 && readers_.size() == 1 && !file_sizes_known_) {
    notes_.push_back("the reader's file sizes cannot be used (no counters for it, or records per file beyond any "
                     "real file): records per file, so the reader's cardinality, are unknown");
  } else if (nfiles == 0) {
    notes_.push_back("the dump lists no file sizes: records per file, so the readers' cardinality, are unknown");
  } else if (readers_.size() != 1) {
    notes_.push_back("the dump's file sizes cannot be told apart between " + std::to_string(readers_.size()) +
                     " readers: records per file, so the readers' cardinality, are unknown");
  } else {
    notes_.push_back("records per file are estimated from the file sizes and the reader's records per byte read: "
                     "the dump records each file's size, not its records");
  }
  auto graph = ProgramGraph::Build(program_, in_.path);
  if (!graph.ok()) return Bad("the rebuilt pipeline is not valid: " + graph.status().message());
  return Status::OK();
}

std::string Importer::Shape() const {
  std::string s;
  for (const auto& n : program_.nodes()) {
    s += n.name() + " " + n.op();
    for (const auto& in : n.inputs()) s += " <" + in;
    if (const std::string* f = NodeFunction(n)) s += " f=" + *f;
    s += "\n";
  }
  return s;
}

// The completed-file counters of the reader from the dump's file sizes:
// each listed file counted once, its records its size times the reader's
// records per byte read. False (nothing set) when those records would be
// beyond any real dataset.
bool Importer::FileCounters(const OpStats& r, schema::NodeStats* ns) const {
  const auto& files = snap_.ctx_info().file_sizes();
  double total = 0;
  for (const auto& f : files) total += static_cast<double>(f.size());
  const double read = static_cast<double>(r.aggregate_disk_bytes_read());
  const double per_byte = read > 0 ? static_cast<double>(r.aggregate_elements_produced()) / read
                                   : (total > 0 ? static_cast<double>(r.aggregate_elements_produced()) / total : 0);
  double bytes_sq = 0, records = 0, records_sq = 0;
  for (const auto& f : files) {
    const double b = static_cast<double>(f.size());
    const double rec = std::round(b * per_byte);
    bytes_sq += b * b;
    records += rec;
    records_sq += rec * rec;
  }
  if (!(records <= static_cast<double>(kMaxCount))) return false;
  ns->set_files_opened(files.size());
  ns->set_files_completed(files.size());
  ns->set_completed_file_bytes(static_cast<int64_t>(total));
  ns->set_completed_file_bytes_sq(bytes_sq);
  ns->set_completed_file_records(static_cast<int64_t>(records));
  ns->set_completed_file_records_sq(records_sq);
  return true;
}

StatusOr<schema::Snapshot> Importer::Counters(bool use_clock) const {
  schema::Snapshot snap;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const int i = static_cast<int>(ops_.size() - 1 - k);  // program order
    const OpStats* s = StatsOf(ops_[i]);
    if (s == nullptr) continue;
    schema::NodeStats* ns = snap.add_nodes();
    ns->set_name(ops_[i].name);
    ns->set_elements_produced(s->aggregate_elements_produced());
    ns->set_elements_consumed(s->aggregate_elements_consumed());
    ns->set_bytes_produced(s->aggregate_bytes_produced());
    ns->set_bytes_consumed(s->aggregate_bytes_consumed());
    ns->set_active_cpu_ns(use_clock ? s->aggregate_processing_time_clock() : s->aggregate_processing_time());
    ns->set_self_wall_ns(s->aggregate_processing_time());
    ns->set_parallelism(static_cast<int>(std::clamp<int64_t>(StatParallelism(s), 1, kMaxParallelism)));
    ns->set_storage_bytes_read(s->aggregate_disk_bytes_read());
    if (s->cardinality() >= 0 || s->cardinality() == kInfinite) ns->set_cardinality(s->cardinality());
    if (file_sizes_known_ && readers_.front() == i) FileCounters(*s, ns);
  }
  if (const OpStats* out = StatsOf(ops_[output_])) {
    const int64_t calls = out->aggregate_elements_produced();
    const double wait = snap_.iter_stats().avg_wallclock_duration() * static_cast<double>(calls);
    if (!(wait <= static_cast<double>(kMaxNs))) {
      return Bad("iter_stats: avg_wallclock_duration times the root's " + std::to_string(calls) +
                 " elements is beyond any real run");
    }
    snap.mutable_root()->set_next_calls(calls);
    snap.mutable_root()->set_wait_ns(std::llround(wait));
  }
  const auto& si = snap_.snapshot_info();
  if (si.process_start_time() > 0 || si.process_current_time() > 0) {
    snap.set_process_cpu_ns(si.process_current_time() - si.process_start_time());
  }
  return snap;
}

std::optional<double> Importer::SourceSeconds() const {
  const auto& si = snap_.snapshot_info();
  if (si.start_time() <= 0 || si.current_time() <= si.start_time()) return std::nullopt;
  return static_cast<double>(si.current_time() - si.start_time()) * 1e-9;
}

void Importer::FillMachine(schema::Machine* m) const {
  const auto& mi = snap_.machine_info();
  m->set_cores(static_cast<int32_t>(mi.num_cores()));
  m->set_memory_bytes(mi.memory_total());
  m->set_available_memory_bytes(mi.memory_free());
  m->set_read_bandwidth_bytes_per_s(mi.estimated_disk_bandwidth());
}

// Parses and checks the structure only this message has: no field of a
// wrong wire type where the detector looks, a graph of named nodes with at
// least one dataset op, and stats of at least one op the graph names.
bool ParseSnapshot(std::string_view bytes, PipelineSnapshot* snap) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  if (!snap->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  if (!HasNoUnknownFields(*snap) || snap->graph().node_size() == 0 || snap->stats_size() == 0) return false;
  if (!HasNoUnknownFields(snap->machine_info()) || !HasNoUnknownFields(snap->ctx_info()) ||
      !HasNoUnknownFields(snap->iter_stats()) || !HasNoUnknownFields(snap->snapshot_info())) {
    return false;
  }
  for (const auto& f : snap->ctx_info().file_sizes()) {
    if (!HasNoUnknownFields(f)) return false;
  }
  std::set<std::string_view> names;
  bool any_dataset = false;
  for (const auto& n : snap->graph().node()) {
    if (n.name().empty() || n.op().empty()) return false;
    names.insert(n.name());
    any_dataset = any_dataset || IsDatasetOp(n.op());
  }
  for (const auto& f : snap->graph().library().function()) {
    for (const auto& n : f.node_def()) names.insert(n.name());
  }
  if (!any_dataset) return false;
  bool matched = false;
  for (const auto& s : snap->stats()) {
    if (!HasNoUnknownFields(s)) return false;
    matched = matched || names.count(s.name()) > 0;
  }
  return matched;
}

}  // namespace

bool LooksLikePipelineSnapshot(std::string_view bytes) {
  PipelineSnapshot snap;
  return ParseSnapshot(bytes, &snap);
}

namespace {

class SilentErrors final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

}  // namespace

bool LooksLikePipelineSnapshotText(std::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  PipelineSnapshot snap;
  google::protobuf::TextFormat::Parser parser;
  // Problems in text that is not a snapshot at all are no news to anyone.
  SilentErrors silent;
  parser.RecordErrorsTo(&silent);
  parser.AllowPartialMessage(true);
  if (!parser.ParseFromString(std::string(bytes), &snap)) return false;
  return snap.graph().node_size() > 0 && snap.stats_size() > 0;
}

StatusOr<schema::Trace> ImportPipelineSnapshot(const std::vector<ImportInput>& inputs, const ImportOptions& options) {
  if (inputs.empty()) return Status::InvalidArgument("nothing to import");
  std::vector<PipelineSnapshot> snaps(inputs.size());
  std::vector<std::unique_ptr<Importer>> imports;
  bool use_clock = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!ParseSnapshot(inputs[i].bytes, &snaps[i])) {
      return Status::InvalidArgument(inputs[i].path + ": not a Plumber PipelineSnapshot (binary)");
    }
    imports.push_back(std::make_unique<Importer>(inputs[i], snaps[i]));
    PLUMBER_RETURN_IF_ERROR(imports.back()->Build());
    if (i > 0 && imports[i]->Shape() != imports[0]->Shape()) {
      return Status::InvalidArgument(inputs[i].path + ": shows a different pipeline from " + inputs[0].path +
                                     "; dumps imported together must come from one run");
    }
    use_clock = use_clock && imports[i]->thread_cpu();
  }
  const Importer& last = *imports.back();
  schema::Trace trace;
  schema::TraceHeader* h = trace.mutable_header();
  // The parameters in effect at the last dump (autotuning may move them).
  *h->mutable_program() = last.program();
  last.FillMachine(h->mutable_machine());
  if (imports.front()->start_unix_ns() > 0) h->set_start_unix_ns(imports.front()->start_unix_ns());
  h->set_wait_traced(false);
  schema::ImportInfo* info = h->mutable_imported();
  info->set_format(kFormat);
  for (const auto& in : inputs) info->add_files(in.path);
  info->set_thread_cpu(use_clock);
  info->set_file_sizes_known(last.file_sizes_known());
  if (!use_clock) {
    info->add_notes("the dump records no per-thread CPU time (aggregate_processing_time_clock): CPU is the wall time "
                    "of each op's own work, an upper bound");
  }
  std::set<std::string> seen;
  for (const auto& note : last.notes()) {
    if (seen.insert(note).second) info->add_notes(Printable(note));
  }
  std::vector<std::optional<double>> seconds;
  for (const auto& imp : imports) {
    PLUMBER_ASSIGN_OR_RETURN(*trace.add_snapshots(), imp->Counters(use_clock));
    seconds.push_back(imp->SourceSeconds());
  }
  PLUMBER_RETURN_IF_ERROR(PlaceSnapshotsInTime(inputs, options, seconds, &trace));
  return trace;
}

}  // namespace plumber
