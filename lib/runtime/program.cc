// Building the runtime graph; the dataset factory of each row of the op
// table (lib/pipeline/op_table.h), keyed by its params case; and the
// datasets' cardinality, asked of the row's rule.
#include "runtime/program.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace plumber::runtime {
namespace {

using PC = schema::Node::ParamsCase;

// What the op table's cardinality rule sees of a dataset being built: its
// inputs' and function's cardinalities as the build recorded them, and no
// trace (nothing has run, so no records per file and no measured flow).
// The runtime thus answers by the rule the analysis uses, not by a second
// one of its own.
class BuiltInputs final : public CardinalityInputs {
 public:
  BuiltInputs(const Dataset& self, const std::vector<DatasetPtr>& inputs, const DatasetPtr& function)
      : self_(self), inputs_(inputs), function_(function) {}

  Cardinality Input(int k) override {
    if (k < 0 || k >= static_cast<int>(inputs_.size())) return Cardinality::Unknown("no input");
    return FromRuntime(*inputs_[static_cast<size_t>(k)]);
  }
  Cardinality Function() override {
    return function_ ? FromRuntime(*function_) : Cardinality::Unknown("no function");
  }
  Cardinality FromFiles() override {
    return Cardinality::Unknown("'" + self_.name() + "' has read no file yet, so its records per file are unknown");
  }
  std::optional<Flow> MeasuredFlow() override { return std::nullopt; }
  std::optional<int64_t> MatchedFiles() override { return self_.MatchedFiles(); }

 private:
  static Cardinality FromRuntime(const Dataset& d) {
    const int64_t c = d.Cardinality();
    if (c == kInfiniteCardinality) return Cardinality::Infinite("'" + d.name() + "' is infinite");
    if (c < 0) return Cardinality::Unknown("the cardinality of '" + d.name() + "' is unknown");
    return Cardinality::Exact(static_cast<double>(c));
  }

  const Dataset& self_;
  const std::vector<DatasetPtr>& inputs_;
  const DatasetPtr& function_;
};

// nullopt for unknown (and for an estimate, which the runtime never makes:
// it has no trace to estimate from).
std::optional<int64_t> ToRuntime(const Cardinality& c) {
  if (c.kind == Cardinality::Kind::kInfinite) return kInfiniteCardinality;
  // 2^63 and above do not fit; no real pass is that long.
  if (!c.finite() || !c.exact || !(c.value < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(std::llround(c.value));
}

// Every level is a nested GetNext call per element, so depth is stack:
// 1,000 levels is far beyond real pipelines and well inside a thread's
// 8 MB.
constexpr int kMaxDepth = 1000;

}  // namespace

// A switch over every params case and no default: -Wswitch (an error
// here) fails the build when schemas/pipeline.proto gains an op's params
// that no case handles, so there is no list to keep in step by hand; the
// registry test fails for a row of the op table without a factory.
DatasetFactory FindDatasetFactory(const OpDef& op) {
  switch (op.params_case) {
    case PC::kRange: return &MakeRangeDataset;
    case PC::kListFiles: return &MakeListFilesDataset;
    case PC::kTfrecord: return &MakeTFRecordDataset;
    case PC::kTextLine: return &MakeTextLineDataset;
    case PC::kMap: return &MakeMapDataset;
    case PC::kFilter: return &MakeFilterDataset;
    case PC::kInterleave: return &MakeInterleaveDataset;
    case PC::kShuffle: return &MakeShuffleDataset;
    case PC::kRepeat: return &MakeRepeatDataset;
    case PC::kBatch: return &MakeBatchDataset;
    case PC::kPaddedBatch: return &MakePaddedBatchDataset;
    case PC::kPrefetch: return &MakePrefetchDataset;
    case PC::kCache: return &MakeCacheDataset;
    case PC::kTake: return &MakeTakeDataset;
    case PC::kSkip: return &MakeSkipDataset;
    // Stands for a dataset of an imported program, which never runs here.
    case PC::kOpaque: return nullptr;
    case PC::PARAMS_NOT_SET: return nullptr;
  }
  return nullptr;
}

StatusOr<std::unique_ptr<Program>> Program::Build(const ProgramGraph& graph, const BuildContext& ctx) {
  if (!graph.program().imported_from().empty()) {
    return Status::InvalidArgument("the program was imported from " + graph.program().imported_from() +
                                   ": it describes a pipeline that ran elsewhere and cannot be run here");
  }
  std::unique_ptr<Program> p(new Program());
  const int n = graph.size();
  // Children before parents, so every dependency is built when needed.
  std::vector<DatasetPtr> built(n);
  std::vector<int> height(n, 0);
  for (int i : graph.topological_order()) {
    const std::string& name = graph.name(i);
    for (int j : graph.children(i)) height[i] = std::max(height[i], height[j] + 1);
    if (height[i] > kMaxDepth) {
      return Status::InvalidArgument("node '" + name + "': the pipeline is more than " + std::to_string(kMaxDepth) +
                                     " nodes deep; the runtime runs at most " + std::to_string(kMaxDepth));
    }
    DatasetFactory factory = FindDatasetFactory(graph.op(i));
    if (factory == nullptr) {
      return Status::Unimplemented("node '" + name + "': op '" + graph.node(i).op() + "' is not implemented");
    }
    NodeDeps deps;
    for (int j : graph.inputs(i)) deps.inputs.push_back(built[j]);
    if (graph.function(i) >= 0) deps.function = built[graph.function(i)];
    const NodeDeps kept = deps;
    NodeCounters* counters = p->stats_.Get(name);
    auto made = factory(graph.node(i), counters, std::move(deps), ctx);
    if (!made.ok()) return made.status().WithContext("node '" + name + "'");
    DatasetPtr d = std::move(made).value();
    counters->parallelism = d->Parallelism();
    counters->buffer_capacity = d->BufferCapacity();
    BuiltInputs inputs(*d, kept.inputs, kept.function);
    counters->cardinality = ToRuntime(graph.op(i).cardinality(graph.node(i), inputs));
    built[i] = d;
    p->built_[name] = std::move(d);
  }
  p->output_ = built[graph.output()];
  return p;
}

DatasetPtr Program::Find(const std::string& name) const {
  auto it = built_.find(name);
  return it == built_.end() ? nullptr : it->second;
}

}  // namespace plumber::runtime
