// The demo's dataset and pipeline; see demo.h.
#include "optimize/demo.h"

#include <filesystem>

#include <fmt/format.h>

#include "base/units.h"
#include "runtime/datagen.h"
#include "traceio/pipeline_io.h"

namespace plumber::optimize {
namespace {

// examples/image.json, with the crop as a parameter so the small dataset's
// smaller images fit it. Kept inline: the demo must not depend on the
// source tree being present where the binary runs.
constexpr const char* kImagePipeline = R"({
  "name": "image",
  "description": "Image classification input, naive (parallelism 1, no prefetch): read TFRecord shards through an interleave, parse, decode and augment, batch.",
  "nodes": [
    {"name": "files", "op": "list_files", "list_files": {"pattern": "data/train-*.tfrecord"}},
    {"name": "read", "op": "tfrecord"},
    {"name": "shards", "op": "interleave", "inputs": ["files"],
     "interleave": {"function": "read", "cycle_length": 4, "block_length": 1, "parallelism": 1}},
    {"name": "decode", "op": "map", "inputs": ["shards"],
     "map": {"parallelism": 1, "udf": [
       {"op": "parse_example", "args": {"features": ["image/encoded", "image/class/label"]}},
       {"op": "decode_jpeg", "args": {"channels": 3}},
       {"op": "random_crop", "args": {"height": CROP, "width": CROP, "seed": 7}},
       {"op": "random_flip_left_right", "args": {"seed": 8}},
       {"op": "normalize", "args": {"mean": [123.7, 116.3, 103.5], "std": [58.4, 57.1, 57.4]}}
     ]}},
    {"name": "repeat", "op": "repeat", "inputs": ["decode"]},
    {"name": "batch", "op": "batch", "inputs": ["repeat"], "batch": {"batch_size": BATCH, "drop_remainder": true}}
  ]
})";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

StatusOr<DemoSetup> PrepareDemo(Env* env, const std::string& dir, bool small) {
  runtime::ImageGenOptions gen;
  gen.seed = 1;
  int crop = 224, batch = 32;
  DemoSetup setup;
  if (small) {
    // A few seconds in all: tiny images, short runs, two steps.
    gen.files = 2;
    gen.records_per_file = 32;
    gen.width = gen.height = 128;
    crop = 112;
    batch = 8;
    setup.options.seconds_per_run = 1.0;
    setup.options.max_steps = 2;
  } else {
    // The dataset of examples/README.md at a size that generates in a few
    // seconds; runs long enough for steady rates on a loaded machine.
    gen.files = 8;
    gen.records_per_file = 64;
    gen.width = gen.height = 256;
    setup.options.seconds_per_run = 5.0;
    setup.options.max_steps = 4;
  }
  const std::string data = (std::filesystem::path(dir) / "data").string();
  PLUMBER_RETURN_IF_ERROR(env->CreateDirectories(data));
  PLUMBER_ASSIGN_OR_RETURN(std::vector<std::string> files, runtime::GenerateImages(env, data, gen));
  double bytes = 0;
  for (const auto& f : files) {
    PLUMBER_ASSIGN_OR_RETURN(uint64_t size, env->GetFileSize(f));
    bytes += static_cast<double>(size);
  }
  setup.data_summary = fmt::format("{} TFRecord shards, {} JPEGs of {}x{}, {}", files.size(),
                                   gen.files * gen.records_per_file, gen.width, gen.height, units::FormatBytes(bytes));

  std::string json = Replace(kImagePipeline, "CROP", std::to_string(crop));
  json = Replace(json, "BATCH", std::to_string(batch));
  PLUMBER_ASSIGN_OR_RETURN(schema::Pipeline pipeline, ParsePipeline(json, "demo pipeline"));
  PLUMBER_ASSIGN_OR_RETURN(ProgramGraph graph, ProgramGraph::Build(std::move(pipeline), "the demo pipeline"));
  setup.program = std::make_shared<const ProgramGraph>(std::move(graph));
  setup.pipeline_path = (std::filesystem::path(dir) / "image.json").string();
  PLUMBER_RETURN_IF_ERROR(WritePipeline(env, setup.pipeline_path, setup.program->program(), Encoding::kJson));

  setup.options.base_dir = dir;
  setup.options.trace_dir = (std::filesystem::path(dir) / "traces").string();
  PLUMBER_RETURN_IF_ERROR(env->CreateDirectories(setup.options.trace_dir));
  return setup;
}

}  // namespace plumber::optimize
