// Every op of the op tables has a runtime implementation, and the runtime's
// self-description agrees with the tables.
#include "harness.h"
#include "pipeline/op_table.h"
#include "pipeline/udf_table.h"
#include "runtime/udf.h"

namespace plumber::runtime::testing {
namespace {

TEST_CASE("every dataset op of AllOps() has a factory", "[registry]") {
  for (const auto& op : AllOps()) {
    INFO(op.name);
    CHECK((FindDatasetFactory(op) != nullptr || op.imported_only));
  }
  OpDef unknown;
  unknown.params_case = schema::Node::PARAMS_NOT_SET;
  CHECK(FindDatasetFactory(unknown) == nullptr);
}

TEST_CASE("every UDF op of AllUdfOps() builds with its required arguments", "[registry]") {
  for (const auto& def : AllUdfOps()) {
    INFO(def.name);
    schema::UdfOp spec;
    spec.set_op(std::string(def.name));
    for (const auto& arg : def.args) {
      if (!arg.required) continue;
      auto& v = (*spec.mutable_args())[std::string(arg.name)];
      switch (arg.type) {
        case ArgType::kNumber: v.set_number_value(1); break;
        case ArgType::kString: v.set_string_value(def.name == "decompress" ? "zstd" : "x"); break;
        case ArgType::kBool: v.set_bool_value(true); break;
        case ArgType::kStringList: v.mutable_list_value()->add_values()->set_string_value("x"); break;
        case ArgType::kNumberList: v.mutable_list_value()->add_values()->set_number_value(1); break;
      }
    }
    // label_in has no one required argument but needs values or a range.
    if (def.name == "label_in") (*spec.mutable_args())["values"].mutable_list_value()->add_values()->set_number_value(1);
    auto op = MakeUdfOp(spec);
    INFO(op.status().ToString());
    CHECK(op.ok());
    if (def.predicate && op.ok()) CHECK((*op)->Test(Element{Tensor::Scalar(1)}).ok());
  }
}

TEST_CASE("datasets describe their parallelism as the tables do", "[registry]") {
  auto p = Chain({R"({"name":"r","op":"range","range":{"stop":8}})",
                  R"({"name":"m","op":"map","map":{"parallelism":3,"udf":[{"op":"add"}]}})",
                  R"({"name":"b","op":"batch","batch":{"batch_size":2,"parallelism":2}})"});
  Harness h(p);
  for (const auto& node : p.nodes()) {
    INFO(node.name());
    CHECK(h.program().Find(node.name())->Parallelism() == NodeParallelism(node));
  }
}

}  // namespace
}  // namespace plumber::runtime::testing
