// tf.train.Example, encoded and decoded by hand so that files are readable
// by TensorFlow without linking it. The wire format:
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }
//   Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2;
//                      Int64List int64_list = 3; } }
//   *List    { repeated <type> value = 1; }  (numbers packed or not)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace plumber::runtime {

using FeatureValue = std::variant<std::vector<std::string>, std::vector<float>, std::vector<int64_t>>;
using Features = std::map<std::string, FeatureValue>;

// Encodes with packed numeric lists, as TensorFlow writes them; or, with
// packed false, one tag per value (which readers must also accept).
std::string EncodeExample(const Features& features, bool packed = true);

// Decodes an Example; unknown fields are skipped, as protobuf requires.
StatusOr<Features> DecodeExample(std::string_view bytes);

}  // namespace plumber::runtime
