// Fuzzes the hand-written tf.train.Example decoder (lib/runtime/example.h),
// which reads records from any TFRecord file a pipeline names. Whatever
// decodes must re-encode to bytes that decode to the same features, packed
// or not; nothing may crash or allocate beyond what the input holds.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runtime/example.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumber::runtime;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto features = DecodeExample(bytes);
  if (!features.ok()) return 0;
  // Compare encodings, not values: NaN floats never compare equal.
  const std::string packed = EncodeExample(*features, true);
  auto again = DecodeExample(packed);
  if (!again.ok() || EncodeExample(*again, true) != packed) std::abort();
  auto unpacked = DecodeExample(EncodeExample(*features, false));
  if (!unpacked.ok() || EncodeExample(*unpacked, true) != packed) std::abort();
  return 0;
}
