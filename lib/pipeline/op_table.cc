// The dataset op rows of op_table.h: for each op, its checks, cardinality
// rule, threads and parameter accessors, then the table itself.
#include "pipeline/op_table.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "pipeline/param_check.h"
#include "pipeline/udf_table.h"

namespace plumber {
namespace {

using PC = schema::Node::ParamsCase;
using Node = schema::Node;

Cardinality Preserves(const Node&, CardinalityInputs& in) { return in.Input(0); }
Cardinality FromFiles(const Node&, CardinalityInputs& in) { return in.FromFiles(); }

// A pool of p workers (parallel map, parallel batch) takes turns pulling
// the input and does the work on its own threads; at p = 1 it runs inline.
ThreadUse Pool(int p) {
  if (p < 2) return {};
  return {p, Placement::kOwnThreads, Placement::kOwnThreads, Placement::kConsumerThread};
}

// ---- sources ---------------------------------------------------------------

void CheckRange(const Node& n, ParamChecker& c) {
  if (n.range().has_step() && n.range().step() == 0) c.Add("range.step", "must not be 0");
}
Cardinality RangeCardinality(const Node& n, CardinalityInputs&) {
  const auto& p = n.range();
  const int64_t step = p.has_step() ? p.step() : 1;
  const double span = static_cast<double>(p.stop()) - static_cast<double>(p.start());
  const double count = step == 0 ? 0 : std::ceil(span / static_cast<double>(step));
  return Cardinality::Exact(std::max(0.0, count));
}

void CheckListFiles(const Node& n, ParamChecker& c) {
  if (n.list_files().files().empty() && n.list_files().pattern().empty()) {
    c.Add("list_files.files", "give files or a pattern");
  }
}
Cardinality ListFilesCardinality(const Node& n, CardinalityInputs& in) {
  if (const auto matched = in.MatchedFiles()) return Cardinality::Exact(static_cast<double>(*matched));
  if (!n.list_files().pattern().empty()) {
    return Cardinality::Unknown("the glob '" + n.list_files().pattern() + "' of '" + n.name() +
                                "' is not resolved in the trace (no cardinality recorded)");
  }
  return Cardinality::Exact(n.list_files().files_size());
}
bool ListFilesRandom(const Node& n) { return n.list_files().shuffle(); }

void CheckTFRecord(const Node& n, ParamChecker& c) {
  c.Compression("tfrecord.compression", n.tfrecord().compression());
  c.ReaderSource(n.tfrecord().files_size());
}
const NodeFiles* TFRecordFiles(const Node& n) { return &n.tfrecord().files(); }

void CheckTextLine(const Node& n, ParamChecker& c) {
  c.Compression("text_line.compression", n.text_line().compression());
  c.ReaderSource(n.text_line().files_size());
}
const NodeFiles* TextLineFiles(const Node& n) { return &n.text_line().files(); }

// ---- map and filter -----------------------------------------------------------

void CheckMap(const Node& n, ParamChecker& c) {
  if (n.map().has_parallelism()) c.Threads("map.parallelism", n.map().parallelism());
  if (n.map().udf().empty() && !c.imported()) c.Add("map.udf", "a map needs at least one UDF op");
  c.Udf("map.udf", n.map().udf(), /*is_filter=*/false);
  if (!n.map().keep_if().empty()) c.Udf("map.keep_if", n.map().keep_if(), /*is_filter=*/true);
}
int MapParallelism(const Node& n) { return n.map().has_parallelism() ? n.map().parallelism() : 1; }
void SetMapParallelism(Node* n, int p) { n->mutable_map()->set_parallelism(p); }
ThreadUse MapThreads(const Node& n) { return Pool(MapParallelism(n)); }
bool MapRandom(const Node& n) { return UdfIsRandom(n.map().udf()) || UdfIsRandom(n.map().keep_if()); }
const NodeUdfSteps* MapUdf(const Node& n) { return &n.map().udf(); }
void SetMapDeterministic(Node* n, bool d) { n->mutable_map()->set_deterministic(d); }

void CheckFilter(const Node& n, ParamChecker& c) {
  if (n.filter().predicate().empty() && !c.imported()) c.Add("filter.predicate", "a filter needs a predicate");
  c.Udf("filter.predicate", n.filter().predicate(), /*is_filter=*/true);
}
// Data-dependent: the pass ratio measured over the run.
Cardinality FilterCardinality(const Node& n, CardinalityInputs& in) {
  Cardinality c = in.Input(0);
  if (!c.finite() || c.hi <= 0) return c;
  const auto flow = in.MeasuredFlow();
  if (!flow) return Cardinality::Unknown("'" + n.name() + "' consumed nothing, so its pass ratio is unknown");
  c = MapCardinality(c, [&](double x) { return x * flow->produced / flow->consumed; });
  c.exact = false;
  return c;
}
// A map keeps its input's count, unless a fused filter drops some (then,
// as a filter, the pass ratio measured over the run).
Cardinality MapOpCardinality(const Node& n, CardinalityInputs& in) {
  return n.map().keep_if().empty() ? Preserves(n, in) : FilterCardinality(n, in);
}
bool FilterRandom(const Node& n) { return UdfIsRandom(n.filter().predicate()); }
const NodeUdfSteps* FilterUdf(const Node& n) { return &n.filter().predicate(); }

// ---- interleave ------------------------------------------------------------------

int Cycle(const Node& n) { return n.interleave().has_cycle_length() ? n.interleave().cycle_length() : 1; }
void CheckInterleave(const Node& n, ParamChecker& c) {
  const auto& p = n.interleave();
  if (p.function().empty()) {
    c.Add("interleave.function", "an interleave needs the name of its function's root node");
  } else if (!c.IsNode(p.function())) {
    c.Add("interleave.function", "function '" + p.function() + "' is not a node of the pipeline");
  }
  if (p.has_cycle_length()) c.Threads("interleave.cycle_length", p.cycle_length());
  if (p.has_block_length()) c.Min("interleave.block_length", p.block_length(), 1);
  if (p.has_parallelism()) {
    c.Threads("interleave.parallelism", p.parallelism());
    const int cycle = Cycle(n);
    if (p.parallelism() > cycle && cycle >= 1) {
      c.Add("interleave.parallelism",
            "must be at most cycle_length (" + std::to_string(cycle) + "), got " + std::to_string(p.parallelism()));
    }
  }
}
// Datasets opened x elements of each.
Cardinality InterleaveCardinality(const Node&, CardinalityInputs& in) {
  return MultiplyCardinalities(in.Input(0), in.Function());
}
int InterleaveParallelism(const Node& n) {
  return n.interleave().has_parallelism() ? n.interleave().parallelism() : 1;
}
void SetInterleaveParallelism(Node* n, int p) { n->mutable_interleave()->set_parallelism(p); }
// Parallel: the consumer opens the datasets (it pulls the input) and p
// workers read the open datasets; sequential: all on the consumer.
ThreadUse InterleaveThreads(const Node& n) {
  const int p = InterleaveParallelism(n);
  if (p < 2) return {};
  return {p, Placement::kConsumerThread, Placement::kConsumerThread, Placement::kOwnThreads};
}
const std::string& InterleaveFunction(const Node& n) { return n.interleave().function(); }
void SetInterleaveFunction(Node* n, const std::string& f) { n->mutable_interleave()->set_function(f); }
void SetCycle(Node* n, int cycle) { n->mutable_interleave()->set_cycle_length(cycle); }
void SetInterleaveDeterministic(Node* n, bool d) { n->mutable_interleave()->set_deterministic(d); }

// ---- shuffle, repeat ----------------------------------------------------------------

void CheckShuffle(const Node& n, ParamChecker& c) {
  if (!c.imported()) c.Min("shuffle.buffer_size", n.shuffle().buffer_size(), 1);
}
bool Always(const Node&) { return true; }
int64_t ShuffleBuffer(const Node& n) { return n.shuffle().buffer_size(); }
void SetShuffleBuffer(Node* n, int64_t size) { n->mutable_shuffle()->set_buffer_size(size); }

int64_t RepeatCount(const Node& n) { return n.repeat().has_count() ? n.repeat().count() : -1; }
void CheckRepeat(const Node& n, ParamChecker& c) {
  if (n.repeat().has_count()) c.Min("repeat.count", n.repeat().count(), -1);
}
// As tf.data's: repeat(0) is empty whatever its input; repeat(-1) is
// infinite unless its input is empty.
Cardinality RepeatCardinality(const Node& n, CardinalityInputs& in) {
  const int64_t count = RepeatCount(n);
  if (count == 0) return Cardinality::Exact(0);
  Cardinality c = in.Input(0);
  if (count > 0) return MapCardinality(c, [&](double x) { return x * static_cast<double>(count); });
  if (c.finite() && c.hi == 0) return c;
  return Cardinality::Infinite("'" + n.name() + "' repeats forever");
}
bool RepeatRereads(const Node& n) {
  const int64_t count = RepeatCount(n);
  return count == -1 || count > 1;
}

// ---- batch, padded_batch -----------------------------------------------------------

Cardinality Batches(CardinalityInputs& in, int64_t batch_size, bool drop) {
  const double b = static_cast<double>(batch_size);
  return MapCardinality(in.Input(0), [&](double x) { return b < 1 ? x : (drop ? std::floor(x / b) : std::ceil(x / b)); });
}

void CheckBatch(const Node& n, ParamChecker& c) {
  c.Min("batch.batch_size", n.batch().batch_size(), 1);
  if (n.batch().has_parallelism()) c.Threads("batch.parallelism", n.batch().parallelism());
}
Cardinality BatchCardinality(const Node& n, CardinalityInputs& in) {
  return Batches(in, n.batch().batch_size(), n.batch().drop_remainder());
}
int BatchParallelism(const Node& n) { return n.batch().has_parallelism() ? n.batch().parallelism() : 1; }
void SetBatchParallelism(Node* n, int p) { n->mutable_batch()->set_parallelism(p); }
ThreadUse BatchThreads(const Node& n) { return Pool(BatchParallelism(n)); }

void CheckPaddedBatch(const Node& n, ParamChecker& c) {
  c.Min("padded_batch.batch_size", n.padded_batch().batch_size(), 1);
  for (int i = 0; i < n.padded_batch().padded_shape_size(); ++i) {
    c.Min("padded_batch.padded_shape[" + std::to_string(i) + "]", n.padded_batch().padded_shape(i), -1);
  }
}
Cardinality PaddedBatchCardinality(const Node& n, CardinalityInputs& in) {
  return Batches(in, n.padded_batch().batch_size(), n.padded_batch().drop_remainder());
}

// ---- prefetch, cache ---------------------------------------------------------------------

void CheckPrefetch(const Node& n, ParamChecker& c) { c.Min("prefetch.buffer_size", n.prefetch().buffer_size(), 0); }
// One background thread runs the input; buffer_size 0 passes elements
// through on the consumer's thread.
ThreadUse PrefetchThreads(const Node& n) {
  if (n.prefetch().buffer_size() <= 0) return {};
  return {1, Placement::kConsumerThread, Placement::kOwnThreads, Placement::kConsumerThread};
}
int64_t PrefetchBuffer(const Node& n) { return n.prefetch().buffer_size(); }
void SetPrefetchBuffer(Node* n, int64_t size) { n->mutable_prefetch()->set_buffer_size(size); }

// ---- take, skip -----------------------------------------------------------------------------

void CheckTake(const Node& n, ParamChecker& c) { c.Min("take.count", n.take().count(), -1); }
Cardinality TakeCardinality(const Node& n, CardinalityInputs& in) {
  const double count = static_cast<double>(n.take().count());
  Cardinality c = in.Input(0);
  if (count < 0) return c;
  if (c.kind == Cardinality::Kind::kInfinite) return Cardinality::Exact(count);
  return MapCardinality(c, [&](double x) { return std::min(x, count); });
}

void CheckSkip(const Node& n, ParamChecker& c) { c.Min("skip.count", n.skip().count(), -1); }
// As tf.data's: an infinite or unknown input stays so whatever the count
// (skip(-1) over an infinite input never reaches its end); over a finite
// one, skip(-1) leaves nothing.
Cardinality SkipCardinality(const Node& n, CardinalityInputs& in) {
  const double count = static_cast<double>(n.skip().count());
  const Cardinality c = in.Input(0);
  if (!c.finite()) return c;
  if (count < 0) return Cardinality::Exact(0);
  return MapCardinality(c, [&](double x) { return std::max(0.0, x - count); });
}

// ---- opaque (imported programs only) ----------------------------------------

void CheckOpaque(const Node& n, ParamChecker& c) {
  if (!c.imported()) {
    c.Add("opaque", "an opaque node stands for a dataset of an imported program (Pipeline.imported_from); "
                    "plumber cannot run it");
  }
  if (n.opaque().has_parallelism()) c.Threads("opaque.parallelism", n.opaque().parallelism());
}
Cardinality OpaqueCardinality(const Node& n, CardinalityInputs&) {
  return Cardinality::Unknown("'" + n.name() + "' (" + (n.imported_type().empty() ? "opaque" : n.imported_type()) +
                              ") is a dataset plumber has no op for: its cardinality is unknown");
}
int OpaqueParallelism(const Node& n) { return n.opaque().has_parallelism() ? n.opaque().parallelism() : 1; }
ThreadUse OpaqueThreads(const Node& n) { return Pool(OpaqueParallelism(n)); }

// What each op keeps (OpKeeps). A map keeps the order unless it was told
// it need not (deterministic false); a filter, take and skip drop
// elements but leave the rest as they came; a shuffle keeps every element
// and the count, not the order; a repeat keeps each pass's order and its
// elements, not the count; a batch keeps the order of what it stacks, not
// the elements; a prefetch and a cache keep all.
// A fused filter (keep_if) drops elements, so the map no longer keeps
// their count: no move or fusion treats it as a map.
OpKeeps MapKeeps(const Node& n) {
  return {!n.map().has_deterministic() || n.map().deterministic() || MapParallelism(n) <= 1,
          n.map().keep_if().empty(), false};
}
OpKeeps DropsSome(const Node&) { return {true, false, true}; }
OpKeeps ShuffleKeeps(const Node&) { return {false, true, true}; }
OpKeeps RepeatKeeps(const Node&) { return {true, false, true}; }
OpKeeps BatchKeeps(const Node&) { return {true, false, false}; }
OpKeeps KeepsAll(const Node&) { return {true, true, true}; }

const std::array kOps = {
    OpDef{.name = "range", .help = "int64 scalars start..stop by step", .params_case = PC::kRange,
          .check = &CheckRange, .cardinality = &RangeCardinality},
    OpDef{.name = "list_files", .help = "file names from a list or a glob", .params_case = PC::kListFiles,
          .check = &CheckListFiles, .cardinality = &ListFilesCardinality, .random = &ListFilesRandom},
    OpDef{.name = "tfrecord", .help = "records of TFRecord files", .params_case = PC::kTfrecord, .max_inputs = 1,
          .reads_storage = true, .check = &CheckTFRecord, .cardinality = &FromFiles, .files = &TFRecordFiles},
    OpDef{.name = "text_line", .help = "lines of text files", .params_case = PC::kTextLine, .max_inputs = 1,
          .reads_storage = true, .check = &CheckTextLine, .cardinality = &FromFiles, .files = &TextLineFiles},
    OpDef{.name = "map", .help = "applies a UDF to each element", .params_case = PC::kMap, .min_inputs = 1,
          .max_inputs = 1, .check = &CheckMap, .cardinality = &MapOpCardinality, .threads = &MapThreads,
          .parallelism = &MapParallelism, .set_parallelism = &SetMapParallelism, .random = &MapRandom,
          .keeps = &MapKeeps, .udf = &MapUdf, .set_deterministic = &SetMapDeterministic},
    OpDef{.name = "filter", .help = "keeps elements whose predicate holds", .params_case = PC::kFilter,
          .min_inputs = 1, .max_inputs = 1, .moves_above_map = MovesAboveMap::kPredicate, .check = &CheckFilter, .cardinality = &FilterCardinality,
          .random = &FilterRandom, .keeps = &DropsSome, .udf = &FilterUdf},
    OpDef{.name = "interleave", .help = "interleaves datasets opened per input element",
          .params_case = PC::kInterleave, .min_inputs = 1, .max_inputs = 1, .check = &CheckInterleave,
          .cardinality = &InterleaveCardinality, .threads = &InterleaveThreads,
          .parallelism = &InterleaveParallelism, .set_parallelism = &SetInterleaveParallelism,
          .function = &InterleaveFunction, .set_function = &SetInterleaveFunction, .cycle_length = &Cycle,
          .set_cycle_length = &SetCycle, .set_deterministic = &SetInterleaveDeterministic},
    OpDef{.name = "shuffle", .help = "random order within a buffer", .params_case = PC::kShuffle, .min_inputs = 1,
          .max_inputs = 1, .moves_above_map = MovesAboveMap::kPermutes, .check = &CheckShuffle,
          .cardinality = &Preserves, .random = &Always, .keeps = &ShuffleKeeps, .buffer_size = &ShuffleBuffer,
          .set_buffer_size = &SetShuffleBuffer},
    OpDef{.name = "repeat", .help = "repeats its input count times or forever", .params_case = PC::kRepeat,
          .min_inputs = 1, .max_inputs = 1, .check = &CheckRepeat, .cardinality = &RepeatCardinality,
          .rereads_input = &RepeatRereads, .keeps = &RepeatKeeps},
    OpDef{.name = "batch", .help = "stacks consecutive elements", .params_case = PC::kBatch, .min_inputs = 1,
          .max_inputs = 1, .stacks_elements = true, .check = &CheckBatch, .cardinality = &BatchCardinality,
          .threads = &BatchThreads, .parallelism = &BatchParallelism, .set_parallelism = &SetBatchParallelism,
          .keeps = &BatchKeeps},
    OpDef{.name = "padded_batch", .help = "stacks consecutive elements, padding to the longest",
          .params_case = PC::kPaddedBatch, .min_inputs = 1, .max_inputs = 1, .stacks_elements = true,
          .check = &CheckPaddedBatch, .cardinality = &PaddedBatchCardinality, .keeps = &BatchKeeps},
    OpDef{.name = "prefetch", .help = "produces ahead of the consumer", .params_case = PC::kPrefetch,
          .min_inputs = 1, .max_inputs = 1, .prefetches = true, .check = &CheckPrefetch, .cardinality = &Preserves,
          .threads = &PrefetchThreads, .keeps = &KeepsAll, .buffer_size = &PrefetchBuffer,
          .set_buffer_size = &SetPrefetchBuffer},
    OpDef{.name = "cache", .help = "replays the first epoch from memory or a file", .params_case = PC::kCache,
          .min_inputs = 1, .max_inputs = 1, .caches = true, .cardinality = &Preserves, .keeps = &KeepsAll},
    OpDef{.name = "take", .help = "the first count elements", .params_case = PC::kTake, .min_inputs = 1,
          .max_inputs = 1, .moves_above_map = MovesAboveMap::kPrefix, .check = &CheckTake, .cardinality = &TakeCardinality, .keeps = &DropsSome},
    OpDef{.name = "skip", .help = "all but the first count elements", .params_case = PC::kSkip, .min_inputs = 1,
          .max_inputs = 1, .moves_above_map = MovesAboveMap::kSkipsPrefix, .check = &CheckSkip, .cardinality = &SkipCardinality, .keeps = &DropsSome},
    // Measured, analysed and ranked, never rewritten: no parallelism setter.
    OpDef{.name = "opaque", .help = "an imported dataset plumber has no op for (analysed, never rewritten)",
          .params_case = PC::kOpaque, .min_inputs = 0, .max_inputs = 64, .imported_only = true, .check = &CheckOpaque,
          .cardinality = &OpaqueCardinality, .threads = &OpaqueThreads, .parallelism = &OpaqueParallelism},
};

const OpDef* Row(const Node& node) { return FindOp(node.op()); }

}  // namespace

std::span<const OpDef> AllOps() { return kOps; }

const OpDef* FindOp(std::string_view name) {
  for (const auto& row : kOps) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

int NodeParallelism(const Node& node) {
  const OpDef* def = Row(node);
  return def != nullptr && def->parallelism != nullptr ? def->parallelism(node) : 1;
}

bool NodeIsRandom(const Node& node) {
  const OpDef* def = Row(node);
  return def != nullptr && def->random != nullptr && def->random(node);
}

OpKeeps NodeKeeps(const Node& node) {
  const OpDef* def = Row(node);
  return def != nullptr && def->keeps != nullptr ? def->keeps(node) : OpKeeps{};
}

ThreadUse NodeThreads(const Node& node) {
  const OpDef* def = Row(node);
  return def != nullptr && def->threads != nullptr ? def->threads(node) : ThreadUse{};
}

const NodeUdfSteps* NodeUdf(const Node& node) {
  const OpDef* def = Row(node);
  return def != nullptr && def->udf != nullptr ? def->udf(node) : nullptr;
}

const std::string* NodeFunction(const Node& node) {
  const OpDef* def = Row(node);
  if (def == nullptr || def->function == nullptr) return nullptr;
  const std::string& root = def->function(node);
  return root.empty() ? nullptr : &root;
}

void InsertAbove(schema::Pipeline* program, const std::string& target, Node added) {
  for (auto& node : *program->mutable_nodes()) {
    for (auto& in : *node.mutable_inputs()) {
      if (in == target) in = added.name();
    }
    const std::string* function = NodeFunction(node);
    if (function != nullptr && *function == target) Row(node)->set_function(&node, added.name());
  }
  if (program->output() == target) program->set_output(added.name());
  *program->add_nodes() = std::move(added);
}

namespace {

Node OneInput(const std::string& name, std::string_view op, const std::string& input) {
  Node n;
  n.set_name(name);
  n.set_op(std::string(op));
  n.add_inputs(input);
  return n;
}

}  // namespace

Node MakeCacheNode(const std::string& name, const std::string& input, const std::string& filename) {
  Node n = OneInput(name, "cache", input);
  n.mutable_cache()->set_filename(filename);
  return n;
}

Node MakePrefetchNode(const std::string& name, const std::string& input, int64_t buffer_size) {
  Node n = OneInput(name, "prefetch", input);
  n.mutable_prefetch()->set_buffer_size(buffer_size);
  return n;
}

Node MakeRepeatNode(const std::string& name, const std::string& input, int64_t count) {
  Node n = OneInput(name, "repeat", input);
  n.mutable_repeat()->set_count(count);
  return n;
}

std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace plumber
