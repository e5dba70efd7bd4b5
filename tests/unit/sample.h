// Small traces and pipelines built in code for the traceio tests.
#pragma once

#include <string>

#include "base/env.h"
#include "trace.pb.h"
#include "traceio/pipeline_io.h"

namespace plumber::testing {

inline std::string TestdataPath(const std::string& rel) { return std::string(PLUMBER_SOURCE_DIR) + "/testdata/" + rel; }

inline schema::Pipeline LoadTestPipeline(const std::string& rel) {
  auto p = LoadProgram(Env::Default(), TestdataPath(rel));
  if (!p.ok()) throw std::runtime_error(p.status().ToString());
  return p->program();
}

// The cpu pipeline with `snapshots` snapshots one second apart, counters
// growing linearly, and an end record.
inline schema::Trace SampleTrace(int snapshots = 4) {
  schema::Trace t;
  auto* h = t.mutable_header();
  h->set_tool_version("0.1.0");
  *h->mutable_program() = LoadTestPipeline("pipelines/cpu.json");
  h->mutable_machine()->set_cores(8);
  h->mutable_machine()->set_memory_bytes(int64_t{16} << 30);
  h->mutable_options()->set_snapshot_every_seconds(1);
  for (int i = 1; i <= snapshots; ++i) {
    auto* s = t.add_snapshots();
    s->set_wall_ns(int64_t{i} * 1'000'000'000);
    const char* names[] = {"source", "burn", "batch"};
    for (int k = 0; k < 3; ++k) {
      auto* n = s->add_nodes();
      n->set_name(names[k]);
      n->set_elements_produced(k == 2 ? 30 * i : 960 * i);
      n->set_bytes_produced(k == 2 ? 7680 * i : 7680 * i);
      n->set_active_cpu_ns(k == 1 ? int64_t{960'000'000} * i : 1'000'000 * i);
      n->set_parallelism(1);
    }
    s->mutable_root()->set_next_calls(30 * i);
  }
  t.mutable_end()->set_status("ok");
  return t;
}

}  // namespace plumber::testing
