// plumber gen images|text OUTDIR: writes test data for pipelines: TFRecord
// shards of tf.train.Example with JPEG images and labels, or text files.
// SIGINT/SIGTERM stop it between records, as they stop `plumber run`: the
// file being written is removed, the files already written stay.
#include <charconv>
#include <iostream>
#include <limits>

#include <fmt/format.h>

#include "base/env.h"
#include "base/number_format.h"
#include "command.h"
#include "flag_check.h"
#include "loop_ui.h"
#include "runtime/datagen.h"

namespace plumber::cli {
namespace {

struct GenOptions {
  std::string kind;
  std::string outdir;
  int files = 4;
  int records = 64;
  std::string image_size = "256x256";
  uint64_t seed = 1;
};

// "256x256": two whole numbers from 1 to kMaxGenImageSide.
bool ParseImageSize(const std::string& text, int* width, int* height) {
  const size_t x = text.find('x');
  if (x == std::string::npos) return false;
  auto side = [](std::string_view t, int* out) {
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    return !t.empty() && ec == std::errc() && ptr == t.data() + t.size() && *out >= 1 && *out <= kMaxGenImageSide;
  };
  const std::string_view t = text;
  return side(t.substr(0, x), width) && side(t.substr(x + 1), height);
}

int RunGen(const GenOptions& opt) {
  Env* env = Env::Default();
  // Every limit is checked before the directory is made or a byte written.
  const int64_t records = static_cast<int64_t>(opt.files) * opt.records;
  if (records > kMaxGenRecords) {
    return ReportError(Status::InvalidArgument(fmt::format(
        "--files {} times --records-per-file {} is {} records: gen writes at most {} in all", opt.files,
        opt.records, records, kMaxGenRecords)));
  }
  int width = 0;
  int height = 0;
  if (opt.kind == "images") {
    if (!ParseImageSize(opt.image_size, &width, &height)) {
      return ReportError(Status::InvalidArgument(fmt::format(
          "--image-size: expected WIDTHxHEIGHT, each a whole number from 1 to {}, e.g. 256x256, got '{}'",
          kMaxGenImageSide, opt.image_size)));
    }
    if (static_cast<double>(records) * width * height > kMaxGenPixels) {
      return ReportError(Status::InvalidArgument(fmt::format(
          "--image-size {} for {} images is more than the {} pixels in all gen writes at most: fewer or smaller "
          "images",
          opt.image_size, records, static_cast<int64_t>(kMaxGenPixels))));
    }
  }
  if (Status s = env->CreateDirectories(opt.outdir); !s.ok()) return ReportError(s);
  StatusOr<std::vector<std::string>> written = Status::Internal("unset");
  const std::atomic<bool>* stop = InstallRunStopHandler();
  if (opt.kind == "images") {
    runtime::ImageGenOptions g;
    g.files = opt.files;
    g.records_per_file = opt.records;
    g.seed = opt.seed;
    g.width = width;
    g.height = height;
    g.stop = stop;
    written = runtime::GenerateImages(env, opt.outdir, g);
  } else {
    runtime::TextGenOptions g;
    g.files = opt.files;
    g.lines_per_file = opt.records;
    g.seed = opt.seed;
    g.stop = stop;
    written = runtime::GenerateText(env, opt.outdir, g);
  }
  if (!written.ok()) return ReportError(written.status());
  uint64_t total = 0;
  for (const auto& p : *written) {
    auto size = env->GetFileSize(p);
    if (size.ok()) total += *size;
  }
  std::cout << fmt::format("wrote {} to {} ({})\n", FormatCount(written->size(), opt.kind + " file", opt.kind + " files"),
                           opt.outdir, FormatCount(total, "byte", "bytes"));
  if (written->size() < static_cast<size_t>(opt.files)) {
    Warn(fmt::format("interrupted after {} of {}; the file being written was removed", written->size(),
                     FormatCount(opt.files, "file", "files")));
  }
  return kExitOk;
}

}  // namespace

Handler SetupGen(CLI::App& app) {
  auto opt = std::make_shared<GenOptions>();
  app.add_option("KIND", opt->kind, "images or text")->required()->check(CLI::IsMember({"images", "text"}));
  app.add_option("OUTDIR", opt->outdir, "Directory to write (created if missing)")->required();
  app.add_option("--files", opt->files, "Number of files, 1 to 10000 (default 4)")
      ->check(WholeNumber(1, kMaxGenFiles));
  app.add_option("--records-per-file", opt->records, "Records (images) or lines (text) per file, 1 to 1000000, "
                 "10 million in all (default 64)")
      ->check(WholeNumber(1, kMaxGenRecordsPerFile));
  app.add_option("--image-size", opt->image_size, "WIDTHxHEIGHT of the images, each side 1 to 8192 (default 256x256)");
  app.add_option("--seed", opt->seed, "Seed of the content (default 1)")
      ->check(WholeNumber(0, std::numeric_limits<int64_t>::max()));
  return [opt] { return RunGen(*opt); };
}

}  // namespace plumber::cli
