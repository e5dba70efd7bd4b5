// tf.data's autotuning model dumps as a plumber trace; see tf_model_import.h
// and docs/tf-import.md. tf_model_parse.cc reads and checks each dump; this
// file rebuilds one program from all of them and writes one snapshot each.
//
// A node of the program is identified by its place in the tree, not by its
// TensorFlow id: its parent's place and its input position, where every
// input of an interleave after the first (one per open input dataset, each
// a fresh copy of the function with fresh ids) shares one place, "f". So
// the copies of an interleave's function fold into one function subtree
// with summed counters, as plumber's own traces count them, and the same
// program comes out of every dump of a run even as inputs open and close.
#include "traceio/tf_model_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "base/number_format.h"
#include "base/units.h"
#include "pipeline/param_check.h"
#include "pipeline/program_graph.h"
#include "pipeline/tf_types.h"
#include "traceio/import_time.h"
#include "traceio/tf_model_parse.h"

namespace plumber {
namespace {

using tfmodel::Model;

// What a TensorFlow iterator type becomes in plumber's op table.
enum class Kind {
  kMap, kFilter, kBatch, kPaddedBatch, kPrefetch, kShuffle, kRepeat, kCache, kTake, kSkip, kTfrecord, kTextLine,
  kInterleave, kOpaque,
};

struct TypeMapping {
  Kind kind = Kind::kOpaque;
  // Reads its parallelism from the "parallelism" parameter.
  bool parallel = false;
  // FlatMap: an interleave of one input at a time.
  bool one_at_a_time = false;
};

// *a += b; true on overflow (then *a is unchanged).
bool Add(int64_t* a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(*a, b, &sum)) return true;
  *a = sum;
  return false;
}

// The estimate of a reader's storage bytes: payload plus framing per
// record, saturating (it is an estimate, and must not wrap).
int64_t PlusPerRecord(int64_t bytes, int64_t records, int64_t framing) {
  int64_t extra = 0, sum = 0;
  if (__builtin_mul_overflow(records, framing, &extra) || __builtin_add_overflow(bytes, extra, &sum)) {
    return INT64_MAX;
  }
  return sum;
}

// The type's row in the shared TF type table, in the terms this format's
// parameters are read in; a type without a row is opaque (and may report a
// parallelism).
TypeMapping MapType(const std::string& t) {
  const TfTypeDef* def = FindTfType(t);
  if (def == nullptr) return {Kind::kOpaque, true};
  switch (def->kind) {
    case TfKind::kMap: return {Kind::kMap};
    case TfKind::kParallelMap: return {Kind::kMap, true};
    case TfKind::kFilter: return {Kind::kFilter};
    case TfKind::kBatch: return {Kind::kBatch};
    case TfKind::kParallelBatch:
    case TfKind::kMapAndBatch: return {Kind::kBatch, true};
    case TfKind::kPaddedBatch: return {Kind::kPaddedBatch};
    case TfKind::kPrefetch: return {Kind::kPrefetch};
    case TfKind::kShuffle:
    case TfKind::kShuffleAndRepeat: return {Kind::kShuffle};
    case TfKind::kRepeat: return {Kind::kRepeat};
    case TfKind::kCache:
    case TfKind::kMemoryCache: return {Kind::kCache};
    case TfKind::kTake: return {Kind::kTake};
    case TfKind::kSkip: return {Kind::kSkip};
    case TfKind::kTfRecord: return {Kind::kTfrecord};
    case TfKind::kTextLine: return {Kind::kTextLine};
    case TfKind::kInterleave: return {Kind::kInterleave};
    case TfKind::kParallelInterleave: return {Kind::kInterleave, true};
    case TfKind::kFlatMap: return {Kind::kInterleave, false, true};
  }
  return {Kind::kOpaque, true};
}

const char* OpName(Kind k) {
  switch (k) {
    case Kind::kMap: return "map";
    case Kind::kFilter: return "filter";
    case Kind::kBatch: return "batch";
    case Kind::kPaddedBatch: return "padded_batch";
    case Kind::kPrefetch: return "prefetch";
    case Kind::kShuffle: return "shuffle";
    case Kind::kRepeat: return "repeat";
    case Kind::kCache: return "cache";
    case Kind::kTake: return "take";
    case Kind::kSkip: return "skip";
    case Kind::kTfrecord: return "tfrecord";
    case Kind::kTextLine: return "text_line";
    case Kind::kInterleave: return "interleave";
    case Kind::kOpaque: return "opaque";
  }
  return "opaque";
}

// Counters of one place in one dump, summed over the copies there.
struct PlaceStats {
  bool present = false;
  int64_t num_elements = 0;
  int64_t consumed = 0;  // the inputs' num_elements
  int64_t bytes_produced = 0;
  int64_t bytes_consumed = 0;
  int64_t processing_ns = 0;
  int64_t buffered_elements = 0;
  int64_t buffered_bytes = 0;
  std::map<std::string, double> parameters;  // of the last copy seen
};

// One node of the rebuilt program.
struct Place {
  // The place's key (see Walk) and its number in the order first met.
  std::string key;
  int index = 0;
  // For a stand-in function: the key of its interleave.
  std::string owner;
  std::string type;  // TensorFlow's; empty for a placeholder function
  int64_t first_id = 0;
  size_t first_dump = 0;
  TypeMapping mapping;
  std::vector<std::string> input_keys;  // by position; "" where no dump had one
  bool has_function = false;            // an interleave saw a copy of its function
  size_t max_open = 0;                  // most function copies open at once
  // The latest dump's view, for the program's parameters.
  size_t last_dump = 0;
  int64_t last_id = 0;
  double ratio = 0;
  std::map<std::string, double> parameters;
  std::string name;
};

std::string SafeType(const std::string& t) {
  std::string out;
  for (unsigned char c : t) out += (std::isalnum(c) || c == '_' || c == '-') ? static_cast<char>(c) : '_';
  return out.empty() ? "node" : out;
}

// Printable for a report.
std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  return out;
}

std::string FormIs(const Model& m) {
  return m.form == tfmodel::Form::kMap ? "tf.data autotuning model (map form, TF 2.7+)"
                                       : "tf.data autotuning model (nested form, TF 2.5-2.6)";
}

// The algorithm as recorded, with both readings where the binary numbering
// changed (TF 2.7: HILL_CLIMB 0, GRADIENT_DESCENT 1; 2.8 on: DEFAULT 0,
// HILL_CLIMB 1, GRADIENT_DESCENT 2, MAX_PARALLELISM 3, STAGE_BASED 4).
std::string AlgorithmText(const Model& m) {
  if (!m.has_optimization_params) return "";
  if (!m.algorithm_name.empty()) return m.algorithm_name + " (named in the text dump)";
  const std::string n = std::to_string(m.algorithm);
  if (m.form == tfmodel::Form::kNested) {
    return n + (m.algorithm == 0 ? " (HILL_CLIMB, TF 2.5-2.6 numbering)" : " (GRADIENT_DESCENT, TF 2.5-2.6 numbering)");
  }
  static const char* kNew[] = {"DEFAULT", "HILL_CLIMB", "GRADIENT_DESCENT", "MAX_PARALLELISM", "STAGE_BASED"};
  const bool newer = !m.gap_times_us.empty() || !m.dataset_name.empty();
  if (m.algorithm <= 1 && !newer) {
    return n + " (" + kNew[m.algorithm] + " in TF 2.8+, " + (m.algorithm == 0 ? "HILL_CLIMB" : "GRADIENT_DESCENT") +
           " in TF 2.7)";
  }
  return n + " (" + kNew[m.algorithm] + ", TF 2.8+ numbering" +
         (newer ? std::string("; the dump has ") + (m.dataset_name.empty() ? "gap_times" : "dataset_name") +
                      ", so it is not TF 2.7)"
                : ")");
}

class Importer {
 public:
  Importer(const std::vector<ImportInput>& inputs, const ImportOptions& options) : inputs_(inputs), options_(options) {}

  StatusOr<schema::Trace> Run() {
    for (const auto& in : inputs_) {
      PLUMBER_ASSIGN_OR_RETURN(Model m, tfmodel::Parse(in.bytes, in.path));
      if (!models_.empty() && m.form != models_.front().form) {
        return Status::InvalidArgument(in.path + ": " + FormIs(m) + ", but " + inputs_.front().path + " is a " +
                                       FormIs(models_.front()) + "; dumps imported together must come from one run");
      }
      models_.push_back(std::move(m));
    }
    stats_.resize(models_.size());
    for (size_t d = 0; d < models_.size(); ++d) PLUMBER_RETURN_IF_ERROR(Walk(d));
    AddPlaceholderFunctions();
    Name();
    schema::Trace trace;
    PLUMBER_RETURN_IF_ERROR(BuildProgram(trace.mutable_header()->mutable_program()));
    FillHeader(trace.mutable_header());
    for (size_t d = 0; d < models_.size(); ++d) FillSnapshot(d, trace.mutable_header()->program(), trace.add_snapshots());
    NoteBackwards(trace);
    // In the order found (most important first); duplicates go.
    schema::ImportInfo* info = trace.mutable_header()->mutable_imported();
    for (const auto& note : notes_) {
      if (std::find(info->notes().begin(), info->notes().end(), note) == info->notes().end()) info->add_notes(note);
    }
    PLUMBER_RETURN_IF_ERROR(PlaceSnapshotsInTime(inputs_, options_, {}, &trace));
    auto graph = ProgramGraph::Build(trace.header().program(), inputs_.front().path + " (the imported program)");
    // Unforeseen input the checks above let through; never a crash later.
    if (!graph.ok()) return graph.status();
    return trace;
  }

 private:
  // A child's key is its parent's number and its input position, or "f"
  // for every copy of an interleave's function: short whatever the depth
  // (a key spelling the whole path would grow quadratically on a chain).
  static std::string FunctionKey(const Place& p) { return std::to_string(p.index) + ".f"; }

  // Places every node of dump d, breadth first from the output.
  Status Walk(size_t d) {
    const Model& m = models_[d];
    const std::string& path = inputs_[d].path;
    std::deque<std::pair<int64_t, std::string>> todo = {{m.output, "r"}};
    while (!todo.empty()) {
      auto [id, key] = todo.front();
      todo.pop_front();
      const tfmodel::Node& n = m.nodes.at(id);
      auto [it, fresh] = places_.try_emplace(key);
      Place& p = it->second;
      if (fresh) {
        p.key = key;
        p.index = static_cast<int>(order_.size());
        p.type = n.type;
        p.first_id = id;
        p.first_dump = d;
        p.mapping = MapType(n.type);
        order_.push_back(key);
      } else if (p.type != n.type) {
        return Status::InvalidArgument(path + ": node id " + std::to_string(id) + " (" + n.type + ") stands where " +
                                       inputs_[p.first_dump].path + " has node id " + std::to_string(p.first_id) +
                                       " (" + p.type + "): the dumps (or an interleave's inputs) are not of one "
                                       "pipeline");
      }
      p.last_dump = d;
      p.last_id = id;
      p.ratio = n.ratio;
      p.parameters = n.parameters;
      PlaceStats& s = stats_[d][key];
      s.present = true;
      // Each term is range-checked, but copies and inputs add up: checked.
      bool overflow = Add(&s.num_elements, n.num_elements) || Add(&s.bytes_produced, n.bytes_produced) ||
                      Add(&s.bytes_consumed, n.bytes_consumed) || Add(&s.processing_ns, n.processing_time_ns) ||
                      Add(&s.buffered_elements, n.buffered_elements) || Add(&s.buffered_bytes, n.buffered_bytes);
      s.parameters = n.parameters;
      size_t open = 0;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const tfmodel::Node& in = m.nodes.at(n.inputs[k]);
        overflow = overflow || Add(&s.consumed, in.num_elements);
        std::string child;
        if (p.mapping.kind == Kind::kInterleave && k >= 1) {
          child = FunctionKey(p);
          p.has_function = true;
          ++open;
        } else {
          child = std::to_string(p.index) + "." + std::to_string(k);
          if (p.input_keys.size() <= k) p.input_keys.resize(k + 1);
          p.input_keys[k] = child;
        }
        todo.emplace_back(n.inputs[k], child);
      }
      p.max_open = std::max(p.max_open, open);
      if (overflow) {
        return Status::InvalidArgument(path + ": node id " + std::to_string(id) + " (" + n.type +
                                       "): its counters summed with its inputs' or other copies' pass 2^63");
      }
    }
    return Status::OK();
  }

  // An interleave none of whose inputs was open in any dump still needs a
  // function node to be a valid program: an opaque one without counters.
  void AddPlaceholderFunctions() {
    std::vector<std::string> keys = order_;
    for (const auto& key : keys) {
      Place& p = places_.at(key);
      if (p.mapping.kind != Kind::kInterleave || p.has_function) continue;
      Place f;
      f.key = FunctionKey(p);
      f.index = static_cast<int>(order_.size());
      f.owner = key;
      f.mapping = {Kind::kOpaque, false};
      f.first_id = p.first_id;
      places_.emplace(f.key, f);
      order_.push_back(f.key);
      p.has_function = true;
      notes_.push_back("interleave " + SafeType(p.type) + "." + std::to_string(p.first_id) +
                       " had no input open in any dump, so its function is unknown: an empty opaque node stands for "
                       "it");
    }
  }

  // "<Type>.<id>" with the first id seen; unique, and valid in a pipeline.
  void Name() {
    std::set<std::string> used;
    for (const auto& key : order_) {
      Place& p = places_.at(key);
      std::string base = !p.owner.empty() ? places_.at(p.owner).name + ".function"
                                        : SafeType(p.type) + "." + std::to_string(p.first_id);
      std::string name = base;
      for (int i = 2; used.count(name); ++i) name = base + "_" + std::to_string(i);
      used.insert(name);
      p.name = name;
    }
  }

  std::string At(const Place& p) const {
    return inputs_[p.last_dump].path + ": node id " + std::to_string(p.last_id) + " (" + p.type + ")";
  }

  // A parallelism or cycle parameter as the op table accepts it.
  StatusOr<int> Threads(const Place& p, const char* param, double v) const {
    if (!(v >= 1 && v <= static_cast<double>(kMaxParallelism))) {
      return Status::InvalidArgument(At(p) + ": parameter '" + param + "' is " + std::to_string(v) +
                                     ", out of range (1 to " + std::to_string(kMaxParallelism) + ")");
    }
    return static_cast<int>(std::lround(v));
  }

  StatusOr<int64_t> BufferSize(const Place& p, double v) const {
    if (!(v >= 0 && v <= 2147483647.0)) {
      return Status::InvalidArgument(At(p) + ": parameter 'buffer_size' is " + std::to_string(v) +
                                     ", out of range (0 to 2^31)");
    }
    return static_cast<int64_t>(std::llround(v));
  }

  std::optional<double> Param(const Place& p, const std::string& name) const {
    auto it = p.parameters.find(name);
    if (it == p.parameters.end()) return std::nullopt;
    return it->second;
  }

  // Elements per batch: the model's ratio, else what the counters show.
  int64_t BatchSize(const Place& p) {
    if (p.ratio >= 1) return std::llround(p.ratio);
    const PlaceStats& s = stats_[p.last_dump].at(p.key);
    const int64_t estimate =
        s.num_elements > 0 ? std::max<int64_t>(1, std::llround(static_cast<double>(s.consumed) / s.num_elements)) : 1;
    notes_.push_back(p.name + ": the dump has no batch size (ratio); taken as " + std::to_string(estimate) +
                     ", the elements consumed per batch produced");
    return estimate;
  }

  Status BuildNode(const Place& p, schema::Node* n) {
    n->set_name(p.name);
    n->set_imported_type(p.type.empty() ? "(unknown: no input open in any dump)" : p.type);
    for (const auto& k : p.input_keys) {
      if (!k.empty()) n->add_inputs(places_.at(k).name);
    }
    Kind kind = p.mapping.kind;
    // A node whose input count the op does not allow keeps its measurements
    // as an opaque node rather than failing the import.
    const OpDef* def = FindOp(OpName(kind));
    const int ins = n->inputs_size();
    if (kind != Kind::kOpaque && (def == nullptr || ins < def->min_inputs || ins > def->max_inputs)) {
      notes_.push_back(p.name + " (" + p.type + ") has " + FormatCount(ins, "input", "inputs") + ", which plumber's " +
                       OpName(kind) + " does not take: kept as an opaque node");
      if (kind == Kind::kInterleave) n->add_inputs(places_.at(FunctionKey(p)).name);
      kind = Kind::kOpaque;
    }
    n->set_op(OpName(kind));
    const auto parallelism = Param(p, "parallelism");
    switch (kind) {
      case Kind::kMap:
        n->mutable_map();
        if (p.mapping.parallel && parallelism) {
          PLUMBER_ASSIGN_OR_RETURN(int v, Threads(p, "parallelism", *parallelism));
          n->mutable_map()->set_parallelism(v);
        }
        break;
      case Kind::kFilter: n->mutable_filter(); break;
      case Kind::kBatch:
        n->mutable_batch()->set_batch_size(BatchSize(p));
        if (p.mapping.parallel && parallelism) {
          PLUMBER_ASSIGN_OR_RETURN(int v, Threads(p, "parallelism", *parallelism));
          n->mutable_batch()->set_parallelism(v);
        }
        break;
      case Kind::kPaddedBatch: n->mutable_padded_batch()->set_batch_size(BatchSize(p)); break;
      case Kind::kPrefetch: {
        int64_t size = 0;
        if (auto b = Param(p, "buffer_size")) {
          PLUMBER_ASSIGN_OR_RETURN(size, BufferSize(p, *b));
        } else {
          int64_t most = 0;
          for (const auto& d : stats_) {
            if (auto it = d.find(p.key); it != d.end()) most = std::max(most, it->second.buffered_elements);
          }
          size = std::max<int64_t>(1, most);
          notes_.push_back(p.name + ": the dump has no buffer_size; taken as " + std::to_string(size) +
                           ", the most elements seen buffered");
        }
        n->mutable_prefetch()->set_buffer_size(size);
        break;
      }
      case Kind::kShuffle:
        if (auto b = Param(p, "buffer_size")) {
          PLUMBER_ASSIGN_OR_RETURN(int64_t size, BufferSize(p, *b));
          n->mutable_shuffle()->set_buffer_size(size);
        } else {
          n->mutable_shuffle();
        }
        break;
      case Kind::kRepeat: n->mutable_repeat(); break;
      case Kind::kCache: n->mutable_cache(); break;
      // Counts are not in the model: take all, skip none, so that neither
      // changes the cardinality the analysis infers.
      case Kind::kTake: n->mutable_take()->set_count(-1); break;
      case Kind::kSkip: n->mutable_skip()->set_count(0); break;
      case Kind::kTfrecord: n->mutable_tfrecord(); break;
      case Kind::kTextLine: n->mutable_text_line(); break;
      case Kind::kInterleave: {
        auto* il = n->mutable_interleave();
        il->set_function(places_.at(FunctionKey(p)).name);
        int parallel = 1;
        if (p.mapping.parallel && parallelism) {
          PLUMBER_ASSIGN_OR_RETURN(parallel, Threads(p, "parallelism", *parallelism));
        }
        int cycle = 1;
        if (p.mapping.one_at_a_time) {
          cycle = 1;
        } else if (auto c = Param(p, "cycle_length")) {
          PLUMBER_ASSIGN_OR_RETURN(cycle, Threads(p, "cycle_length", *c));
        } else {
          cycle = static_cast<int>(std::clamp<size_t>(p.max_open, 1, kMaxParallelism));
          cycle = std::max(cycle, parallel);
          notes_.push_back(p.name + ": the dump has no cycle_length; taken as " + std::to_string(cycle) +
                           ", the most inputs open at once" + (p.mapping.parallel ? " (or its parallelism)" : ""));
        }
        if (parallel > cycle) cycle = parallel;
        il->set_cycle_length(cycle);
        if (p.mapping.parallel && parallelism) il->set_parallelism(parallel);
        if (p.max_open > 0) {
          notes_.push_back(p.name + ": its per-input datasets (up to " + std::to_string(p.max_open) +
                           " open at once) are folded into one function, " + places_.at(FunctionKey(p)).name +
                           ", with summed counters; TensorFlow's model holds only the inputs open at the dump, so "
                           "those already finished are missing from the function's counters");
        }
        break;
      }
      case Kind::kOpaque:
        n->mutable_opaque();
        if (p.mapping.parallel && parallelism) {
          PLUMBER_ASSIGN_OR_RETURN(int v, Threads(p, "parallelism", *parallelism));
          n->mutable_opaque()->set_parallelism(v);
        }
        break;
    }
    return Status::OK();
  }

  Status BuildProgram(schema::Pipeline* program) {
    program->set_name(models_.back().dataset_name.empty() ? "tf.data pipeline"
                                                          : Printable(models_.back().dataset_name));
    program->set_imported_from(FormIs(models_.front()));
    // Sources first, the output last: the order a pipeline file is written in.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      PLUMBER_RETURN_IF_ERROR(BuildNode(places_.at(*it), program->add_nodes()));
    }
    program->set_output(places_.at("r").name);
    return Status::OK();
  }

  void FillHeader(schema::TraceHeader* h) {
    const Model& last = models_.back();
    h->set_wait_traced(false);
    schema::ImportInfo* info = h->mutable_imported();
    info->set_format(FormIs(last));
    for (const auto& in : inputs_) info->add_files(in.path);
    info->set_thread_cpu(false);
    info->set_file_sizes_known(false);
    info->set_autotune_algorithm(AlgorithmText(last));
    info->set_dataset_name(Printable(last.dataset_name));
    // thread_cpu false and the opaque nodes are stated by every report from
    // the header itself; the notes add only what is particular to this dump.
    if (last.has_optimization_params && last.cpu_budget > 0) {
      info->set_cpu_budget(static_cast<double>(last.cpu_budget));
      h->mutable_machine()->set_cores(static_cast<int32_t>(std::min<int64_t>(last.cpu_budget, 1'000'000)));
      info->add_notes("the machine's cores are autotune's cpu_budget (" + std::to_string(last.cpu_budget) +
                      " logical threads), not a measurement of the machine");
    } else {
      info->add_notes("the machine's cores are unknown (the dump has no cpu_budget): give --cores");
    }
    if (last.has_optimization_params && last.ram_budget > 0) {
      info->set_ram_budget_bytes(last.ram_budget);
      h->mutable_machine()->set_memory_bytes(last.ram_budget);
      info->add_notes("the machine's memory is autotune's ram_budget (" +
                      units::FormatBytes(static_cast<double>(last.ram_budget)) +
                      "), the share tf.data may buffer, not the machine's memory");
    } else {
      info->add_notes("the machine's memory is unknown (the dump has no ram_budget)");
    }
    for (size_t d = models_.size(); d-- > 0;) {
      const auto& gaps = models_[d].gap_times_us;
      if (gaps.empty()) continue;
      double sum = 0;
      for (uint64_t g : gaps) sum += static_cast<double>(g);
      const double mean_s = sum / static_cast<double>(gaps.size()) * 1e-6;
      h->mutable_options()->set_step_time_seconds(mean_s);
      info->add_notes("step time " + units::FormatSeconds(mean_s) + ": the mean of the last " +
                      std::to_string(gaps.size()) + " gaps between the consumer's GetNext calls that " +
                      (models_.size() > 1 ? "the latest dump" : "the dump") + " records (gap_times, microseconds)");
      break;
    }
    bool tfrecord = false, text = false;
    for (const auto& [key, p] : places_) {
      tfrecord = tfrecord || p.mapping.kind == Kind::kTfrecord;
      text = text || p.mapping.kind == Kind::kTextLine;
    }
    if (tfrecord || text) {
      std::string how = tfrecord ? "TFRecord records plus 16 bytes of framing each" : "";
      if (text) how += std::string(tfrecord ? ", " : "") + "text lines plus one newline each";
      info->add_notes("storage bytes read are estimated from the readers' bytes produced (" + how +
                      "); compression and file sizes are unknown");
    }
    info->add_notes("buffer fills are as at each dump, not peaks");
    h->mutable_options()->add_argv("plumber import");
  }

  void FillSnapshot(size_t d, const schema::Pipeline& program, schema::Snapshot* snap) {
    std::map<std::string, const Place*> by_name;
    for (const auto& [key, p] : places_) by_name[p.name] = &p;
    for (const auto& node : program.nodes()) {
      const Place& p = *by_name.at(node.name());
      schema::NodeStats* s = snap->add_nodes();
      s->set_name(node.name());
      auto it = stats_[d].find(p.key);
      const PlaceStats zero;
      const PlaceStats& ps = it == stats_[d].end() ? zero : it->second;
      s->set_elements_produced(ps.num_elements);
      s->set_elements_consumed(ps.consumed);
      s->set_bytes_produced(ps.bytes_produced);
      s->set_bytes_consumed(ps.bytes_consumed);
      s->set_active_cpu_ns(ps.processing_ns);
      s->set_self_wall_ns(ps.processing_ns);
      int parallelism = NodeParallelism(node);
      if (auto v = ps.parameters.find("parallelism"); v != ps.parameters.end() && v->second >= 1 &&
                                                      v->second <= kMaxParallelism && p.mapping.parallel) {
        parallelism = static_cast<int>(std::lround(v->second));
      }
      s->set_parallelism(parallelism);
      if (auto v = ps.parameters.find("buffer_size"); v != ps.parameters.end() && v->second >= 0 &&
                                                      v->second <= 2147483647.0) {
        s->set_buffer_capacity(std::llround(v->second));
      }
      s->set_buffer_peak_fill(ps.buffered_elements);
      s->set_peak_buffered_bytes(ps.buffered_bytes);
      if (node.has_tfrecord()) s->set_storage_bytes_read(PlusPerRecord(ps.bytes_produced, ps.num_elements, 16));
      if (node.has_text_line()) s->set_storage_bytes_read(PlusPerRecord(ps.bytes_produced, ps.num_elements, 1));
      // No RootStats: the model does not record how long the consumer
      // waited, and calls without their wait would read as a consumer that
      // never waited.
    }
  }

  // TensorFlow drops an interleave's inputs once read: their counters leave
  // the next dump, and the function's cumulative counters go down.
  void NoteBackwards(const schema::Trace& trace) {
    for (int i = 1; i < trace.snapshots_size(); ++i) {
      const auto& a = trace.snapshots(i - 1);
      const auto& b = trace.snapshots(i);
      for (int j = 0; j < a.nodes_size() && j < b.nodes_size(); ++j) {
        if (b.nodes(j).elements_produced() < a.nodes(j).elements_produced()) {
          notes_.push_back(a.nodes(j).name() + ": counters go down from " + inputs_[i - 1].path + " to " +
                           inputs_[i].path + " (inputs of an interleave that finished were dropped by TensorFlow); "
                           "its rates are unknown");
        }
      }
    }
  }

  const std::vector<ImportInput>& inputs_;
  const ImportOptions& options_;
  std::vector<Model> models_;
  std::map<std::string, Place> places_;
  std::vector<std::string> order_;  // keys in the order first met
  std::vector<std::map<std::string, PlaceStats>> stats_;
  std::vector<std::string> notes_;
};

}  // namespace

bool LooksLikeTfModel(std::string_view bytes) { return tfmodel::Detect(bytes); }

StatusOr<schema::Trace> ImportTfModel(const std::vector<ImportInput>& inputs, const ImportOptions& options) {
  if (inputs.empty()) return Status::InvalidArgument("nothing to import");
  return Importer(inputs, options).Run();
}

}  // namespace plumber
