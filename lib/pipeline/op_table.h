// The op table: everything plumber knows about each dataset op without
// running it, one row per op. Validation, the program graph, the analysis,
// the rewrite and the runtime's factory ask the row (its parameters check,
// parallelism, threads, randomness, cardinality rule, storage, function
// edge) instead of comparing op names; outside lib/pipeline no code names
// an op to decide anything. The cardinality rule here is the only one: the
// runtime's datasets report what it says of their inputs. Adding an op:
// docs/architecture.md lists the steps.
//
// Rows describe a node of a valid program; the free functions below also
// accept unknown ops (validate summarises invalid files) and answer as for
// a sequential, deterministic op.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pipeline.pb.h"
#include "pipeline/cardinality.h"

namespace plumber {

class ParamChecker;

// Where a piece of a node's work runs in the runtime.
enum class Placement {
  kConsumerThread,  // on the thread that calls the node's GetNext
  kOwnThreads,      // on threads the node starts for itself
};

// How a configured node uses threads; the thread-group model is built on
// it. The runtime test "the op table's thread use matches the runtime"
// checks every row against what the runtime really does.
struct ThreadUse {
  // Threads the node starts for itself; 0 when everything runs inline.
  int threads = 0;
  // Its own work (the UDF of a map, the copying of a batch).
  Placement work = Placement::kConsumerThread;
  // The nodes it reads as inputs (they run where it pulls them). A pooled
  // stage's workers take turns pulling its input, one at a time.
  Placement inputs = Placement::kConsumerThread;
  // The instances of its function (interleave).
  Placement function = Placement::kConsumerThread;
};

// What an op's cardinality rule may consult: its inputs' cardinalities,
// its function's (per opened dataset), and what the trace measured of the
// node itself. The analysis implements it over the trace, and the runtime
// over its built datasets (so both answer by the same rule).
class CardinalityInputs {
 public:
  virtual ~CardinalityInputs() = default;
  // The k-th input's; Unknown("no input") when there is none.
  virtual Cardinality Input(int k) = 0;
  // The function's per opened dataset; Unknown when the op has none.
  virtual Cardinality Function() = 0;
  // Readers: files per pass x records per file observed in the trace.
  virtual Cardinality FromFiles() = 0;
  // Elements the node produced and consumed over the run; nullopt when it
  // consumed nothing.
  struct Flow {
    double produced = 0;
    double consumed = 0;
  };
  virtual std::optional<Flow> MeasuredFlow() = 0;
  // list_files: how many files its list and pattern resolved to, when
  // something resolved the glob (the runtime does, when it builds the
  // dataset); nullopt otherwise.
  virtual std::optional<int64_t> MatchedFiles() { return std::nullopt; }
};

using NodeFiles = google::protobuf::RepeatedPtrField<std::string>;
using NodeUdfSteps = google::protobuf::RepeatedPtrField<schema::UdfOp>;

// What a dataset op keeps of its input, for the rewrites that move or fuse
// ops past it: the elements' order, their count, and each element as it
// came (the same values, not new ones made from them).
struct OpKeeps {
  bool order = false;
  bool count = false;
  bool elements = false;
};

// How an op may move above a map that feeds it (pipeline/legal_moves.h
// holds the rules).
enum class MovesAboveMap {
  kNever,        // no rule says what crossing it keeps
  kPredicate,    // a filter: when the map writes nothing its predicate reads
  kPrefix,       // a take: it keeps the first elements, their indices unchanged
  kSkipsPrefix,  // a skip: it drops the first elements, shifting the others' indices
  kPermutes,     // a shuffle: its draws follow its seed and buffer, never the elements
};

struct OpDef {
  std::string_view name;
  std::string_view help;
  // The params message the op takes (a node may omit it when every default
  // is wanted); also the key of the runtime's factory.
  schema::Node::ParamsCase params_case;
  int min_inputs = 0;
  int max_inputs = 0;
  // Reads files itself (tfrecord, text_line), so it is charged storage bytes.
  bool reads_storage = false;
  // Replays its input's first pass from memory or a file afterwards.
  bool caches = false;
  // Produces ahead of its consumer into a buffer (buffer_size below).
  bool prefetches = false;
  // Copies many input elements into one output buffer (a batch): while its
  // thread makes the elements, the buffer leaves the core's caches.
  bool stacks_elements = false;
  MovesAboveMap moves_above_map = MovesAboveMap::kNever;
  // Only stands for a dataset of an imported program (opaque): the runtime
  // has no implementation, and the rewrite never touches it.
  bool imported_only = false;

  // Every problem of the node's parameters, reported to the checker with
  // its field. Runs once, when a ProgramGraph is built; the runtime builds
  // only from a ProgramGraph, so it never meets unchecked parameters.
  void (*check)(const schema::Node& node, ParamChecker& checker) = nullptr;
  // The cardinality of one pass (per opened dataset inside a function).
  Cardinality (*cardinality)(const schema::Node& node, CardinalityInputs& in) = nullptr;
  // Threads: null means inline (ThreadUse{}).
  ThreadUse (*threads)(const schema::Node& node) = nullptr;
  // Parallelism in effect; null means 1. With a setter the op can spread
  // its work over several cores (a rewrite knob); without, it is capped at
  // one core.
  int (*parallelism)(const schema::Node& node) = nullptr;
  void (*set_parallelism)(schema::Node* node, int p) = nullptr;
  // Its output order or content is random; null means never.
  bool (*random)(const schema::Node& node) = nullptr;
  // Reads its input more than once per pass of its own (a repeat), so a
  // cache below it is replayed; null means never.
  bool (*rereads_input)(const schema::Node& node) = nullptr;
  // What it keeps of its input; null keeps nothing that can be relied on
  // (a source, an interleave, an opaque op: nothing moves past them).
  OpKeeps (*keeps)(const schema::Node& node) = nullptr;
  // Readers: the files named in the parameters.
  const NodeFiles* (*files)(const schema::Node& node) = nullptr;
  // map and filter: the UDF.
  const NodeUdfSteps* (*udf)(const schema::Node& node) = nullptr;
  // The function edge (interleave): the name of the function's root node,
  // datasets open at once (cycle_length), and their setters.
  const std::string& (*function)(const schema::Node& node) = nullptr;
  void (*set_function)(schema::Node* node, const std::string& root) = nullptr;
  int (*cycle_length)(const schema::Node& node) = nullptr;
  void (*set_cycle_length)(schema::Node* node, int cycle) = nullptr;
  // Ops with a deterministic switch (map, interleave).
  void (*set_deterministic)(schema::Node* node, bool deterministic) = nullptr;
  // Ops with a buffer sized in elements (prefetch, shuffle).
  int64_t (*buffer_size)(const schema::Node& node) = nullptr;
  void (*set_buffer_size)(schema::Node* node, int64_t size) = nullptr;

  bool parallelizable() const { return set_parallelism != nullptr; }
  bool has_function() const { return function != nullptr; }
};

// Every dataset op, in a stable order.
std::span<const OpDef> AllOps();
// nullptr when unknown.
const OpDef* FindOp(std::string_view name);

// Properties of a configured node; an unknown op answers as sequential,
// deterministic, inline, with no function.
int NodeParallelism(const schema::Node& node);
bool NodeIsRandom(const schema::Node& node);
OpKeeps NodeKeeps(const schema::Node& node);
ThreadUse NodeThreads(const schema::Node& node);
// The UDF of a map or filter; null for other ops.
const NodeUdfSteps* NodeUdf(const schema::Node& node);
// The root of the node's function; null when the op has none or the name is
// empty.
const std::string* NodeFunction(const schema::Node& node);

// Puts `added` (whose only input is `target`) between `target` and every
// node that read it, as an input or as an interleave's function, and makes
// it the declared output if `target` was.
void InsertAbove(schema::Pipeline* program, const std::string& target, schema::Node added);

// New nodes the rewrite and the calibration insert.
schema::Node MakeCacheNode(const std::string& name, const std::string& input, const std::string& filename);
schema::Node MakePrefetchNode(const std::string& name, const std::string& input, int64_t buffer_size);
schema::Node MakeRepeatNode(const std::string& name, const std::string& input, int64_t count);

// "a", "b" and "c" -> "a, b, c": for messages that list what is known.
std::string JoinNames(std::span<const std::string_view> names);

}  // namespace plumber
