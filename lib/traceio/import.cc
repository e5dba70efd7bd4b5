// Importing other systems' dumps; see import.h. This file tells the
// formats apart, dispatches, and places the dumps in time.
#include "traceio/import.h"

#include <algorithm>
#include <cmath>

#include "base/units.h"
#include "traceio/import_time.h"
#include "traceio/pipeline_snapshot_import.h"
#include "traceio/tf_model_import.h"
#include "traceio/trace_io.h"

namespace plumber {
namespace {

// Placeholder spacing of dumps whose times are unknown: the counters' deltas
// stay right, rates are reported as unknown.
constexpr double kPlaceholderSeconds = 1.0;
// File modification times below this apart do not tell dumps apart (a
// filesystem may keep whole seconds).
constexpr double kMinMtimeGapSeconds = 1.0;

bool Increasing(const std::vector<double>& t) {
  for (size_t i = 1; i < t.size(); ++i) {
    if (!(t[i] > t[i - 1])) return false;
  }
  return true;
}

}  // namespace

ImportFormat DetectImportFormat(std::string_view bytes) {
  if (LooksLikePipelineSnapshot(bytes)) return ImportFormat::kPipelineSnapshot;
  if (LooksLikeTfModel(bytes)) return ImportFormat::kTfModel;
  return ImportFormat::kNone;
}

bool IsTraceOrDump(std::string_view bytes) {
  return IsTraceContent(bytes) || DetectImportFormat(bytes) != ImportFormat::kNone;
}

StatusOr<schema::Trace> ImportDumps(const std::vector<ImportInput>& inputs, const ImportOptions& options) {
  if (inputs.empty()) return Status::InvalidArgument("nothing to import");
  const ImportFormat format = DetectImportFormat(inputs[0].bytes);
  for (const auto& in : inputs) {
    const ImportFormat f = DetectImportFormat(in.bytes);
    if (f == ImportFormat::kNone) {
      return Status::InvalidArgument(in.path +
                                     ": not a dump plumber can import (a tf.data autotuning model, binary or text, "
                                     "or a Plumber PipelineSnapshot)");
    }
    if (f != format) {
      return Status::InvalidArgument(in.path + ": a different format from " + inputs[0].path +
                                     "; dumps imported together must come from one run");
    }
  }
  if (options.window_seconds && !(*options.window_seconds > 0 && std::isfinite(*options.window_seconds))) {
    return Status::InvalidArgument("--window must be a positive duration");
  }
  switch (format) {
    case ImportFormat::kTfModel:
      return ImportTfModel(inputs, options);
    case ImportFormat::kPipelineSnapshot:
      return ImportPipelineSnapshot(inputs, options);
    case ImportFormat::kNone:
      break;
  }
  return Status::InvalidArgument(inputs[0].path + ": not a dump plumber can import");
}

StatusOr<schema::Trace> ImportFiles(Env* env, const std::vector<std::string>& paths, const ImportOptions& options) {
  std::vector<ImportInput> inputs;
  for (const auto& path : paths) {
    ImportInput in;
    in.path = path;
    PLUMBER_ASSIGN_OR_RETURN(in.bytes, ReadFileToString(env, path));
    auto mtime = env->GetModificationTime(path);
    if (mtime.ok()) in.mtime_seconds = *mtime;
    inputs.push_back(std::move(in));
  }
  return ImportDumps(inputs, options);
}

Status PlaceSnapshotsInTime(const std::vector<ImportInput>& inputs, const ImportOptions& options,
                            const std::vector<std::optional<double>>& source_seconds, schema::Trace* trace) {
  const size_t n = inputs.size();
  if (static_cast<size_t>(trace->snapshots_size()) != n) {
    return Status::Internal("PlaceSnapshotsInTime: one snapshot per dump expected");
  }
  schema::ImportInfo* info = trace->mutable_header()->mutable_imported();
  std::vector<double> at(n);  // seconds since the run started, per dump
  bool known = false;
  // The source's times and the files' times, each only when every dump has one.
  std::optional<std::vector<double>> own, mtimes;
  if (!source_seconds.empty() && std::all_of(source_seconds.begin(), source_seconds.end(),
                                             [](const auto& s) { return s.has_value(); })) {
    own.emplace();
    for (const auto& s : source_seconds) own->push_back(*s);
  }
  if (std::all_of(inputs.begin(), inputs.end(), [](const ImportInput& in) { return in.mtime_seconds.has_value(); })) {
    mtimes.emplace();
    for (const auto& in : inputs) mtimes->push_back(*in.mtime_seconds);
  }
  const bool mtimes_usable =
      n >= 2 && mtimes && Increasing(*mtimes) && mtimes->back() - mtimes->front() >= kMinMtimeGapSeconds;
  if (options.window_seconds) {
    const double w = *options.window_seconds;
    known = true;
    info->set_window_from("--window " + units::FormatSeconds(w));
    // The source's times, else the files', place the dumps relative to each
    // other; --window scales their span.
    const std::vector<double>* relative = own && Increasing(*own) ? &*own : mtimes_usable ? &*mtimes : nullptr;
    if (n == 1) {
      at[0] = w;
    } else if (relative != nullptr) {
      const double first = relative->front(), span = relative->back() - first;
      for (size_t i = 0; i < n; ++i) at[i] = w + ((*relative)[i] - first) * w / span;
    } else {
      for (size_t i = 0; i < n; ++i) at[i] = w + w * static_cast<double>(i) / static_cast<double>(n - 1);
      if (n > 2) info->add_notes("the dumps are taken to be evenly spaced over the --window");
    }
  } else if (own) {
    if (!Increasing(*own) || own->front() <= 0) {
      return Status::InvalidArgument(inputs.back().path +
                                     ": the dumps' own times do not move forward; give them in the order they were "
                                     "taken");
    }
    known = true;
    info->set_window_from("the dumps' own timestamps");
    at = *own;
  } else if (mtimes_usable) {
    known = true;
    info->set_window_from("the dump files' modification times");
    // The time from the run's start to the first dump is unknown; only the
    // span between dumps is used.
    for (size_t i = 0; i < n; ++i) at[i] = kPlaceholderSeconds + ((*mtimes)[i] - mtimes->front());
  } else {
    for (size_t i = 0; i < n; ++i) at[i] = kPlaceholderSeconds * static_cast<double>(i + 1);
    // One dump: the analysis says what that leaves unknown. Several: say
    // why their times could not be found.
    if (n > 1) {
      info->add_notes("the dumps' times are unknown (no timestamps, and modification times that do not move "
                      "forward by a second or more): give --window SECONDS for throughput");
    }
  }
  info->set_window_known(known);
  for (size_t i = 0; i < n; ++i) {
    trace->mutable_snapshots(static_cast<int>(i))->set_wall_ns(static_cast<int64_t>(std::llround(at[i] * 1e9)));
  }
  // Several dumps: the window runs from the first to the last, not from
  // the run's start (whose time is unknown).
  trace->mutable_header()->mutable_options()->set_warmup_seconds(n >= 2 ? at[0] : 0.0);
  return Status::OK();
}

}  // namespace plumber
