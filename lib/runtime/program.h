// The runtime graph of a pipeline: every node of a validated
// schema::Pipeline built into its Dataset, sharing one counters registry.
// Interleave functions are built once and instantiated per input element.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/env.h"
#include "pipeline.pb.h"
#include "runtime/datasets.h"
#include "runtime/stats.h"

namespace plumber::runtime {

class Program {
 public:
  // `pipeline` must be valid (ValidatePipeline); parameters the runtime
  // cannot honour are still reported, naming the node. Relative paths
  // resolve against ctx.base_dir.
  static StatusOr<std::unique_ptr<Program>> Build(const schema::Pipeline& pipeline, const BuildContext& ctx);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const DatasetPtr& output() const { return output_; }
  // Null when no such node.
  DatasetPtr Find(const std::string& name) const;
  StatsRegistry& stats() { return stats_; }
  const StatsRegistry& stats() const { return stats_; }

 private:
  Program() = default;
  StatusOr<DatasetPtr> BuildNode(const std::string& name, const BuildContext& ctx, int depth);

  std::map<std::string, const schema::Node*> nodes_;
  std::map<std::string, DatasetPtr> built_;
  StatsRegistry stats_;
  DatasetPtr output_;
  schema::Pipeline pipeline_;
};

}  // namespace plumber::runtime
