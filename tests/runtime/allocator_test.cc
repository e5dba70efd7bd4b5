// The allocator set-up for pipelines (runtime/allocator.h): after it, a
// block of megabytes comes from the heap instead of a mapping of its own,
// and freeing it keeps the memory instead of returning it to the kernel,
// so the next batch does not fault its pages in again. Read from glibc's
// own counters (mallinfo2); the sanitizers replace the allocator, so there
// the test only checks that the call is harmless.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "runtime/allocator.h"

namespace plumber::runtime {
namespace {

// GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PLUMBER_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(PLUMBER_SANITIZED_ALLOCATOR)
constexpr bool kGlibcAllocator = false;
#elif defined(__GLIBC__)
constexpr bool kGlibcAllocator = true;
#else
constexpr bool kGlibcAllocator = false;
#endif

TEST_CASE("allocator: a 16 MiB block comes from the heap and stays there when freed", "[allocator]") {
  KeepFreedMemoryForReuse();
  constexpr size_t kBlock = size_t{16} << 20;  // far above glibc's 128 KiB default for a mapping of its own
  void* p = std::malloc(kBlock);
  REQUIRE(p != nullptr);
  std::memset(p, 1, kBlock);
  if constexpr (kGlibcAllocator) {
#if defined(__GLIBC__)
    const struct mallinfo2 held = mallinfo2();
    std::free(p);
    const struct mallinfo2 freed = mallinfo2();
    // Not a mapping of its own: mapped bytes stay under the block's size.
    CHECK(held.hblkhd < kBlock);
    // Not trimmed: the heap (arena) keeps its size, the block now free in it.
    CHECK(freed.arena == held.arena);
    CHECK(freed.fordblks >= kBlock);
#endif
  } else {
    std::free(p);
  }
}

}  // namespace
}  // namespace plumber::runtime
