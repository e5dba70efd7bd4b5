// Where a rewrite may put a file cache and how much room it has there
// (rewrite/cache_placement.h), through an in-memory Env of known size.
#include <catch2/catch.hpp>

#include <filesystem>

#include "base/mem_env.h"
#include "rewrite/cache_placement.h"

namespace plumber::rewrite {
namespace {

namespace fs = std::filesystem;

TEST_CASE("cache placement: the named directory, with its free space", "[rewrite][cache_placement]") {
  auto env = NewMemEnv(Env::Default(), 5000);
  REQUIRE(env->CreateDirectories("/fast/cache").ok());
  REQUIRE(WriteFileAtomically(env.get(), "/fast/cache/old", std::string(1000, 'x')).ok());
  analysis::PlanOptions plan;
  PlaceFileCache(env.get(), "/fast/./cache", "/out/p.json", &plan);
  CHECK(plan.file_cache_dir == "/fast/cache");  // normalised
  CHECK(plan.file_cache_free_bytes == 4000);
}

TEST_CASE("cache placement: beside the output, else the working directory, absolute", "[rewrite][cache_placement]") {
  auto env = NewMemEnv(Env::Default(), 5000);
  const std::string cwd = fs::current_path().lexically_normal().string();
  analysis::PlanOptions beside;
  PlaceFileCache(env.get(), "", "out/p.json", &beside);
  CHECK(beside.file_cache_dir == (fs::current_path() / "out").lexically_normal().string());
  // Nothing of that name in this Env: no room known, so no file cache.
  CHECK(beside.file_cache_free_bytes == 0);

  // "." made absolute names the directory without a trailing separator,
  // which the cache's file name would double.
  REQUIRE(env->CreateDirectories(cwd).ok());
  analysis::PlanOptions here;
  PlaceFileCache(env.get(), "", "", &here);
  CHECK(here.file_cache_dir == cwd);
  CHECK(here.file_cache_dir.back() != '/');
  CHECK(here.file_cache_free_bytes == 5000);
}

}  // namespace
}  // namespace plumber::rewrite
