// Elements flowing through the runtime: a tuple of tensors, each a dtype, a
// shape and its bytes. Numeric tensors keep their values packed in one byte
// string (host order); string tensors keep one std::string per value. The
// byte size of an element is what tracing reports as bytes produced and
// consumed, so it counts payload bytes only, not bookkeeping.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace plumber::runtime {

enum class DType { kBool, kUint8, kInt32, kInt64, kFloat32, kFloat64, kString };

std::string_view DTypeName(DType d);
// Bytes per value; 0 for strings, whose values vary in size.
size_t DTypeSize(DType d);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape);  // zero-filled

  static Tensor Scalar(int64_t v);
  static Tensor ScalarString(std::string v);
  static Tensor StringVector(std::vector<std::string> values);
  template <typename T>
  static Tensor FromVector(DType dtype, const std::vector<T>& values, std::vector<int64_t> shape) {
    Tensor t(dtype, std::move(shape));
    // memcpy must not see the null data() of an empty vector, even for 0 bytes.
    if (!t.data_.empty()) std::memcpy(t.data_.data(), values.data(), t.data_.size());
    return t;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t NumElements() const;
  // Payload bytes: the packed values, or the sum of the string lengths.
  // Inline: tracing counts the bytes of every element it sees.
  size_t ByteSize() const {
    if (dtype_ != DType::kString) return data_.size();
    size_t n = 0;
    for (const auto& s : strings_) n += s.size();
    return n;
  }

  // Numeric access; precondition: dtype matches T's size.
  template <typename T>
  T* data() { return reinterpret_cast<T*>(data_.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(data_.data()); }
  std::string& raw() { return data_; }
  const std::string& raw() const { return data_; }
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  // Value i as a double / int64, for any numeric dtype.
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;
  void SetDouble(int64_t i, double v);

  bool operator==(const Tensor& o) const = default;
  // "int64[2,3]", for error messages.
  std::string DebugType() const;

 private:
  DType dtype_ = DType::kInt64;
  std::vector<int64_t> shape_;
  std::string data_;
  std::vector<std::string> strings_;
};

// The largest tensor the runtime allocates from sizes it reads in data or
// pipelines (a JPEG header, a padded_shape, a resize target): a corrupt or
// hostile value becomes a clear error rather than an out-of-memory kill.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{2} << 30;

// OK when a tensor of `shape` fits under kMaxTensorBytes (a string counts
// as 8 bytes) and its element count does not overflow; otherwise
// ResourceExhausted (InvalidArgument for a negative size) naming `what`.
Status CheckTensorSize(DType dtype, const std::vector<int64_t>& shape, const std::string& what);

using Element = std::vector<Tensor>;

inline size_t ElementBytes(const Element& e) {
  // Tracing counts the bytes of every element; most are one numeric tensor.
  if (e.size() == 1 && e[0].dtype() != DType::kString) [[likely]] return e[0].raw().size();
  size_t n = 0;
  for (const auto& t : e) n += t.ByteSize();
  return n;
}
std::string ShapeString(const std::vector<int64_t>& shape);

// A compact binary encoding of an element, for the file cache.
std::string SerializeElement(const Element& e);
Status ParseElement(std::string_view bytes, Element* out);

}  // namespace plumber::runtime
