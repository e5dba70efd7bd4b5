// The runtime graph of a pipeline: every node of a validated ProgramGraph
// built into its Dataset, sharing one counters registry. Interleave
// functions are built once and instantiated per input element.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/env.h"
#include "pipeline/program_graph.h"
#include "runtime/datasets.h"
#include "runtime/stats.h"

namespace plumber::runtime {

class Program {
 public:
  // Parameters were checked when `graph` was built; what the runtime alone
  // can find (a glob that matches nothing, a UDF argument out of range) is
  // reported naming the node. Relative paths resolve against ctx.base_dir.
  static StatusOr<std::unique_ptr<Program>> Build(const ProgramGraph& graph, const BuildContext& ctx);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const DatasetPtr& output() const { return output_; }
  // Null when no such node.
  DatasetPtr Find(const std::string& name) const;
  StatsRegistry& stats() { return stats_; }
  const StatsRegistry& stats() const { return stats_; }

 private:
  Program() = default;

  std::map<std::string, DatasetPtr> built_;
  StatsRegistry stats_;
  DatasetPtr output_;
};

}  // namespace plumber::runtime
