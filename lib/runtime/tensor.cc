// Tensor bookkeeping and the element encoding used by the file cache.
#include "runtime/tensor.h"

namespace plumber::runtime {

std::string_view DTypeName(DType d) {
  switch (d) {
    case DType::kBool: return "bool";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kString: return "string";
  }
  return "?";
}

size_t DTypeSize(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kUint8: return 1;
    case DType::kInt32:
    case DType::kFloat32: return 4;
    case DType::kInt64:
    case DType::kFloat64: return 8;
    case DType::kString: return 0;
  }
  return 0;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype_ == DType::kString) {
    strings_.resize(static_cast<size_t>(NumElements()));
  } else {
    data_.assign(static_cast<size_t>(NumElements()) * DTypeSize(dtype_), '\0');
  }
}

Status CheckTensorSize(DType dtype, const std::vector<int64_t>& shape, const std::string& what) {
  const uint64_t each = dtype == DType::kString ? 8 : DTypeSize(dtype);
  uint64_t elements = 1;
  bool too_big = false;
  for (int64_t d : shape) {
    if (d < 0) return Status::InvalidArgument(what + ": negative size in shape " + ShapeString(shape));
    if (d == 0) return Status::OK();
    if (elements > kMaxTensorBytes / each / static_cast<uint64_t>(d)) too_big = true;
    if (!too_big) elements *= static_cast<uint64_t>(d);
  }
  if (!too_big) return Status::OK();
  return Status::ResourceExhausted(what + ": a tensor of shape " + ShapeString(shape) + " would take more than " +
                                   std::to_string(kMaxTensorBytes >> 30) + " GiB, the runtime's limit for one tensor");
}

Tensor Tensor::Scalar(int64_t v) {
  Tensor t(DType::kInt64, {});
  *t.data<int64_t>() = v;
  return t;
}

Tensor Tensor::ScalarString(std::string v) {
  Tensor t(DType::kString, {});
  t.strings_[0] = std::move(v);
  return t;
}

Tensor Tensor::StringVector(std::vector<std::string> values) {
  Tensor t(DType::kString, {static_cast<int64_t>(values.size())});
  t.strings_ = std::move(values);
  return t;
}

int64_t Tensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

double Tensor::GetDouble(int64_t i) const {
  switch (dtype_) {
    case DType::kBool:
    case DType::kUint8: return static_cast<uint8_t>(data_[i]);
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kFloat32: return data<float>()[i];
    case DType::kFloat64: return data<double>()[i];
    case DType::kString: return 0;
  }
  return 0;
}

int64_t Tensor::GetInt(int64_t i) const {
  if (dtype_ == DType::kInt64) return data<int64_t>()[i];
  return static_cast<int64_t>(GetDouble(i));
}

void Tensor::SetDouble(int64_t i, double v) {
  switch (dtype_) {
    case DType::kBool: data_[i] = v != 0 ? 1 : 0; break;
    case DType::kUint8: data_[i] = static_cast<char>(static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v)); break;
    case DType::kInt32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kInt64: data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::kFloat32: data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: data<double>()[i] = v; break;
    case DType::kString: break;
  }
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string Tensor::DebugType() const { return std::string(DTypeName(dtype_)) + ShapeString(shape_); }

namespace {

void PutU64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 8);
}

bool GetU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = 0;
  for (int i = 7; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>((*in)[i]);
  in->remove_prefix(8);
  return true;
}

bool GetBytes(std::string_view* in, std::string* out) {
  uint64_t n;
  if (!GetU64(in, &n) || n > in->size()) return false;
  out->assign(in->data(), n);
  in->remove_prefix(n);
  return true;
}

}  // namespace

// Layout: count, then per tensor: dtype, rank, dims, then either the packed
// bytes (length-prefixed) or each string (length-prefixed).
std::string SerializeElement(const Element& e) {
  std::string out;
  PutU64(&out, e.size());
  for (const auto& t : e) {
    PutU64(&out, static_cast<uint64_t>(t.dtype()));
    PutU64(&out, t.shape().size());
    for (int64_t d : t.shape()) PutU64(&out, static_cast<uint64_t>(d));
    if (t.dtype() == DType::kString) {
      for (const auto& s : t.strings()) {
        PutU64(&out, s.size());
        out += s;
      }
    } else {
      PutU64(&out, t.raw().size());
      out += t.raw();
    }
  }
  return out;
}

Status ParseElement(std::string_view in, Element* out) {
  const Status bad = Status::Corruption("cached element is malformed");
  uint64_t count;
  if (!GetU64(&in, &count) || count > in.size()) return bad;
  out->clear();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t dtype, rank;
    if (!GetU64(&in, &dtype) || dtype > static_cast<uint64_t>(DType::kString) || !GetU64(&in, &rank) ||
        rank > 64) {
      return bad;
    }
    std::vector<int64_t> shape(rank);
    // The element count is bounded by the bytes left (every value takes at
    // least one byte, every string at least its 8-byte length) before
    // anything is allocated: a corrupt cache file must not ask for 2^80
    // bytes, nor overflow the product.
    uint64_t n = 1;
    for (auto& d : shape) {
      uint64_t v;
      if (!GetU64(&in, &v) || v > (uint64_t{1} << 40)) return bad;
      d = static_cast<int64_t>(v);
      if (v != 0 && n > in.size() / v) return bad;
      n *= v;
    }
    Tensor t;
    if (static_cast<DType>(dtype) == DType::kString) {
      if (n > in.size() / 8) return bad;
      std::vector<std::string> values(static_cast<size_t>(n));
      for (auto& s : values) {
        if (!GetBytes(&in, &s)) return bad;
      }
      t = Tensor(DType::kString, shape);
      t.strings() = std::move(values);
    } else {
      std::string bytes;
      if (!GetBytes(&in, &bytes)) return bad;
      if (bytes.size() != n * DTypeSize(static_cast<DType>(dtype))) return bad;
      t = Tensor(static_cast<DType>(dtype), shape);
      t.raw() = std::move(bytes);
    }
    out->push_back(std::move(t));
  }
  return in.empty() ? Status::OK() : bad;
}

}  // namespace plumber::runtime
