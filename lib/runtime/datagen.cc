// Synthetic images and text (see datagen.h).
#include "runtime/datagen.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <random>
#include <stdexcept>

#include "base/units.h"
#include "runtime/example.h"
#include "traceio/record_io.h"

namespace plumber::runtime {
namespace {

bool StopRequested(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(); }

}  // namespace

StatusOr<std::string> MakeJpeg(int width, int height, uint64_t seed, uint64_t index, int quality) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull + 1);
  std::uniform_real_distribution<double> u(0, 1);
  // The JPEG format's own limit; beyond it the encoder would fail only
  // after the pixels were allocated.
  if (width < 1 || height < 1 || width > 65535 || height > 65535) {
    return Status::InvalidArgument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                                   ": a JPEG image is 1 to 65535 pixels wide and high");
  }
  const uint64_t pixel_bytes = static_cast<uint64_t>(width) * static_cast<uint64_t>(height) * 3;
  std::vector<unsigned char> px;
  try {
    px.resize(pixel_bytes);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("a " + std::to_string(width) + "x" + std::to_string(height) + " image needs " +
                                     units::FormatBytes(static_cast<double>(pixel_bytes)) +
                                     " of memory for its pixels, more than could be allocated");
  } catch (const std::length_error&) {
    return Status::ResourceExhausted("a " + std::to_string(width) + "x" + std::to_string(height) +
                                     " image is too large to hold in memory");
  }
  // A colour gradient, a few shapes and a per-image amount of noise: the
  // noise decides how well the image compresses, so file sizes spread out.
  double c0[3], c1[3];
  for (int k = 0; k < 3; ++k) {
    c0[k] = u(rng) * 255;
    c1[k] = u(rng) * 255;
  }
  const double noise = u(rng) * u(rng) * 60;
  const int shapes = 2 + static_cast<int>(rng() % 6);
  struct Disc { double x, y, r, c[3]; };
  std::vector<Disc> discs;
  for (int i = 0; i < shapes; ++i) {
    discs.push_back({u(rng) * width, u(rng) * height, (0.05 + u(rng) * 0.3) * std::min(width, height),
                     {u(rng) * 255, u(rng) * 255, u(rng) * 255}});
  }
  std::normal_distribution<double> n(0, 1);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double t = (static_cast<double>(x) / width + static_cast<double>(y) / height) / 2;
      double v[3];
      for (int k = 0; k < 3; ++k) v[k] = c0[k] * (1 - t) + c1[k] * t;
      for (const auto& d : discs) {
        if ((x - d.x) * (x - d.x) + (y - d.y) * (y - d.y) < d.r * d.r) {
          for (int k = 0; k < 3; ++k) v[k] = d.c[k];
        }
      }
      for (int k = 0; k < 3; ++k) {
        const double val = v[k] + (noise > 0 ? n(rng) * noise : 0);
        px[(static_cast<size_t>(y) * width + x) * 3 + k] = static_cast<unsigned char>(std::clamp(val, 0.0, 255.0));
      }
    }
  }
  tjhandle tj = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(tj, px.data(), width, 0, height, TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, 0);
  std::string out;
  if (rc == 0) out.assign(reinterpret_cast<char*>(jpeg), size);
  std::string err = rc == 0 ? "" : tjGetErrorStr2(tj);
  tjFree(jpeg);
  tjDestroy(tj);
  if (rc != 0) return Status::Internal("JPEG encoding failed: " + err);
  return out;
}

StatusOr<std::vector<std::string>> GenerateImages(Env* env, const std::string& outdir, const ImageGenOptions& opt) {
  if (opt.files < 1 || opt.records_per_file < 1 || opt.width < 1 || opt.height < 1) {
    return Status::InvalidArgument("gen images: files, records per file and image size must be >= 1");
  }
  std::vector<std::string> paths;
  std::mt19937_64 labels(opt.seed);
  for (int f = 0; f < opt.files; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "train-%05d-of-%05d.tfrecord", f, opt.files);
    const std::string path = outdir + "/" + name;
    PLUMBER_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(env, path));
    RecordWriter writer(file.file());
    for (int r = 0; r < opt.records_per_file; ++r) {
      if (StopRequested(opt.stop)) return paths;  // the guard removes the partial file
      const uint64_t index = static_cast<uint64_t>(f) * opt.records_per_file + r;
      PLUMBER_ASSIGN_OR_RETURN(std::string jpeg, MakeJpeg(opt.width, opt.height, opt.seed, index, opt.quality));
      Features features;
      features["image/encoded"] = std::vector<std::string>{std::move(jpeg)};
      features["image/class/label"] = std::vector<int64_t>{static_cast<int64_t>(labels() % opt.num_classes)};
      features["image/height"] = std::vector<int64_t>{opt.height};
      features["image/width"] = std::vector<int64_t>{opt.width};
      PLUMBER_RETURN_IF_ERROR(writer.AddRecord(EncodeExample(features)));
    }
    PLUMBER_RETURN_IF_ERROR(file.Commit());
    paths.push_back(path);
  }
  return paths;
}

StatusOr<std::vector<std::string>> GenerateText(Env* env, const std::string& outdir, const TextGenOptions& opt) {
  if (opt.files < 1 || opt.lines_per_file < 1 || opt.vocabulary < 1) {
    return Status::InvalidArgument("gen text: files, lines per file and vocabulary must be >= 1");
  }
  std::mt19937_64 rng(opt.seed);
  static const char* kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "an",
                                     "el", "is", "or", "um", "pa", "qui", "dre", "sto", "fla", "gon"};
  std::vector<std::string> vocab;
  for (int i = 0; i < opt.vocabulary; ++i) {
    std::string w;
    const int parts = 1 + static_cast<int>(rng() % 3);
    for (int p = 0; p < parts; ++p) w += kSyllables[rng() % 20];
    // A number on some words keeps the vocabulary free of duplicates.
    vocab.push_back(i % 7 == 0 ? w + std::to_string(i) : w);
  }
  // Zipf-like word choice and a long-tailed line length, like real text.
  std::vector<double> weights(vocab.size());
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
  std::discrete_distribution<size_t> word(weights.begin(), weights.end());
  std::geometric_distribution<int> length(1.0 / 30);
  std::vector<std::string> paths;
  for (int f = 0; f < opt.files; ++f) {
    const std::string path = outdir + "/corpus-" + std::to_string(f) + ".txt";
    PLUMBER_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(env, path));
    for (int l = 0; l < opt.lines_per_file; ++l) {
      if (StopRequested(opt.stop)) return paths;  // the guard removes the partial file
      const int words = 1 + std::min(length(rng), 400);
      std::string line;
      for (int w = 0; w < words; ++w) {
        if (w) line += ' ';
        line += vocab[word(rng)];
      }
      line += '\n';
      PLUMBER_RETURN_IF_ERROR(file.file()->Append(line));
    }
    PLUMBER_RETURN_IF_ERROR(file.Commit());
    paths.push_back(path);
  }
  return paths;
}

}  // namespace plumber::runtime
