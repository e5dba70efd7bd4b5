// Source calibration: cut the reading interleave out of the pipeline, run it
// at each parallelism, count the storage bytes read.
#include "runtime/calibrate.h"

#include <set>

#include "runtime/run.h"

namespace plumber::runtime {
namespace {

// The nodes `root` depends on (inputs and functions), root included.
std::set<int> Closure(const ProgramGraph& g, int root) {
  std::set<int> seen;
  std::vector<int> todo = {root};
  while (!todo.empty()) {
    const int i = todo.back();
    todo.pop_back();
    if (!seen.insert(i).second) continue;
    for (int j : g.children(i)) todo.push_back(j);
  }
  return seen;
}

}  // namespace

StatusOr<std::vector<CalibrationPoint>> MeasureSourceBandwidth(Env* env, const ProgramGraph& program,
                                                               const std::string& base_dir,
                                                               const StorageOptions& storage, double seconds_per_point,
                                                               const std::vector<int>& parallelisms) {
  // The first interleave whose function reads storage, and whose
  // parallelism and cycle can be set.
  int reader_interleave = -1;
  for (int i = 0; i < program.size() && reader_interleave < 0; ++i) {
    const OpDef& op = program.op(i);
    if (program.function(i) < 0 || !op.parallelizable() || op.set_cycle_length == nullptr) continue;
    for (int j : Closure(program, program.function(i))) {
      if (program.op(j).reads_storage) reader_interleave = i;
    }
  }
  if (reader_interleave < 0) {
    return Status::FailedPrecondition(
        "calibration needs a reader (tfrecord, text_line) inside an interleave function: that is where read "
        "parallelism lives");
  }
  const auto keep = Closure(program, reader_interleave);
  const std::string& name = program.name(reader_interleave);
  std::vector<CalibrationPoint> points;
  for (int p : parallelisms) {
    schema::Pipeline source;
    source.set_name(program.program().name() + ".calibrate");
    for (int i = 0; i < program.size(); ++i) {
      if (!keep.count(i)) continue;
      schema::Node* copy = source.add_nodes();
      *copy = program.node(i);
      if (i == reader_interleave) {
        const OpDef& op = program.op(i);
        op.set_parallelism(copy, p);
        op.set_cycle_length(copy, std::max(p, op.cycle_length(*copy)));
        if (op.set_deterministic != nullptr) op.set_deterministic(copy, false);
      }
    }
    *source.add_nodes() = MakeRepeatNode(name + ".calibrate_repeat", name, -1);
    PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(source), "the calibration pipeline"));

    RunConfig config;
    config.seconds = seconds_per_point;
    config.snapshot_every_seconds = seconds_per_point;
    config.storage = storage;
    config.base_dir = base_dir;
    PLUMBER_ASSIGN_OR_RETURN(RunResult r, RunPipeline(env, graph, config));
    if (r.end_status == "error") return r.error.WithContext("calibrating at read parallelism " + std::to_string(p));
    int64_t bytes = 0;
    for (const auto& n : r.final_snapshot.nodes()) bytes += n.storage_bytes_read();
    if (r.seconds <= 0) return Status::Internal("calibration run took no time");
    points.push_back({p, static_cast<double>(bytes) / r.seconds});
  }
  return points;
}

}  // namespace plumber::runtime
