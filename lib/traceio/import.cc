// Importing other systems' dumps; see import.h. This file tells the
// formats apart, dispatches, and places the dumps in time.
#include "traceio/import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/units.h"
#include "traceio/format.h"
#include "traceio/import_time.h"
#include "pipeline/validate.h"
#include "traceio/pipeline_io.h"
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

// Line and column (from 1) of byte `offset` of `text`.
std::string LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Parses JSON text into *json; where it goes wrong, or "" when it parses.
std::string ParseJsonOrSayWhere(std::string_view text, nlohmann::json* json) {
  try {
    *json = nlohmann::json::parse(text);
    return "";
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1; the last character read is where it failed.
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    size_t end = text.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    if (at >= end) {
      return "truncated JSON at " + LineColumn(text, end) + ": the file ends before the JSON does (cut short?)";
    }
    return "JSON syntax error at " + LineColumn(text, at) + " (unexpected '" + std::string(1, text[at]) + "')";
  }
}

// Walks the top-level fields of a binary protobuf. Returns the offset where
// a field runs past the end of the bytes (a file cut short), or nullopt when
// the bytes end on a field boundary or are not protobuf at all (a bad tag,
// a group).
std::optional<size_t> ProtobufCutAt(std::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return std::nullopt;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (true) {
    const size_t field_start = static_cast<size_t>(in.CurrentPosition());
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      // The end, or a tag that does not parse: the tag itself was cut when
      // bytes remain and it started with a continuation byte.
      if (field_start >= bytes.size()) return std::nullopt;
      return (static_cast<uint8_t>(bytes[bytes.size() - 1]) & 0x80) && bytes.size() - field_start < 5
                 ? std::optional<size_t>(field_start)
                 : std::nullopt;
    }
    if (WireFormatLite::GetTagFieldNumber(tag) == 0) return std::nullopt;
    bool ok = true;
    switch (WireFormatLite::GetTagWireType(tag)) {
      case WireFormatLite::WIRETYPE_VARINT: {
        uint64_t v;
        ok = in.ReadVarint64(&v);
        break;
      }
      case WireFormatLite::WIRETYPE_FIXED64: {
        uint64_t v;
        ok = in.ReadLittleEndian64(&v);
        break;
      }
      case WireFormatLite::WIRETYPE_FIXED32: {
        uint32_t v;
        ok = in.ReadLittleEndian32(&v);
        break;
      }
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        uint32_t n;
        ok = in.ReadVarint32(&n) && in.Skip(static_cast<int>(std::min<uint32_t>(n, INT32_MAX)));
        break;
      }
      default:
        return std::nullopt;
    }
    if (!ok) return field_start;
  }
}

// The pipeline's output never forgets what it produced (unlike the inputs
// of an interleave, which TensorFlow drops once read): when its count goes
// down from one dump to the next, the dumps were given out of order, and
// every rate computed from them would be negative or wrong.
Status CheckDumpOrder(const std::vector<ImportInput>& inputs, const schema::Trace& trace) {
  const std::string output = OutputNodeName(trace.header().program());
  std::vector<int64_t> produced;
  for (const auto& snap : trace.snapshots()) {
    for (const auto& node : snap.nodes()) {
      if (node.name() == output) produced.push_back(node.elements_produced());
    }
  }
  if (produced.size() != inputs.size()) return Status::OK();
  for (size_t i = 1; i < produced.size(); ++i) {
    if (produced[i] >= produced[i - 1]) continue;
    std::vector<size_t> order(inputs.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return produced[a] < produced[b]; });
    std::string sorted;
    for (size_t k : order) sorted += (sorted.empty() ? "" : " ") + inputs[k].path;
    return Status::InvalidArgument(
        inputs[i].path + ": the pipeline's output had produced " + std::to_string(produced[i]) + " elements, fewer than the " +
        std::to_string(produced[i - 1]) + " of " + inputs[i - 1].path +
        " given before it: the dumps are out of order; give them in the order they were taken (by their counts: " +
        sorted + ")");
  }
  return Status::OK();
}

}  // namespace

Status NotATraceOrDump(const std::string& path, std::string_view bytes) {
  if (bytes.empty()) return Status::InvalidArgument(path + ": the file is empty");
  if (DetectEncoding(bytes) == Encoding::kJson) {
    nlohmann::json json;
    if (std::string problem = ParseJsonOrSayWhere(bytes, &json); !problem.empty()) {
      return Status::InvalidArgument(path + ": " + problem);
    }
    if (json.is_object() && json.contains("nodes")) {
      return Status::InvalidArgument(path + ": this is a pipeline definition, not a trace (plumber run makes a trace)");
    }
    return Status::InvalidArgument(path + ": JSON, but not a plumber trace (it has no \"header\" or \"snapshots\")");
  }
  if (LooksLikePipelineSnapshotText(bytes)) {
    return Status::InvalidArgument(path + ": a Plumber PipelineSnapshot in text form; plumber import reads the binary "
                                          "form (protoc --encode=plumber.tfsnap.PipelineSnapshot turns the one into "
                                          "the other)");
  }
  if (std::optional<size_t> cut = ProtobufCutAt(bytes)) {
    const std::string_view whole = bytes.substr(0, *cut);
    const std::string at = "its field at byte " + std::to_string(*cut) + " runs past the end of the file (" +
                           std::to_string(bytes.size()) + " bytes)";
    if (LooksLikeTfModel(whole)) {
      return Status::InvalidArgument(path + ": a tf.data model dump cut short: " + at);
    }
    if (LooksLikePipelineSnapshot(whole)) {
      return Status::InvalidArgument(path + ": a Plumber PipelineSnapshot cut short: " + at);
    }
  }
  if (auto pipeline = ParsePipeline(bytes, path); pipeline.ok() && pipeline->nodes_size() > 0) {
    return Status::InvalidArgument(path + ": this is a pipeline definition, not a trace (plumber run makes a trace)");
  }
  return Status::InvalidArgument(path +
                                 ": not a plumber trace, nor a dump plumber import reads (a tf.data autotuning "
                                 "model, binary or text, or a Plumber PipelineSnapshot)");
}

Status RefuseDump(const std::string& path, std::string_view bytes) {
  switch (DetectImportFormat(bytes)) {
    case ImportFormat::kTfModel:
      return Status::InvalidArgument(path + ": a tf.data model dump: plumber import reads it (plumber import " + path +
                                     " -o trace.pb)");
    case ImportFormat::kPipelineSnapshot:
      return Status::InvalidArgument(path + ": a Plumber PipelineSnapshot: plumber import reads it (plumber import " +
                                     path + " -o trace.pb)");
    case ImportFormat::kNone:
      break;
  }
  return Status::OK();
}

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
  StatusOr<schema::Trace> trace = Status::InvalidArgument(inputs[0].path + ": not a dump plumber can import");
  switch (format) {
    case ImportFormat::kTfModel:
      trace = ImportTfModel(inputs, options);
      break;
    case ImportFormat::kPipelineSnapshot:
      trace = ImportPipelineSnapshot(inputs, options);
      break;
    case ImportFormat::kNone:
      break;
  }
  if (trace.ok()) PLUMBER_RETURN_IF_ERROR(CheckDumpOrder(inputs, *trace));
  return trace;
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
