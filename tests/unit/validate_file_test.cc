// What `plumber validate` makes of each kind of file in testdata/
// (traceio/validate_file.h): pipelines, plumber traces and the importers'
// dumps are told apart by content, and problems come back as data while
// unreadable files are errors naming the file.
#include <catch2/catch.hpp>

#include <string>

#include "base/mem_env.h"
#include "traceio/validate_file.h"

using namespace plumber;

namespace {

StatusOr<FileValidation> Validate(const std::string& relative) {
  return ValidateFile(Env::Default(), std::string(PLUMBER_SOURCE_DIR) + "/testdata/" + relative);
}

}  // namespace

TEST_CASE("validate file: a pipeline is a pipeline, JSON, valid", "[validate_file]") {
  auto v = Validate("pipelines/cpu.json");
  REQUIRE(v.ok());
  CHECK_FALSE(v->is_trace());
  CHECK(v->read.encoding == Encoding::kJson);
  CHECK(v->program.name() == "cpu");
  CHECK(v->program.nodes_size() == 3);
  CHECK(v->problems.empty());
}

TEST_CASE("validate file: a plumber trace is a trace, with its program", "[validate_file]") {
  auto v = Validate("traces/cpu.json");
  REQUIRE(v.ok());
  REQUIRE(v->is_trace());
  CHECK(v->read.encoding == Encoding::kJson);
  CHECK(v->read.records == 8);
  CHECK(v->program.name() == "cpu");
  CHECK(v->problems.empty());
}

TEST_CASE("validate file: tf.data and PipelineSnapshot dumps are validated as their imported traces",
          "[validate_file]") {
  for (const char* dump : {"tfdata/map_interleave.pb", "pipeline_snapshot/run_a.pb"}) {
    INFO(dump);
    auto v = Validate(dump);
    REQUIRE(v.ok());
    CHECK(v->is_trace());
    CHECK(v->program.nodes_size() > 0);
    CHECK(v->problems.empty());
  }
  auto tf = Validate("tfdata/map_interleave.pb");
  REQUIRE(tf.ok());
  CHECK(tf->program.name() == "tf.data pipeline");
  CHECK(tf->program.nodes_size() == 6);
}

TEST_CASE("validate file: problems are data, unreadable files are errors", "[validate_file]") {
  auto cycle = Validate("bad/cycle.json");
  REQUIRE(cycle.ok());
  CHECK_FALSE(cycle->is_trace());
  REQUIRE(cycle->problems.size() == 1);
  CHECK(cycle->problems[0].ToString().find("the pipeline has a cycle through 'again', 'loop'") != std::string::npos);

  auto syntax = Validate("bad/syntax.json");
  CHECK(syntax.status().code() == Status::Code::kInvalidArgument);
  CHECK(syntax.status().message().find("bad/syntax.json:4:38: invalid JSON") != std::string::npos);

  auto missing = Validate("no/such/file.json");
  CHECK(missing.status().code() == Status::Code::kNotFound);

  auto mem = NewMemEnv(Env::Default());
  REQUIRE(WriteFileAtomically(mem.get(), "empty.json", "").ok());
  auto empty = ValidateFile(mem.get(), "empty.json");
  CHECK(empty.status().code() == Status::Code::kInvalidArgument);
  CHECK(empty.status().message() == "empty.json: the file is empty");
}
