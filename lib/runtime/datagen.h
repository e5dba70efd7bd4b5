// Test data for pipelines, as `plumber gen` writes it: TFRecord shards of
// tf.train.Example records holding real JPEG images (content drawn from the
// seed, so sizes vary like photos do) and integer labels, or text files of
// words from a fixed vocabulary. Readable by TensorFlow's own readers.
#pragma once

#include <atomic>
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
  // When set and true, generation stops before the next record: the file
  // being written is removed and the files finished so far are returned.
  const std::atomic<bool>* stop = nullptr;
};

// Writes OUTDIR/train-NNNNN-of-MMMMM.tfrecord; the directory must exist.
// Returns the paths written (fewer than opt.files after a stop). Each file
// appears whole or not at all, whatever fails or stops the writing.
StatusOr<std::vector<std::string>> GenerateImages(Env* env, const std::string& outdir, const ImageGenOptions& opt);

// One JPEG of the generator, for tests: image `index` of `seed`.
StatusOr<std::string> MakeJpeg(int width, int height, uint64_t seed, uint64_t index, int quality);

struct TextGenOptions {
  int files = 2;
  int lines_per_file = 1000;
  uint64_t seed = 1;
  int vocabulary = 5000;
  // As ImageGenOptions::stop.
  const std::atomic<bool>* stop = nullptr;
};

// Writes OUTDIR/corpus-N.txt. Returns the paths written.
StatusOr<std::vector<std::string>> GenerateText(Env* env, const std::string& outdir, const TextGenOptions& opt);

}  // namespace plumber::runtime
