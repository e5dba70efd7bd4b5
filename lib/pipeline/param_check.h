// Problems with a pipeline definition, and the checker an op's row reports
// its parameters' problems to. Every problem names the node and the JSON
// field path, so a user can find the mistake in the file they edit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline.pb.h"

namespace plumber {

// One thing wrong with a pipeline, located by node and field.
struct Problem {
  std::string node;   // empty for pipeline-wide problems
  std::string field;  // JSON path within the node, e.g. "map.udf[1].op"
  std::string message;

  // "node 'decode': field 'map.parallelism': must be >= 1, got 0"
  std::string ToString() const;
};

// A name as problems quote it: 'decode'.
std::string Quote(std::string_view s);

// The most threads (or interleave cycle slots) one node may ask for.
inline constexpr int64_t kMaxParallelism = 1024;

// Collects the problems of one node's parameters. The checks shared by
// several ops (bounds, thread counts, compression, UDFs) live here so that
// each says the same thing wherever it applies.
class ParamChecker {
 public:
  // `in_function`: the node is part of an interleave function (a reader
  // there may take its file from the interleave). `is_node` says whether a
  // name is a node of the pipeline.
  ParamChecker(const schema::Node& node, bool in_function, std::function<bool(const std::string&)> is_node,
               std::vector<Problem>* out);

  const schema::Node& node() const { return node_; }
  // The program was imported (Pipeline.imported_from): it is analysed, never
  // run, so what only running needs (a UDF, a reader's files, a buffer size
  // the source did not record) is not required.
  bool imported() const { return imported_; }
  void set_imported(bool imported) { imported_ = imported; }
  bool IsNode(const std::string& name) const { return is_node_(name); }

  void Add(std::string field, std::string message);
  // value >= lo.
  void Min(const std::string& field, int64_t value, int64_t lo);
  // A count of threads or open inputs: 1 to kMaxParallelism, so a typo of
  // 100000 is refused here rather than exhausting the machine mid-run.
  void Threads(const std::string& field, int64_t value);
  // "", "GZIP" or "ZLIB".
  void Compression(const std::string& field, const std::string& compression);
  // A reader's files: listed, read from an input, or handed by an
  // interleave; exactly one of them.
  void ReaderSource(int files);
  // Each step is a known UDF op with valid arguments; a predicate op only
  // ends a filter, and a filter ends in one.
  void Udf(const std::string& field, const google::protobuf::RepeatedPtrField<schema::UdfOp>& udf, bool is_filter);

 private:
  void UdfArgs(const std::string& where, const struct UdfOpDef& def, const schema::UdfOp& step);

  const schema::Node& node_;
  bool in_function_;
  bool imported_ = false;
  std::function<bool(const std::string&)> is_node_;
  std::vector<Problem>* out_;
};

}  // namespace plumber
