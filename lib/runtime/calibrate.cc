// Source calibration: cut the reading interleave out of the pipeline, run it
// at each parallelism, count the storage bytes read.
#include "runtime/calibrate.h"

#include <deque>
#include <set>
#include <unordered_map>

#include "runtime/run.h"
#include "traceio/op_registry.h"

namespace plumber::runtime {
namespace {

// The nodes `root` depends on (inputs and functions), root included.
std::set<std::string> Closure(const schema::Pipeline& p, const std::string& root) {
  std::unordered_map<std::string, const schema::Node*> by_name;
  for (const auto& n : p.nodes()) by_name[n.name()] = &n;
  std::set<std::string> seen;
  std::deque<std::string> todo = {root};
  while (!todo.empty()) {
    std::string name = todo.front();
    todo.pop_front();
    auto it = by_name.find(name);
    if (it == by_name.end() || !seen.insert(name).second) continue;
    for (const auto& in : it->second->inputs()) todo.push_back(in);
    if (it->second->op() == "interleave") todo.push_back(it->second->interleave().function());
  }
  return seen;
}

}  // namespace

StatusOr<std::vector<CalibrationPoint>> MeasureSourceBandwidth(Env* env, const schema::Pipeline& pipeline,
                                                               const std::string& base_dir,
                                                               const StorageOptions& storage, double seconds_per_point,
                                                               const std::vector<int>& parallelisms) {
  // The first interleave whose function reads storage.
  const schema::Node* reader_interleave = nullptr;
  for (const auto& n : pipeline.nodes()) {
    if (n.op() != "interleave" || reader_interleave) continue;
    const auto body = Closure(pipeline, n.interleave().function());
    for (const auto& m : pipeline.nodes()) {
      const OpDef* def = FindOp(m.op());
      if (body.count(m.name()) && def && def->reads_storage) reader_interleave = &n;
    }
  }
  if (reader_interleave == nullptr) {
    return Status::FailedPrecondition(
        "calibration needs a reader (tfrecord, text_line) inside an interleave function: that is where read "
        "parallelism lives");
  }
  const auto keep = Closure(pipeline, reader_interleave->name());
  std::vector<CalibrationPoint> points;
  for (int p : parallelisms) {
    schema::Pipeline source;
    source.set_name(pipeline.name() + ".calibrate");
    for (const auto& n : pipeline.nodes()) {
      if (!keep.count(n.name())) continue;
      schema::Node* copy = source.add_nodes();
      *copy = n;
      if (n.name() == reader_interleave->name()) {
        auto* il = copy->mutable_interleave();
        il->set_parallelism(p);
        il->set_cycle_length(std::max(p, il->has_cycle_length() ? il->cycle_length() : 1));
        il->set_deterministic(false);
      }
    }
    schema::Node* again = source.add_nodes();
    again->set_name(reader_interleave->name() + ".calibrate_repeat");
    again->set_op("repeat");
    again->add_inputs(reader_interleave->name());
    again->mutable_repeat()->set_count(-1);

    RunConfig config;
    config.seconds = seconds_per_point;
    config.snapshot_every_seconds = seconds_per_point;
    config.storage = storage;
    config.base_dir = base_dir;
    PLUMBER_ASSIGN_OR_RETURN(RunResult r, RunPipeline(env, source, config));
    if (r.end_status == "error") return r.error.WithContext("calibrating at read parallelism " + std::to_string(p));
    int64_t bytes = 0;
    for (const auto& n : r.final_snapshot.nodes()) bytes += n.storage_bytes_read();
    if (r.seconds <= 0) return Status::Internal("calibration run took no time");
    points.push_back({p, static_cast<double>(bytes) / r.seconds});
  }
  return points;
}

}  // namespace plumber::runtime
