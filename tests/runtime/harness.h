// Shared helpers for the runtime tests: pipelines from short JSON node
// lists, draining a pipeline into a vector, temporary directories.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pipeline/validate.h"
#include "runtime/datagen.h"
#include "runtime/program.h"
#include "traceio/pipeline_io.h"

namespace plumber::runtime::testing {

// Sanitizer builds (every memory access instrumented) run tight loops and
// memory copies several to tens of times slower: bounds on measured costs
// say so where they use it.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Chains nodes given as JSON objects: a node without "inputs" reads from
// the node before it (sources aside). The last node is the output.
inline schema::Pipeline Chain(const std::vector<std::string>& nodes, const std::vector<std::string>& extra = {}) {
  std::string json = R"({"name":"t","nodes":[)";
  std::string previous;
  bool first = true;
  auto add = [&](std::string node, bool chain) {
    // Insert "inputs" unless present or the op is a source.
    // Readers given files are sources; without files they read names.
    const bool source = node.find("\"op\":\"range\"") != std::string::npos ||
                        node.find("\"op\":\"list_files\"") != std::string::npos ||
                        node.find("\"files\":[") != std::string::npos;
    if (chain && !source && node.find("\"inputs\"") == std::string::npos && !previous.empty()) {
      node.insert(node.size() - 1, R"(,"inputs":[")" + previous + "\"]");
    }
    json += (first ? "" : ",") + node;
    first = false;
  };
  for (const auto& n : extra) add(n, false);
  for (const auto& n : nodes) {
    add(n, true);
    const auto at = n.find("\"name\":\"") + 8;
    previous = n.substr(at, n.find('"', at) - at);
  }
  json += "]}";
  auto p = ParsePipeline(json, "test pipeline");
  INFO(json);
  REQUIRE(p.ok());
  std::string problems;
  for (const auto& pr : ValidatePipeline(*p)) problems += pr.ToString() + "\n";
  INFO(problems);
  REQUIRE(problems.empty());
  return *p;
}

// The validated graph of a pipeline the test wrote; the test fails if it
// is invalid.
inline ProgramGraph Graph(const schema::Pipeline& p) {
  auto g = ProgramGraph::Build(p, "test pipeline");
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

// Builds a program and opens its output.
class Harness {
 public:
  // `env` (the fault-injection tests give their own) must outlive it.
  explicit Harness(const schema::Pipeline& p, StorageOptions so = {}, bool tracing = true, std::string base_dir = "",
                   Env* env = Env::Default())
      : storage_(env, so), ctx_{&storage_, tracing} {
    auto graph = ProgramGraph::Build(p, "test pipeline");
    if (!graph.ok()) {
      build_status_ = graph.status();
      return;
    }
    auto prog = Program::Build(*graph, BuildContext{env, std::move(base_dir)});
    if (!prog.ok()) {
      build_status_ = prog.status();
      return;
    }
    program_ = std::move(prog).value();
  }

  const Status& build_status() const { return build_status_; }

  // Opens a fresh pass and drains it (at most `limit` elements).
  Status Collect(std::vector<Element>* out, int64_t limit = -1) {
    REQUIRE(program_);
    out->clear();
    auto it = program_->output()->MakeIterator(IterCtx{&ctx_, nullptr, nullptr});
    if (!it.ok()) return it.status();
    Status s;
    while (limit < 0 || static_cast<int64_t>(out->size()) < limit) {
      Element e;
      bool end = false;
      s = (*it)->GetNext(&e, &end);
      if (!s.ok() || end) break;
      out->push_back(std::move(e));
    }
    (*it)->Close();
    cpu::Flush();
    return s;
  }

  std::vector<Element> All() {
    std::vector<Element> out;
    Status s = Collect(&out);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return out;
  }

  // Component 0 of each element as int64 scalars.
  std::vector<int64_t> Ints() {
    std::vector<int64_t> v;
    for (const auto& e : All()) {
      REQUIRE(e.size() >= 1);
      REQUIRE(e[0].NumElements() == 1);
      v.push_back(e[0].GetInt(0));
    }
    return v;
  }

  NodeCounters& Counters(const std::string& name) {
    auto* c = const_cast<NodeCounters*>(program_->stats().Find(name));
    REQUIRE(c != nullptr);
    return *c;
  }
  int64_t Get(const std::string& name, std::atomic<int64_t> NodeCounters::*field) {
    return (Counters(name).*field).load();
  }
  schema::NodeStats Stats(const std::string& name) {
    schema::NodeStats s;
    Counters(name).Fill(&s);
    return s;
  }
  Program& program() { return *program_; }
  RunContext& ctx() { return ctx_; }

 private:
  Storage storage_;
  RunContext ctx_;
  Status build_status_;
  std::unique_ptr<Program> program_;
};

// A fresh directory under the system temp dir, removed at scope end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "plumber-rt-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteText(const std::string& path, const std::string& text) {
  REQUIRE(WriteFileAtomically(Env::Default(), path, text).ok());
}

// A temporary directory (named after `prefix`) holding one file,
// "train-00000-of-00001.tfrecord", of `records` generated JPEGs `side`
// pixels square, drawn with `seed`: the data of tests that run image
// pipelines.
inline ScopedTempDir ImageDir(const std::string& prefix, int records, int side, uint64_t seed = 1) {
  auto dir = ScopedTempDir::Make(Env::Default(), prefix);
  REQUIRE(dir.ok());
  ImageGenOptions gen;
  gen.files = 1;
  gen.records_per_file = records;
  gen.width = gen.height = side;
  gen.seed = seed;
  REQUIRE(GenerateImages(Env::Default(), dir->path(), gen).ok());
  return std::move(*dir);
}

}  // namespace plumber::runtime::testing
