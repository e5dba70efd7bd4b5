// Trace files: preamble, framed records, order checks, JSON conversion.
#include "traceio/trace_io.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "base/number_format.h"

namespace plumber {
namespace {

std::string Preamble() {
  std::string out(kTraceMagic, sizeof(kTraceMagic));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((kTraceFormatVersion >> (8 * i)) & 0xff));
  return out;
}

std::string TornWarning(const std::string& path, uint64_t offset, uint64_t records) {
  return path + ": the trace ends inside a record at offset " + std::to_string(offset) +
         " (the run was cut short); using the " + FormatCount(records, "complete record", "complete records") +
         " before it";
}

}  // namespace

bool MayHoldUnknownFields(const schema::TraceRecord& record) {
  if (!record.has_snapshot()) return true;
  // One look at each message's own unknown set: a pointer test, where
  // DiscardUnknownFields visits every field.
  auto holds = [](const google::protobuf::Message& m) { return !m.GetReflection()->GetUnknownFields(m).empty(); };
  const schema::Snapshot& s = record.snapshot();
  if (holds(record) || holds(s) || holds(s.root()) || holds(s.dataloader())) return true;
  for (const auto& n : s.nodes()) {
    if (holds(n)) return true;
  }
  return false;
}

bool LooksLikeBinaryTrace(std::string_view bytes) {
  const size_t n = std::min(bytes.size(), sizeof(kTraceMagic));
  return n > 0 && std::memcmp(bytes.data(), kTraceMagic, n) == 0;
}

bool IsTraceContent(std::string_view bytes) {
  if (LooksLikeBinaryTrace(bytes)) return true;
  if (DetectEncoding(bytes) != Encoding::kJson) return false;
  const auto json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  return json.is_object() && (json.contains("header") || json.contains("snapshots"));
}

// ---- Writer ---------------------------------------------------------------

TraceWriter::TraceWriter(AtomicFile file)
    : out_(std::move(file)), file_(out_.file()), records_(std::make_unique<RecordWriter>(file_)) {}

TraceWriter::~TraceWriter() = default;  // out_ closes, and removes an unpublished file

StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(Env* env, const std::string& path,
                                                           const schema::TraceHeader& header) {
  const bool keep_existing = env->FileExists(path);
  auto file = AtomicFile::Create(env, path);
  if (!file.ok()) return AsWriteError(file.status(), path);
  std::unique_ptr<TraceWriter> writer(new TraceWriter(std::move(*file)));
  // A new path is readable from the first record on, as the run goes.
  if (!keep_existing) PLUMBER_RETURN_IF_ERROR(writer->Publish());
  if (Status s = writer->file_->Append(Preamble()); !s.ok()) return AsWriteError(s, path);
  schema::TraceRecord record;
  *record.mutable_header() = header;
  PLUMBER_RETURN_IF_ERROR(writer->Write(record));
  return writer;
}

Status TraceWriter::Publish() {
  if (published_) return Status::OK();
  Status s = AsWriteError(out_.Publish(), out_.path());
  // A failed rename removed the file: nothing more may be written to it.
  if (!s.ok()) {
    if (failed_.ok()) failed_ = s;
    return s;
  }
  published_ = true;
  return s;
}

Status TraceWriter::Write(const schema::TraceRecord& record) {
  if (finished_) return Status::FailedPrecondition(out_.path() + ": write after the trace was finished");
  // After a failed write the file may end inside a record; anything
  // appended behind that would be lost to readers, or read as garbage.
  if (!failed_.ok()) return failed_;
  Status s = records_->AddRecord(SerializeDeterministic(record));
  if (s.ok()) s = file_->Flush();
  if (!s.ok()) failed_ = s = AsWriteError(s, out_.path());
  return s;
}

Status TraceWriter::Append(const schema::Snapshot& snapshot) {
  schema::TraceRecord record;
  *record.mutable_snapshot() = snapshot;
  return Write(record);
}

Status TraceWriter::Finish(const schema::RunEnd& end) {
  schema::TraceRecord record;
  *record.mutable_end() = end;
  Status s = Write(record);
  finished_ = true;
  Status c = AsWriteError(out_.Close(), out_.path());
  return s.ok() ? c : s;
}

// ---- Streaming reader -----------------------------------------------------

TraceFileReader::TraceFileReader(std::string path, std::unique_ptr<SequentialFile> file, uint64_t size,
                                 bool torn_preamble, uint64_t preamble_bytes)
    : path_(std::move(path)), file_(std::move(file)) {
  if (torn_preamble) {
    // Where the file ends, not where the preamble starts: 8 after the magic.
    report_.torn = true;
    report_.torn_offset = preamble_bytes;
    report_.warning = path_ + ": the trace ends at offset " + std::to_string(preamble_bytes) + ", inside its " +
                      std::to_string(kTracePreambleBytes) + "-byte preamble (the run was cut short); it holds no record";
  } else {
    reader_ = std::make_unique<RecordReader>(file_.get(), size, kTracePreambleBytes);
  }
}

StatusOr<std::unique_ptr<TraceFileReader>> TraceFileReader::Open(Env* env, const std::string& path,
                                                                 uint64_t max_record_bytes) {
  PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env->GetFileSize(path));
  PLUMBER_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
  return FromFile(std::move(file), size, max_record_bytes);
}

StatusOr<std::unique_ptr<TraceFileReader>> TraceFileReader::FromFile(std::unique_ptr<SequentialFile> file,
                                                                     uint64_t size, uint64_t max_record_bytes) {
  const std::string path = file->path();
  char scratch[kTracePreambleBytes];
  std::string_view got;
  PLUMBER_RETURN_IF_ERROR(ReadFully(file.get(), kTracePreambleBytes, &got, scratch));
  if (!LooksLikeBinaryTrace(got)) {
    return Status::InvalidArgument(path + ": not a plumber trace (neither JSON nor a file starting with PLMTRACE)");
  }
  const bool torn = got.size() < kTracePreambleBytes;
  if (!torn) {
    uint32_t version = 0;
    for (int i = 3; i >= 0; --i) version = (version << 8) | static_cast<unsigned char>(got[8 + i]);
    if (version != kTraceFormatVersion) {
      return Status::InvalidArgument(path + ": trace format version " + std::to_string(version) +
                                     " is not supported (this plumber reads version " +
                                     std::to_string(kTraceFormatVersion) + ")");
    }
  }
  std::unique_ptr<TraceFileReader> reader(new TraceFileReader(path, std::move(file), size, torn, got.size()));
  if (reader->reader_) reader->reader_->set_max_payload(max_record_bytes);
  return reader;
}

bool TraceFileReader::Next(schema::TraceRecord* record) {
  if (!reader_ || !status_.ok()) return false;
  if (!reader_->Read(&payload_)) {
    status_ = reader_->status();
    report_.records = reader_->records_read();
    if (reader_->torn()) {
      report_.torn = true;
      report_.torn_offset = reader_->torn_offset();
      report_.warning = TornWarning(path_, report_.torn_offset, report_.records);
    }
    return false;
  }
  const std::string where = path_ + ": record " + std::to_string(reader_->records_read() - 1) + " at offset " +
                            std::to_string(reader_->record_offset());
  if (!record->ParseFromString(payload_)) {
    status_ = Status::Corruption(where + ": the payload is not a trace record");
    return false;
  }
  // As for pipelines: JSON could not carry them. Walking a record by
  // reflection costs more than parsing it, so snapshots, most of a trace,
  // are checked directly first.
  if (MayHoldUnknownFields(*record)) record->DiscardUnknownFields();
  const bool is_header = record->has_header();
  if (seen_end_) {
    status_ = Status::Corruption(where + ": a record follows the end record");
  } else if (!seen_header_ && !is_header) {
    status_ = Status::Corruption(where + ": the trace must start with its header");
  } else if (seen_header_ && is_header) {
    status_ = Status::Corruption(where + ": a second header");
  } else if (record->kind_case() == schema::TraceRecord::KIND_NOT_SET) {
    status_ = Status::Corruption(where + ": an empty record");
  }
  if (!status_.ok()) return false;
  seen_header_ = true;
  seen_end_ = record->has_end();
  report_.records = reader_->records_read();
  return true;
}

// ---- Whole traces -----------------------------------------------------------

namespace {

Status CollectBinary(TraceFileReader& reader, schema::Trace* trace, TraceReadReport* report) {
  schema::TraceRecord record;
  while (reader.Next(&record)) {
    switch (record.kind_case()) {
      case schema::TraceRecord::kHeader: *trace->mutable_header() = std::move(*record.mutable_header()); break;
      case schema::TraceRecord::kSnapshot: *trace->add_snapshots() = std::move(*record.mutable_snapshot()); break;
      case schema::TraceRecord::kEnd: *trace->mutable_end() = std::move(*record.mutable_end()); break;
      default: break;
    }
  }
  PLUMBER_RETURN_IF_ERROR(reader.status());
  if (report) *report = reader.report();
  return Status::OK();
}

}  // namespace

StatusOr<schema::Trace> ParseTrace(std::string_view bytes, const std::string& source, TraceReadReport* report) {
  schema::Trace trace;
  if (DetectEncoding(bytes) == Encoding::kJson) {
    PLUMBER_RETURN_IF_ERROR(JsonToMessage(bytes, source, &trace));
    if (!trace.has_header()) return Status::InvalidArgument(source + ": the trace has no header");
    if (report) {
      *report = TraceReadReport{};
      report->encoding = Encoding::kJson;
      report->records = 1 + trace.snapshots_size() + (trace.has_end() ? 1 : 0);
    }
    return trace;
  }
  PLUMBER_ASSIGN_OR_RETURN(auto reader, TraceFileReader::FromFile(NewMemorySequentialFile(bytes, source), bytes.size()));
  PLUMBER_RETURN_IF_ERROR(CollectBinary(*reader, &trace, report));
  return trace;
}

StatusOr<schema::Trace> ReadTrace(Env* env, const std::string& path, TraceReadReport* report) {
  PLUMBER_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path, uint64_t{16} << 30));
  if (bytes.empty()) return Status::InvalidArgument(path + ": the file is empty");
  return ParseTrace(bytes, path, report);
}

StatusOr<schema::TraceHeader> ReadTraceHeader(Env* env, const std::string& path) {
  char first = 0;
  {
    PLUMBER_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
    char scratch[64];
    std::string_view got;
    PLUMBER_RETURN_IF_ERROR(ReadFully(file.get(), sizeof(scratch), &got, scratch));
    if (got.empty()) return Status::InvalidArgument(path + ": the file is empty");
    first = DetectEncoding(got) == Encoding::kJson ? '{' : got[0];
  }
  if (first == '{') {
    PLUMBER_ASSIGN_OR_RETURN(schema::Trace trace, ReadTrace(env, path));
    return std::move(*trace.mutable_header());
  }
  PLUMBER_ASSIGN_OR_RETURN(auto reader, TraceFileReader::Open(env, path));
  schema::TraceRecord record;
  if (!reader->Next(&record)) {
    PLUMBER_RETURN_IF_ERROR(reader->status());
    return Status::InvalidArgument(path + ": the trace has no complete header (the run was cut short at once)");
  }
  return std::move(*record.mutable_header());
}

std::string SerializeTraceBinary(const schema::Trace& trace) {
  std::string out = Preamble();
  auto add = [&](const schema::TraceRecord& record) { out += FrameRecord(SerializeDeterministic(record)); };
  schema::TraceRecord record;
  *record.mutable_header() = trace.header();
  add(record);
  for (const auto& snap : trace.snapshots()) {
    *record.mutable_snapshot() = snap;
    add(record);
  }
  if (trace.has_end()) {
    *record.mutable_end() = trace.end();
    add(record);
  }
  return out;
}

Status WriteTrace(Env* env, const std::string& path, const schema::Trace& trace, Encoding encoding) {
  return WriteFileAtomically(env, path, encoding == Encoding::kJson ? MessageToJson(trace) : SerializeTraceBinary(trace));
}

}  // namespace plumber
