// The UDF op library: the named ops a map or filter applies to each element
// (every row of the UDF op table, lib/pipeline/udf_table.h, has one). Arguments
// are checked when the op is built, so Apply only fails on bad data. Random
// ops draw from a generator seeded by their seed, the element's position in
// the pass and the epoch, so a run is reproducible whatever the parallelism.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline.pb.h"
#include "runtime/tensor.h"

namespace plumber::runtime {

// Where the element stands, for seeding random ops.
struct UdfCtx {
  uint64_t element_index = 0;
  uint64_t epoch = 0;
};

class UdfOp {
 public:
  UdfOp() = default;
  UdfOp(const UdfOp&) = delete;
  UdfOp& operator=(const UdfOp&) = delete;
  virtual ~UdfOp() = default;

  // Transforms *e in place. Errors say what about the element is wrong.
  virtual Status Apply(Element* e, const UdfCtx& ctx) const = 0;
  // Predicate ops only: whether e passes.
  virtual StatusOr<bool> Test(const Element& e) const;
};

// Builds the op `spec` names; InvalidArgument for unknown ops or bad
// arguments.
StatusOr<std::unique_ptr<UdfOp>> MakeUdfOp(const schema::UdfOp& spec);

// A sequence of ops, as a map's udf or a filter's predicate.
class Udf {
 public:
  static StatusOr<Udf> Make(const google::protobuf::RepeatedPtrField<schema::UdfOp>& specs);
  // Applies every op in order.
  Status Apply(Element* e, const UdfCtx& ctx) const;
  // Applies all ops but the last to a copy of e, then tests with the last.
  StatusOr<bool> Test(const Element& e, const UdfCtx& ctx) const;

 private:
  std::vector<std::shared_ptr<const UdfOp>> ops_;
  std::vector<std::string> names_;
};

// Iterations of the cpu_burn loop per microsecond of thread CPU time,
// measured once per process.
double BurnIterationsPerMicro();
// Runs the cpu_burn loop; returns its result so the work cannot be elided.
uint64_t BurnLoop(uint64_t iterations);

// 64-bit mixer (splitmix64): seeds from (seed, index, epoch).
uint64_t MixSeed(uint64_t seed, uint64_t index, uint64_t epoch);

}  // namespace plumber::runtime
