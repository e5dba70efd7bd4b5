// Fuzzes the element codec of file caches (lib/runtime/tensor.h): a cache
// file written by an earlier run, or left half-written by a killed one, is
// input like any other. Shapes and lengths in it must never drive an
// allocation larger than the bytes that back them.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runtime/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber::runtime;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Element element;
  if (!ParseElement(bytes, &element).ok()) return 0;
  const std::string again = SerializeElement(element);
  Element back;
  if (!ParseElement(again, &back).ok() || SerializeElement(back) != again) std::abort();
  return 0;
}
