// Reading one tf.data model dump (ModelProto, map or nested form, binary or
// text) into one flat, checked shape: nodes by id, each with its input ids,
// forming a tree under the output node. Every number the importer later
// uses has been range-checked here, so tf_model_import.cc never meets a
// negative count, a cycle or a dangling id. Internal to lib/traceio.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace plumber::tfmodel {

// The largest count or id accepted: beyond it a double (as the analysis
// computes) no longer holds every integer.
inline constexpr int64_t kMaxExact = int64_t{1} << 53;
// The longest time accepted, ns: 36 years of one node's threads.
inline constexpr int64_t kMaxTimeNs = int64_t{1} << 60;
// More nodes than any real pipeline has; a guard against crafted files.
inline constexpr size_t kMaxNodes = 100000;

struct Node {
  int64_t id = 0;
  // The iterator's type as TensorFlow named it, e.g. "ParallelMapV2".
  std::string type;
  int64_t buffered_bytes = 0;
  int64_t buffered_elements = 0;
  int64_t bytes_consumed = 0;
  int64_t bytes_produced = 0;
  int64_t num_elements = 0;
  int64_t processing_time_ns = 0;
  int node_class = 0;
  // Input elements per output element (KNOWN_RATIO nodes); 0 when absent.
  double ratio = 0;
  // Parameters' values in use (state_value), by name; checked finite.
  std::map<std::string, double> parameters;
  std::vector<int64_t> inputs;
};

enum class Form { kMap, kNested };

struct Model {
  Form form = Form::kMap;
  bool text = false;
  std::map<int64_t, Node> nodes;
  int64_t output = 0;
  // optimization_params, when the dump has them.
  bool has_optimization_params = false;
  int algorithm = 0;
  // For a text dump, the algorithm as the file named it.
  std::string algorithm_name;
  int64_t cpu_budget = 0;
  int64_t ram_budget = 0;
  // Microseconds between the consumer's GetNext calls (map form, 2.14+).
  std::vector<uint64_t> gap_times_us;
  std::string dataset_name;
};

// True when the bytes are a model dump of either form and encoding (see
// LooksLikeTfModel in tf_model_import.h for how strict that is).
bool Detect(std::string_view bytes);

// Parses and checks one dump; errors are InvalidArgument "<path>: <place>:
// <what>", the place being a node id and field, or a line and column of a
// text dump.
StatusOr<Model> Parse(std::string_view bytes, const std::string& path);

}  // namespace plumber::tfmodel
