// The file cache's directory and free space; see cache_placement.h.
#include "rewrite/cache_placement.h"

#include <filesystem>

namespace plumber::rewrite {

void PlaceFileCache(Env* env, const std::string& cache_dir, const std::string& output, analysis::PlanOptions* plan) {
  std::string dir = cache_dir;
  if (dir.empty() && !output.empty()) dir = std::filesystem::path(output).parent_path().string();
  if (dir.empty()) dir = ".";
  // "." normalizes to "/the/dir/", whose trailing '/' would double in the
  // cache's file name.
  std::filesystem::path normal = std::filesystem::absolute(dir).lexically_normal();
  if (!normal.has_filename() && normal != normal.root_path()) normal = normal.parent_path();
  dir = normal.string();
  plan->file_cache_dir = dir;
  auto free = env->FreeBytes(dir);
  plan->file_cache_free_bytes = free.ok() ? static_cast<double>(*free) : 0;
}

}  // namespace plumber::rewrite
