// Reading traces for the analysis; see trace_source.h.
#include "analysis/trace_source.h"

#include <optional>

#include "base/units.h"
#include "traceio/import.h"
#include "traceio/trace_io.h"

namespace plumber::analysis {
namespace {

// What analysing a trace holds in memory, from /usr/bin/time on synthetic
// chains of 5,000 to 100,000 nodes: parsing JSON holds the text, protobuf's
// intermediate binary and the messages at once (under 3 times the text
// measured); a binary trace is streamed, holding one record's payload, the
// parsed record and the three snapshots the window keeps; the model, the
// reports and the GLPK programs take about 3 kB per node of the program.
constexpr uint64_t kJsonBytesPerInputByte = 8;
constexpr uint64_t kBinaryBytesPerRecordByte = 16;
constexpr uint64_t kModelBytesPerNode = 4096;

std::string Bytes(uint64_t bytes) { return units::FormatBytes(static_cast<double>(bytes)); }

Status CheckModelFits(const schema::TraceHeader& header, uint64_t budget, const std::string& path) {
  const uint64_t nodes = static_cast<uint64_t>(header.program().nodes_size());
  if (nodes <= budget / kModelBytesPerNode) return Status::OK();
  return Status::ResourceExhausted(path + ": modelling its program of " + std::to_string(nodes) +
                                   " nodes takes about " + Bytes(nodes * kModelBytesPerNode) +
                                   ", over the --max-memory of " + Bytes(budget));
}

// --window SECONDS is the span an imported dump covers; a trace of plumber
// run records its own times.
Status SpanRefused(const std::string& source) {
  return Status::InvalidArgument(source + ": --window SECONDS (a span) is for imported dumps; a trace of plumber run "
                                          "takes --window START:END");
}

std::vector<std::string> NodeNames(const schema::TraceHeader& header) {
  std::vector<std::string> names;
  for (const auto& n : header.program().nodes()) names.push_back(n.name());
  return names;
}

// The header's program, validated and indexed; the header keeps the rest.
StatusOr<LoadedTrace> Start(schema::TraceHeader header, const std::string& source) {
  if (header.program().nodes_size() == 0) {
    return Status::InvalidArgument(source + ": the trace's header has no program to analyse");
  }
  LoadedTrace t;
  t.source = source;
  schema::Pipeline program = std::move(*header.mutable_program());
  header.clear_program();
  PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(program), source + ": the traced program"));
  t.graph = std::make_shared<const ProgramGraph>(std::move(graph));
  t.header = std::move(header);
  return t;
}

}  // namespace

StatusOr<LoadedTrace> LoadTrace(const schema::Trace& trace, const WindowSpec& window, const std::string& source) {
  if (!trace.has_header()) return Status::InvalidArgument(source + ": the trace has no header");
  if (window.span_seconds && !trace.header().has_imported()) {
    return SpanRefused(source);
  }
  WindowSelector selector(window, trace.header().options().warmup_seconds(), NodeNames(trace.header()));
  for (const auto& s : trace.snapshots()) {
    schema::Snapshot copy = s;
    selector.Add(&copy);
  }
  auto selected = selector.Finish();
  if (!selected.ok()) return selected.status().WithContext(source);
  PLUMBER_ASSIGN_OR_RETURN(LoadedTrace t, Start(trace.header(), source));
  t.window = std::move(*selected);
  return t;
}

StatusOr<LoadedTrace> LoadTraceFile(Env* env, const std::string& path, const WindowSpec& window,
                                    uint64_t budget) {
  PLUMBER_ASSIGN_OR_RETURN(auto probe, env->NewSequentialFile(path));
  char scratch[kTracePreambleBytes];
  std::string_view head;
  PLUMBER_RETURN_IF_ERROR(probe->Read(sizeof scratch, &head, scratch));
  if (head.empty()) return Status::InvalidArgument(path + ": the file is empty");
  if (!LooksLikeBinaryTrace(head)) {
    PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env->GetFileSize(path));
    if (size > budget / kJsonBytesPerInputByte) {
      // A JSON trace can be converted to a streamed binary one; an imported
      // dump (binary or text protobuf) is parsed whole whatever its form.
      const bool json = DetectEncoding(head) == Encoding::kJson;
      return Status::ResourceExhausted(
          path + ": parsing this " + Bytes(size) + (json ? " JSON trace" : " file") + " takes about " +
          Bytes(size * kJsonBytesPerInputByte) + ", over the --max-memory of " + Bytes(budget) +
          (json ? "; convert it to a binary trace (plumber convert " + path +
                      " trace.pb), which is read one record at a time, or raise --max-memory"
                : "; raise --max-memory"));
    }
    TraceReadReport report;
    PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path, size));
    if (DetectImportFormat(bytes) != ImportFormat::kNone) {
      ImportInput in{path, std::move(bytes), std::nullopt};
      if (auto mtime = env->GetModificationTime(path); mtime.ok()) in.mtime_seconds = *mtime;
      PLUMBER_ASSIGN_OR_RETURN(schema::Trace trace, ImportDumps({std::move(in)}, ImportOptions{window.span_seconds}));
      PLUMBER_RETURN_IF_ERROR(CheckModelFits(trace.header(), budget, path));
      // The import placed the dump in time; the span is spent.
      WindowSpec rest = window;
      rest.span_seconds.reset();
      return LoadTrace(trace, rest, path);
    }
    if (!IsTraceContent(bytes)) {
      return NotATraceOrDump(path, bytes);
    }
    PLUMBER_ASSIGN_OR_RETURN(schema::Trace trace, ParseTrace(bytes, path, &report));
    PLUMBER_RETURN_IF_ERROR(CheckModelFits(trace.header(), budget, path));
    return LoadTrace(trace, window, path);
  }
  if (window.span_seconds) {
    return SpanRefused(path);
  }
  // Binary: stream, keeping only the window's bounding snapshots.
  PLUMBER_ASSIGN_OR_RETURN(auto reader, TraceFileReader::Open(env, path, budget / kBinaryBytesPerRecordByte));
  schema::TraceRecord record;
  std::optional<schema::TraceHeader> header;
  std::optional<WindowSelector> selector;
  while (reader->Next(&record)) {
    if (record.has_header()) {
      PLUMBER_RETURN_IF_ERROR(CheckModelFits(record.header(), budget, path));
      header = std::move(*record.mutable_header());
      selector.emplace(window, header->options().warmup_seconds(), NodeNames(*header));
    } else if (record.has_snapshot() && selector) {
      selector->Add(record.mutable_snapshot());
    }
  }
  std::vector<std::string> warnings;
  if (reader->status().code() == Status::Code::kResourceExhausted) {
    // Unlike corruption, a record over the ceiling is not a reason to
    // analyse only what came before it: the answer would silently change
    // with --max-memory.
    return Status::ResourceExhausted(reader->status().message() + " (--max-memory " + Bytes(budget) +
                                     " allows records up to " + Bytes(budget / kBinaryBytesPerRecordByte) + ")");
  }
  if (!reader->status().ok()) {
    if (!header) return reader->status();
    // Everything before a corrupt record is still good data.
    warnings.push_back(reader->status().message() + "; the analysis uses the records before it");
  }
  if (!reader->report().warning.empty()) warnings.push_back(reader->report().warning);
  if (!header) return Status::InvalidArgument(path + ": the trace has no complete header (the run wrote nothing)");
  auto selected = selector->Finish();
  if (!selected.ok()) return selected.status().WithContext(path);
  PLUMBER_ASSIGN_OR_RETURN(LoadedTrace t, Start(std::move(*header), path));
  t.window = std::move(*selected);
  t.warnings = std::move(warnings);
  return t;
}

}  // namespace plumber::analysis
