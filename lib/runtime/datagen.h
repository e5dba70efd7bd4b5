// Test data for pipelines, as `plumber gen` writes it: TFRecord shards of
// tf.train.Example records holding real JPEG images (content drawn from the
// seed, so sizes vary like photos do) and integer labels, or text files of
// words from a fixed vocabulary. Readable by TensorFlow's own readers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace plumber::runtime {

struct ImageGenOptions {
  int files = 4;
  int records_per_file = 64;
  int width = 256;
  int height = 256;
  uint64_t seed = 1;
  int quality = 90;
  int num_classes = 1000;
};

// Writes OUTDIR/train-NNNNN-of-MMMMM.tfrecord; the directory must exist.
// Returns the paths written.
StatusOr<std::vector<std::string>> GenerateImages(Env* env, const std::string& outdir, const ImageGenOptions& opt);

// One JPEG of the generator, for tests: image `index` of `seed`.
StatusOr<std::string> MakeJpeg(int width, int height, uint64_t seed, uint64_t index, int quality);

struct TextGenOptions {
  int files = 2;
  int lines_per_file = 1000;
  uint64_t seed = 1;
  int vocabulary = 5000;
};

// Writes OUTDIR/corpus-N.txt. Returns the paths written.
StatusOr<std::vector<std::string>> GenerateText(Env* env, const std::string& outdir, const TextGenOptions& opt);

}  // namespace plumber::runtime
