// Comparing the outputs of two pipelines; see output_check.h.
#include "optimize/output_check.h"

#include <algorithm>
#include <vector>

#include "pipeline/program_graph.h"
#include "runtime/program.h"
#include "runtime/storage.h"
#include "runtime/tensor.h"

namespace plumber::optimize {
namespace {

// The first `n` elements of `pipeline`, each serialized: bytes compare
// exactly, whatever the tensors hold.
StatusOr<std::vector<std::string>> FirstElements(Env* env, const schema::Pipeline& pipeline,
                                                 const std::string& base_dir, int64_t n, const std::string& which) {
  auto graph = ProgramGraph::Build(pipeline, which);
  if (!graph.ok()) return graph.status();
  auto program = runtime::Program::Build(*graph, runtime::BuildContext{env, base_dir});
  if (!program.ok()) return program.status().WithContext(which);
  runtime::Storage storage(env, runtime::StorageOptions{});
  runtime::RunContext run{&storage, /*tracing=*/false};
  auto it = (*program)->output()->MakeIterator(runtime::IterCtx{&run, nullptr, nullptr});
  if (!it.ok()) return it.status().WithContext(which);
  std::vector<std::string> out;
  Status s;
  while (static_cast<int64_t>(out.size()) < n) {
    runtime::Element e;
    bool end = false;
    s = (*it)->GetNext(&e, &end);
    if (!s.ok() || end) break;
    out.push_back(runtime::SerializeElement(e));
  }
  (*it)->Close();
  if (!s.ok()) return s.WithContext(which);
  return out;
}

}  // namespace

StatusOr<OutputCheck> CompareOutputs(Env* env, const schema::Pipeline& original, const schema::Pipeline& rewritten,
                                     const std::string& base_dir, int64_t n, bool any_order) {
  PLUMBER_ASSIGN_OR_RETURN(std::vector<std::string> want, FirstElements(env, original, base_dir, n, "the original"));
  PLUMBER_ASSIGN_OR_RETURN(std::vector<std::string> got, FirstElements(env, rewritten, base_dir, n, "the rewrite"));
  OutputCheck check;
  check.compared = static_cast<int64_t>(std::min(want.size(), got.size()));
  if (want.size() != got.size()) {
    check.difference = "the rewrite ends after " + std::to_string(got.size()) + " elements, the original after " +
                       std::to_string(want.size());
    return check;
  }
  if (any_order) {
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want != got) check.difference = "the rewrite yields other elements (compared in any order)";
  } else {
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] != got[i]) {
        check.difference = "element " + std::to_string(i) + " differs";
        break;
      }
    }
  }
  check.same = check.difference.empty();
  return check;
}

rewrite::ShapeVerifier OutputVerifier(Env* env, std::string base_dir, int n) {
  return [env, dir = std::move(base_dir), n](const schema::Pipeline& traced,
                                             const schema::Pipeline& reshaped) -> StatusOr<rewrite::ShapeVerdict> {
    auto check = CompareOutputs(env, traced, reshaped, dir, n, /*any_order=*/false);
    if (!check.ok()) return check.status();
    if (!check->same) return rewrite::ShapeVerdict{false, check->difference};
    return rewrite::ShapeVerdict{true, "the first " + std::to_string(check->compared) +
                                           " outputs are the same, in order"};
  };
}

}  // namespace plumber::optimize
