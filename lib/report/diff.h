// What changed between two traces or two pipelines (`plumber diff`): nodes
// added and removed, parameters changed (any field of a node, UDF arguments
// included), and for traces the per-node rates and costs, the bottleneck
// and the predicted (best parallelism), as-traced and observed throughput. A
// trace and a pipeline can be compared too: then only their programs are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analysis.h"
#include "base/env.h"
#include "base/status.h"
#include "pipeline.pb.h"

namespace plumber::report {

struct FieldChange {
  std::string field;  // "map.parallelism", "inputs[0]", "map.udf[1].args.micros"
  std::string a;      // JSON text of the value, "-" when absent
  std::string b;
};

struct NodeFieldChanges {
  std::string node;
  std::vector<FieldChange> changes;
};

// A quantity on both sides; nullopt means unbounded or unknown.
struct Compared {
  std::optional<double> a;
  std::optional<double> b;
  // b / a - 1, when both are finite and a is not 0.
  std::optional<double> change() const;
};

struct NodeMetricsDiff {
  std::string node;
  Compared visit_ratio;
  Compared cpu_seconds_per_minibatch;
  Compared rate_per_core;
  Compared bytes_per_minibatch;
  Compared cores_used;
};

struct Diff {
  std::string a;  // file names
  std::string b;
  std::string a_kind;  // "trace" or "pipeline"
  std::string b_kind;
  std::vector<std::string> added;    // in b only, b's order
  std::vector<std::string> removed;  // in a only, a's order
  std::vector<NodeFieldChanges> changed;
  // Shape changes, told as such rather than as inputs rewired: `node`
  // moved above `other` (it reads what `other` read, and `other` reads
  // it), map `node` fused into map `other` (its steps run first there), or
  // filter `node` fused into map `other` (its predicate runs last there).
  // Their rewired inputs and the fused map's steps are not in `changed`.
  struct Shape {
    std::string node;
    std::string other;
    bool filter = false;  // a fused filter
  };
  std::vector<Shape> moved;
  std::vector<Shape> fused;
  // Only when both sides are traces.
  bool has_metrics = false;
  std::vector<NodeMetricsDiff> nodes;  // nodes in both, b's order
  std::string bottleneck_a;
  std::string bottleneck_b;
  Compared predicted_throughput;
  // The prediction for each pipeline exactly as configured
  // (Analysis::as_traced) and what holds it ("" when unbounded).
  Compared as_traced_throughput;
  std::string as_traced_bottleneck_a;
  std::string as_traced_bottleneck_b;
  Compared observed_throughput;
  Compared cpu_seconds_per_minibatch;

  bool programs_equal() const {
    return added.empty() && removed.empty() && changed.empty() && moved.empty() && fused.empty();
  }
};

// The program diff alone.
Diff DiffPrograms(const schema::Pipeline& a, const schema::Pipeline& b);
// Programs and models of two analysed traces.
Diff DiffTraces(const analysis::Analysis& a, const analysis::Analysis& b);

// Reads each file as a trace or a pipeline (by content) and compares them.
// Analysis warnings are appended to `warnings` when given.
StatusOr<Diff> DiffFiles(Env* env, const std::string& a, const std::string& b,
                         std::vector<std::string>* warnings = nullptr);

std::string FormatDiffText(const Diff& diff);
std::string FormatDiffJson(const Diff& diff);

}  // namespace plumber::report
