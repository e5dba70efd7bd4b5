// Building the runtime graph and the table of dataset factories.
#include "runtime/program.h"

#include <array>
#include <utility>

#include "traceio/pipeline_io.h"

namespace plumber::runtime {
namespace {

constexpr std::array<std::pair<std::string_view, DatasetFactory>, 15> kFactories = {{
    {"range", &MakeRangeDataset},
    {"list_files", &MakeListFilesDataset},
    {"tfrecord", &MakeTFRecordDataset},
    {"text_line", &MakeTextLineDataset},
    {"map", &MakeMapDataset},
    {"filter", &MakeFilterDataset},
    {"interleave", &MakeInterleaveDataset},
    {"shuffle", &MakeShuffleDataset},
    {"repeat", &MakeRepeatDataset},
    {"batch", &MakeBatchDataset},
    {"padded_batch", &MakePaddedBatchDataset},
    {"prefetch", &MakePrefetchDataset},
    {"cache", &MakeCacheDataset},
    {"take", &MakeTakeDataset},
    {"skip", &MakeSkipDataset},
}};

}  // namespace

DatasetFactory FindDatasetFactory(std::string_view op) {
  for (const auto& [name, f] : kFactories) {
    if (name == op) return f;
  }
  return nullptr;
}

StatusOr<std::unique_ptr<Program>> Program::Build(const schema::Pipeline& pipeline, const BuildContext& ctx) {
  std::unique_ptr<Program> p(new Program());
  p->pipeline_ = pipeline;
  for (const auto& n : p->pipeline_.nodes()) p->nodes_[n.name()] = &n;
  PLUMBER_ASSIGN_OR_RETURN(p->output_, p->BuildNode(OutputNodeName(p->pipeline_), ctx, 0));
  return p;
}

DatasetPtr Program::Find(const std::string& name) const {
  auto it = built_.find(name);
  return it == built_.end() ? nullptr : it->second;
}

StatusOr<DatasetPtr> Program::BuildNode(const std::string& name, const BuildContext& ctx, int depth) {
  if (auto it = built_.find(name); it != built_.end()) return it->second;
  // Every level is a nested GetNext call per element, so depth is stack:
  // 1,000 levels is far beyond real pipelines and well inside a thread's
  // 8 MB. Validation rejects cycles; this also guards an unvalidated one.
  constexpr int kMaxDepth = 1000;
  if (depth > kMaxDepth) {
    return Status::InvalidArgument("node '" + name + "': the pipeline is more than " + std::to_string(kMaxDepth) +
                                   " nodes deep (or cyclic); the runtime runs at most " +
                                   std::to_string(kMaxDepth));
  }
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return Status::InvalidArgument("no node named '" + name + "'");
  const schema::Node& node = *it->second;
  DatasetFactory factory = FindDatasetFactory(node.op());
  if (factory == nullptr) return Status::Unimplemented("node '" + name + "': op '" + node.op() + "' is not implemented");
  NodeDeps deps;
  for (const auto& in : node.inputs()) {
    PLUMBER_ASSIGN_OR_RETURN(DatasetPtr d, BuildNode(in, ctx, depth + 1));
    deps.inputs.push_back(std::move(d));
  }
  if (node.op() == "interleave") {
    PLUMBER_ASSIGN_OR_RETURN(deps.function, BuildNode(node.interleave().function(), ctx, depth + 1));
  }
  NodeCounters* counters = stats_.Get(name);
  auto made = factory(node, counters, std::move(deps), ctx);
  if (!made.ok()) return made.status().WithContext("node '" + name + "'");
  DatasetPtr d = std::move(made).value();
  counters->parallelism = d->Parallelism();
  counters->buffer_capacity = d->BufferCapacity();
  const int64_t card = d->Cardinality();
  if (card != kUnknownCardinality) counters->cardinality = card;
  built_[name] = d;
  return d;
}

}  // namespace plumber::runtime
