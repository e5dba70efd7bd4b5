// The dataset ops: one factory per row of the op table
// (lib/pipeline/op_table.h). A factory gets a node whose parameters the
// row's check has passed (the program graph is validated) and returns the
// immutable Dataset; the iterators hold all per-pass state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "pipeline.pb.h"
#include "pipeline/op_table.h"
#include "runtime/dataset.h"

namespace plumber::runtime {

// What building a dataset may consult.
struct BuildContext {
  Env* env = nullptr;
  // Relative paths in parameters resolve against this directory (the
  // pipeline file's); empty means the working directory.
  std::string base_dir;
};

// A node's already-built dependencies.
struct NodeDeps {
  std::vector<DatasetPtr> inputs;
  // interleave only: the function's root dataset.
  DatasetPtr function;
};

using DatasetFactory = StatusOr<DatasetPtr> (*)(const schema::Node& node, NodeCounters* counters, NodeDeps deps,
                                                const BuildContext& ctx);

// Null for an op the runtime does not implement.
DatasetFactory FindDatasetFactory(const OpDef& op);

// Factories, by file: sources.cc.
StatusOr<DatasetPtr> MakeRangeDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeListFilesDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeTFRecordDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeTextLineDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
// transforms.cc.
StatusOr<DatasetPtr> MakeMapDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeFilterDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeShuffleDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeRepeatDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeBatchDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakePaddedBatchDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeTakeDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeSkipDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakeCacheDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
// parallel.cc.
StatusOr<DatasetPtr> MakeInterleaveDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);
StatusOr<DatasetPtr> MakePrefetchDataset(const schema::Node&, NodeCounters*, NodeDeps, const BuildContext&);

}  // namespace plumber::runtime
