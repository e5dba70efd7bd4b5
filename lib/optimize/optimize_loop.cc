// The optimize loop; see optimize_loop.h. Its step table is formatted in
// lib/report/optimize_format.h.
#include "optimize/optimize_loop.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "analysis/analyze.h"
#include "analysis/trace_source.h"
#include "optimize/output_check.h"
#include "rewrite/reshape.h"
#include "rewrite/shape_search.h"
#include "traceio/pipeline_io.h"

namespace plumber::optimize {
namespace {

bool Stopped(const OptimizeOptions& o) { return o.stop != nullptr && o.stop->load(); }

struct Measured {
  runtime::RunResult run;
  double throughput = 0;
};

StatusOr<Measured> Measure(Env* env, const ProgramGraph& pipeline, const std::string& trace,
                           const OptimizeOptions& o, int step, const std::function<void(const Progress&)>& progress) {
  runtime::RunConfig config;
  config.seconds = o.seconds_per_run;
  // A fifth of the run warms up (caches fill, thread pools start), at most
  // two seconds: enough for the image pipelines, not so much that short
  // runs have nothing left to measure.
  config.warmup_seconds = o.warmup_seconds >= 0 ? o.warmup_seconds : std::min(2.0, o.seconds_per_run / 5);
  // Ten snapshots per run at least, so the model's window after the warm-up
  // always spans several of them.
  config.snapshot_every_seconds =
      o.snapshot_every_seconds > 0 ? o.snapshot_every_seconds : std::clamp(o.seconds_per_run / 10, 0.05, 1.0);
  config.trace_path = trace;
  config.storage = o.storage;
  config.handoff = o.handoff;
  config.base_dir = o.base_dir;
  config.argv = o.argv;
  config.tool_version = o.tool_version;
  config.stop = o.stop;
  if (progress) {
    config.progress_every_seconds = 0.25;
    config.progress = [&progress, step, &o](const runtime::RunProgress& p) {
      Progress pr;
      pr.step = step;
      pr.max_steps = o.max_steps;
      pr.phase = "run";
      pr.run = p;
      pr.run_seconds = o.seconds_per_run;
      progress(pr);
    };
  }
  PLUMBER_ASSIGN_OR_RETURN(runtime::RunResult run, runtime::RunPipeline(env, pipeline, config));
  Measured m;
  m.throughput = run.measured_seconds > 0 ? static_cast<double>(run.measured_batches) / run.measured_seconds : 0;
  m.run = std::move(run);
  return m;
}

// A shape change in the step table's terms: "keep moved above decode",
// "check fused into make".
rewrite::Change AsChange(const rewrite::AppliedShape& a) {
  const rewrite::ShapeChange& c = a.change;
  rewrite::Change out;
  switch (c.kind) {
    case rewrite::ShapeKind::kMoveAbove: out = {c.upper, "moved above", "", c.lower, "", 0}; break;
    case rewrite::ShapeKind::kFuseMaps: out = {c.lower, "fused into", "", c.upper, "", 0}; break;
    case rewrite::ShapeKind::kFuseFilter: out = {c.upper, "fused into", "", c.lower, "", 0}; break;
  }
  out.why = c.rule + ": " + c.reason + "; " + a.verification;
  out.predicted_after = a.predicted_after;
  return out;
}

// The step's rewrite: the shape search then the knobs, or the knobs alone.
// `report` becomes the analysis of the shape the rewrite chose.
StatusOr<rewrite::RewriteResult> RewriteStep(Env* env, const std::string& trace_path, analysis::Analysis* report,
                                             const analysis::AnalysisOptions& aopt, const rewrite::RewriteOptions& ropt,
                                             const OptimizeOptions& o) {
  if (!o.reshape) return rewrite::Rewrite(*report, ropt);
  PLUMBER_ASSIGN_OR_RETURN(auto loaded, analysis::LoadTraceFile(env, trace_path, aopt.window, aopt.max_memory_bytes));
  rewrite::ShapeSearchOptions shape;
  shape.legality = o.legality;
  if (o.verify > 0) {
    shape.verify = OutputVerifier(env, o.base_dir, o.verify);
  } else {
    shape.unverified = "not verified (--verify 0): the output may differ";
  }
  PLUMBER_ASSIGN_OR_RETURN(auto searched, rewrite::SearchShapes(loaded, std::move(*report), aopt, ropt, shape));
  *report = std::move(searched.analysis);
  // Shape changes first: they apply before the knobs.
  std::vector<rewrite::Change> changes;
  for (const auto& a : searched.rewrite.shape.applied) changes.push_back(AsChange(a));
  changes.insert(changes.end(), searched.rewrite.changes.begin(), searched.rewrite.changes.end());
  searched.rewrite.changes = std::move(changes);
  return std::move(searched.rewrite);
}

void Announce(const std::function<void(const Progress&)>& progress, int step, const OptimizeOptions& o,
              const char* phase) {
  if (!progress) return;
  Progress p;
  p.step = step;
  p.max_steps = o.max_steps;
  p.phase = phase;
  p.run_seconds = o.seconds_per_run;
  progress(p);
}

}  // namespace

double OptimizeResult::speedup() const {
  if (steps.empty() || steps.front().measured <= 0) return 0;
  return best().measured / steps.front().measured;
}

StatusOr<OptimizeResult> Optimize(Env* env, const ProgramGraph& program, const OptimizeOptions& o,
                                  const std::function<void(const Progress&)>& progress) {
  if (o.max_steps < 1) return Status::InvalidArgument("max steps must be at least 1");
  if (!(o.seconds_per_run > 0)) return Status::InvalidArgument("seconds per run must be positive");
  if (o.trace_dir.empty()) return Status::InvalidArgument("no directory for the traces");

  analysis::AnalysisOptions aopt;
  aopt.cores = o.cores;
  aopt.memory_bytes = o.memory_bytes;
  aopt.disk_bandwidth_bytes_per_s = o.disk_bandwidth_bytes_per_s;
  aopt.solve_programs = true;
  aopt.plan = o.plan;

  OptimizeResult result;
  // Pipelines already run, in their JSON form: a rewrite that comes back
  // to one of them has nothing new to show.
  std::set<std::string> seen;
  ProgramGraph current = program;
  std::optional<double> predicted;
  std::vector<rewrite::Change> changes;
  std::vector<rewrite::LearnedCost> learned;
  // Every step's costs per stage and parallelism: each rewrite is priced
  // with all of them.
  rewrite::MeasuredCosts measured_costs;
  rewrite::RewriteOptions ropt = o.rewrite;
  ropt.learned = &measured_costs;
  int since_improvement = 0;
  double best = 0;

  for (int k = 0;; ++k) {
    Step step;
    step.index = k;
    step.pipeline = current.program();
    step.predicted = predicted;
    step.changes = std::move(changes);
    step.learned = std::move(learned);
    step.trace_path = (std::filesystem::path(o.trace_dir) / fmt::format("step-{}.pb", k)).string();
    step.pipeline_path = (std::filesystem::path(o.trace_dir) / fmt::format("step-{}.json", k)).string();
    seen.insert(SerializePipeline(current.program(), Encoding::kJson));
    PLUMBER_RETURN_IF_ERROR(WritePipeline(env, step.pipeline_path, current.program(), Encoding::kJson));

    Announce(progress, k, o, "run");
    auto measured = Measure(env, current, step.trace_path, o, k, progress);
    if (!measured.ok()) {
      if (k == 0) return measured.status();
      result.failure = measured.status().WithContext(fmt::format("step {}", k));
      result.stopped_because = "the run of step " + std::to_string(k) + " could not start";
      break;
    }
    step.end_status = measured->run.end_status;
    step.measured = measured->throughput;
    if (step.end_status == "error") {
      const Status why = measured->run.error.WithContext(fmt::format("step {} ({})", k, step.pipeline_path));
      if (k == 0) return why;
      // A rewrite that fails to run is plumber's bug, not the user's: say
      // so, and keep the best pipeline that did run.
      result.failure = why;
      result.steps.push_back(std::move(step));
      result.stopped_because = "the rewritten pipeline of step " + std::to_string(k) + " failed";
      break;
    }
    if (step.end_status == "interrupted") {
      result.interrupted = true;
      result.steps.push_back(std::move(step));
      result.stopped_because = "interrupted";
      break;
    }
    step.complete = true;
    const bool improved = k == 0 || step.measured > best * (1 + o.min_improvement);
    if (k == 0 || step.measured > best) {
      if (k > 0) spdlog::debug("step {}: {:.2f} batches/s beats {:.2f}", k, step.measured, best);
      best = step.measured;
      result.best_step = k;
    }
    since_improvement = improved ? 0 : since_improvement + 1;

    Announce(progress, k, o, "analyze");
    auto report = analysis::AnalyzeTraceFile(env, step.trace_path, aopt);
    if (!report.ok()) {
      if (k == 0) return report.status();
      result.failure = report.status();
      result.steps.push_back(std::move(step));
      result.stopped_because = "the trace of step " + std::to_string(k) + " could not be analysed";
      break;
    }
    for (const auto& w : report->warnings) spdlog::warn("{}: {}", step.trace_path, w);
    step.bottleneck = report->bottleneck;
    if (const auto* node = report->Find(report->bottleneck)) step.bottleneck_limit = analysis::LimitName(node->limit);

    Announce(progress, k, o, "rewrite");
    measured_costs.Add(*report);
    auto rewritten = RewriteStep(env, step.trace_path, &*report, aopt, ropt, o);
    if (!rewritten.ok()) {
      if (k == 0) return rewritten.status().WithContext(step.trace_path);
      result.failure = rewritten.status().WithContext(step.trace_path);
      result.steps.push_back(std::move(step));
      result.stopped_because = "the trace of step " + std::to_string(k) + " could not be rewritten";
      break;
    }
    // What this step measured of a node the rewrite moved or fused does
    // not price it from the next step on.
    for (const auto& a : rewritten->shape.applied) rewrite::ForgetChanged(a.change, &measured_costs);
    if (k == 0) step.predicted = rewritten->predicted_before;
    const bool ceiling = rewritten->predicted_unbounded;
    predicted = ceiling ? std::nullopt : std::optional<double>(rewritten->predicted_after);
    changes = rewritten->changes;
    learned = rewritten->learned;
    const std::string next = SerializePipeline(rewritten->pipeline, Encoding::kJson);
    auto next_graph = ProgramGraph::Build(rewritten->pipeline, "the rewrite of " + step.trace_path);
    if (!next_graph.ok()) {
      // The rewriter validates what it writes; this is plumber's bug.
      result.failure = next_graph.status();
      result.steps.push_back(std::move(step));
      result.stopped_because = "the rewrite of step " + std::to_string(k) + " is not a valid pipeline";
      break;
    }
    current = std::move(*next_graph);
    step.rewrite = std::move(rewritten).value();
    const auto error = step.prediction_error();
    const bool disagree = error && std::abs(*error) > o.max_prediction_error;
    result.steps.push_back(std::move(step));

    // Why stop (checked in this order, the first that holds is reported).
    if (Stopped(o)) {
      result.interrupted = true;
      result.stopped_because = "interrupted";
      break;
    }
    if (k + 1 >= o.max_steps) {
      result.stopped_because = fmt::format("reached the limit of {} steps", o.max_steps);
      break;
    }
    if (changes.empty()) {
      result.stopped_because = "the rewrite changes nothing more";
      break;
    }
    if (seen.count(next) != 0) {
      result.stopped_because = "the rewrite returns to a pipeline already measured";
      break;
    }
    if (k > 0 && !improved && !disagree) {
      result.stopped_because = fmt::format("no gain above {:.0f}% and the prediction held (within {:.0f}%)",
                                           100 * o.min_improvement, 100 * o.max_prediction_error);
      break;
    }
    if (since_improvement >= 2) {
      result.stopped_because = fmt::format("no gain above {:.0f}% in two steps", 100 * o.min_improvement);
      break;
    }
  }
  return result;
}

StatusOr<std::string> WorkingDirectory(Env* env, const std::string& keep, const std::string& prefix,
                                       ScopedTempDir* temp) {
  if (!keep.empty()) {
    PLUMBER_RETURN_IF_ERROR(env->CreateDirectories(keep));
    return keep;
  }
  PLUMBER_ASSIGN_OR_RETURN(*temp, ScopedTempDir::Make(env, prefix));
  return temp->path();
}

std::string DefaultOutputPath(const std::string& pipeline) {
  std::filesystem::path p(pipeline);
  std::string ext = p.extension().string();
  if (ext != ".json" && ext != ".pb") ext = ".json";
  return (p.parent_path() / (p.stem().string() + ".optimized" + ext)).string();
}

bool SameDirectory(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  auto pa = std::filesystem::weakly_canonical(std::filesystem::absolute(a).parent_path(), ec1);
  auto pb = std::filesystem::weakly_canonical(std::filesystem::absolute(b).parent_path(), ec2);
  return !ec1 && !ec2 && pa == pb;
}

}  // namespace plumber::optimize
