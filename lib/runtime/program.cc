// Building the runtime graph, and the table of dataset factories: one per
// row of the op table (lib/pipeline/op_table.h), keyed by its params case.
#include "runtime/program.h"

#include <array>
#include <utility>

namespace plumber::runtime {
namespace {

using PC = schema::Node::ParamsCase;

constexpr std::array<std::pair<PC, DatasetFactory>, 15> kFactories = {{
    {PC::kRange, &MakeRangeDataset},
    {PC::kListFiles, &MakeListFilesDataset},
    {PC::kTfrecord, &MakeTFRecordDataset},
    {PC::kTextLine, &MakeTextLineDataset},
    {PC::kMap, &MakeMapDataset},
    {PC::kFilter, &MakeFilterDataset},
    {PC::kInterleave, &MakeInterleaveDataset},
    {PC::kShuffle, &MakeShuffleDataset},
    {PC::kRepeat, &MakeRepeatDataset},
    {PC::kBatch, &MakeBatchDataset},
    {PC::kPaddedBatch, &MakePaddedBatchDataset},
    {PC::kPrefetch, &MakePrefetchDataset},
    {PC::kCache, &MakeCacheDataset},
    {PC::kTake, &MakeTakeDataset},
    {PC::kSkip, &MakeSkipDataset},
}};

// Every level is a nested GetNext call per element, so depth is stack:
// 1,000 levels is far beyond real pipelines and well inside a thread's
// 8 MB.
constexpr int kMaxDepth = 1000;

}  // namespace

DatasetFactory FindDatasetFactory(const OpDef& op) {
  for (const auto& [params, f] : kFactories) {
    if (params == op.params_case) return f;
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
    NodeCounters* counters = p->stats_.Get(name);
    auto made = factory(graph.node(i), counters, std::move(deps), ctx);
    if (!made.ok()) return made.status().WithContext("node '" + name + "'");
    DatasetPtr d = std::move(made).value();
    counters->parallelism = d->Parallelism();
    counters->buffer_capacity = d->BufferCapacity();
    const int64_t card = d->Cardinality();
    if (card != kUnknownCardinality) counters->cardinality = card;
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
