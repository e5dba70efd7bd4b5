// plumber gen images|text OUTDIR: writes test data for pipelines: TFRecord
// shards of tf.train.Example with JPEG images and labels, or text files.
// SIGINT/SIGTERM stop it between records, as they stop `plumber run`: the
// file being written is removed, the files already written stay.
#include <iostream>

#include <fmt/format.h>

#include "base/env.h"
#include "command.h"
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

int RunGen(const GenOptions& opt) {
  Env* env = Env::Default();
  if (Status s = env->CreateDirectories(opt.outdir); !s.ok()) return ReportError(s);
  StatusOr<std::vector<std::string>> written = Status::Internal("unset");
  const std::atomic<bool>* stop = InstallRunStopHandler();
  if (opt.kind == "images") {
    runtime::ImageGenOptions g;
    g.files = opt.files;
    g.records_per_file = opt.records;
    g.seed = opt.seed;
    g.stop = stop;
    if (std::sscanf(opt.image_size.c_str(), "%dx%d", &g.width, &g.height) != 2 || g.width < 1 || g.height < 1) {
      return ReportError(Status::InvalidArgument("--image-size: expected WIDTHxHEIGHT, e.g. 256x256, got '" +
                                                 opt.image_size + "'"));
    }
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
  std::cout << fmt::format("wrote {} {} file(s) to {} ({} bytes)\n", written->size(), opt.kind, opt.outdir, total);
  if (written->size() < static_cast<size_t>(opt.files)) {
    Warn(fmt::format("interrupted after {} of {} file(s); the file being written was removed", written->size(),
                     opt.files));
  }
  return kExitOk;
}

}  // namespace

Handler SetupGen(CLI::App& app) {
  auto opt = std::make_shared<GenOptions>();
  app.add_option("KIND", opt->kind, "images or text")->required()->check(CLI::IsMember({"images", "text"}));
  app.add_option("OUTDIR", opt->outdir, "Directory to write (created if missing)")->required();
  app.add_option("--files", opt->files, "Number of files (default 4)")->check(CLI::PositiveNumber);
  app.add_option("--records-per-file", opt->records, "Records (images) or lines (text) per file (default 64)")
      ->check(CLI::PositiveNumber);
  app.add_option("--image-size", opt->image_size, "WIDTHxHEIGHT of the images (default 256x256)");
  app.add_option("--seed", opt->seed, "Seed of the content (default 1)");
  return [opt] { return RunGen(*opt); };
}

}  // namespace plumber::cli
