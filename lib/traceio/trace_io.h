// Trace files: the append-only binary form written during a run, the JSON
// form committed to repositories, and conversion between them.
//
// Binary layout: the 8-byte magic "PLMTRACE", a u32 little-endian format
// version, then framed TraceRecords (record_io.h): one header, snapshots in
// time order, and at most one end record. A run killed at any byte leaves a
// file whose complete records all read back; the incomplete tail is reported
// as a warning, never as an error that loses what came before it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "trace.pb.h"
#include "traceio/format.h"
#include "traceio/record_io.h"

namespace plumber {

inline constexpr char kTraceMagic[8] = {'P', 'L', 'M', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kTraceFormatVersion = 1;
inline constexpr size_t kTracePreambleBytes = 12;

// Writes a trace as the run goes. Every Append is handed to the operating
// system before it returns, so a killed process loses at most the record
// being written. The first failed write (a full disk) is final: every later
// Append and Finish returns it and writes nothing, so the file stays a
// readable prefix of the trace, ending at worst in one torn record.
class TraceWriter {
 public:
  // Writes the preamble and the header. A new `path` is written from the
  // start; an existing one is left as it is, the trace going to a
  // temporary file beside it, until Publish: a run that fails before it
  // has anything to record does not destroy a trace kept from before.
  // Unpublished, the temporary file goes with the writer.
  static StatusOr<std::unique_ptr<TraceWriter>> Create(Env* env, const std::string& path,
                                                       const schema::TraceHeader& header);
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  Status Append(const schema::Snapshot& snapshot);
  // Writes the end record and closes the file. No Append after it.
  Status Finish(const schema::RunEnd& end);
  // Puts the trace at its path (replacing what was there); appends go on.
  // Before, during or after Finish; a second call does nothing.
  Status Publish();
  bool published() const { return published_; }

 private:
  explicit TraceWriter(AtomicFile file);
  Status Write(const schema::TraceRecord& record);

  AtomicFile out_;
  WritableFile* file_;
  bool published_ = false;
  std::unique_ptr<RecordWriter> records_;
  bool finished_ = false;
  Status failed_;
};

// What reading found besides the records.
struct TraceReadReport {
  Encoding encoding = Encoding::kBinary;
  // Records (header, snapshots, end) read.
  uint64_t records = 0;
  // The file ends inside a record: the run was cut short while writing.
  bool torn = false;
  uint64_t torn_offset = 0;
  // Human text for the torn tail, naming the file and offset; empty if none.
  std::string warning;
};

// Streams the records of a binary trace without holding them all.
class TraceFileReader {
 public:
  // Opens and checks the preamble. A file cut inside the preamble opens as
  // an empty, torn trace.
  // A record longer than max_record_bytes stops the reader with
  // ResourceExhausted before it is allocated.
  static StatusOr<std::unique_ptr<TraceFileReader>> Open(Env* env, const std::string& path,
                                                         uint64_t max_record_bytes = UINT64_MAX);
  // The same over an already open file of `size` bytes (e.g. a buffer).
  static StatusOr<std::unique_ptr<TraceFileReader>> FromFile(std::unique_ptr<SequentialFile> file, uint64_t size,
                                                             uint64_t max_record_bytes = UINT64_MAX);
  TraceFileReader(const TraceFileReader&) = delete;
  TraceFileReader& operator=(const TraceFileReader&) = delete;

  // Next record, checked for order (header first, end last). False at the
  // end, at a torn tail, or on error (see status()).
  bool Next(schema::TraceRecord* record);
  const Status& status() const { return status_; }
  // Valid once Next has returned false.
  const TraceReadReport& report() const { return report_; }

 private:
  // preamble_bytes: how much of the preamble the file holds.
  TraceFileReader(std::string path, std::unique_ptr<SequentialFile> file, uint64_t size, bool torn_preamble,
                  uint64_t preamble_bytes);

  std::string path_;
  std::unique_ptr<SequentialFile> file_;
  std::unique_ptr<RecordReader> reader_;
  bool seen_header_ = false;
  bool seen_end_ = false;
  Status status_;
  TraceReadReport report_;
  std::string payload_;
};

// Reads a whole trace, binary or JSON (detected by content). A torn tail is
// not an error: the report says where it is. A JSON trace must have a header.
StatusOr<schema::Trace> ReadTrace(Env* env, const std::string& path, TraceReadReport* report = nullptr);
// Only the header: the first record of a binary trace (nothing else is
// read), or the header of a JSON trace.
StatusOr<schema::TraceHeader> ReadTraceHeader(Env* env, const std::string& path);

// Parses a whole trace from memory; `source` names it in errors.
StatusOr<schema::Trace> ParseTrace(std::string_view bytes, const std::string& source,
                                   TraceReadReport* report = nullptr);

// The binary file image of a whole trace.
std::string SerializeTraceBinary(const schema::Trace& trace);
// Atomic: the file is whole or untouched.
Status WriteTrace(Env* env, const std::string& path, const schema::Trace& trace, Encoding encoding);

// True when the bytes start like a binary trace (or a prefix of its magic).
bool LooksLikeBinaryTrace(std::string_view bytes);

// False only for a snapshot record none of whose messages holds a field
// this version does not know; true for any other record. The reader drops
// unknown fields (JSON could not carry them) by DiscardUnknownFields, which
// walks every field by reflection and cost 3x the parse of a snapshot, so
// it asks this first. Snapshot's own messages hold no messages of their
// own (a test holds the schema to that).
bool MayHoldUnknownFields(const schema::TraceRecord& record);

// True for a binary trace, or a JSON object with a "header" or "snapshots"
// key; anything else is taken for a pipeline definition.
bool IsTraceContent(std::string_view bytes);

}  // namespace plumber
