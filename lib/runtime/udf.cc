// Implementations of the UDF ops.
// Long because: every op's class sits beside the argument reader and the
// component base they share, and the factory table at the end names them
// all; a file per op would need those shared pieces in a header of their
// own for no reader's benefit (each op is a short class found by its name).
#include "runtime/udf.h"

#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "base/number_format.h"
#include "runtime/compression.h"
#include "runtime/example.h"
#include "runtime/stats.h"

namespace plumber::runtime {

StatusOr<bool> UdfOp::Test(const Element&) const {
  return Status::Internal("not a predicate op");
}

uint64_t MixSeed(uint64_t seed, uint64_t index, uint64_t epoch) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1) + 0xBF58476D1CE4E5B9ull * (epoch + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The fuzzing build's coverage instrumentation would put a counter shared by
// every thread inside this loop, and burns running in parallel would then
// fight over its cache line: a 1 ms burn cost 2 ms of CPU at parallelism 4.
// A burn must cost the same however many run at once.
#if defined(__clang__)
__attribute__((no_sanitize("coverage")))
#endif
uint64_t BurnLoop(uint64_t iterations) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x += i;
  }
  // Keeps the compiler from dropping the loop.
  asm volatile("" : "+r"(x));
  return x;
}

double BurnIterationsPerMicro() {
  static std::once_flag once;
  static double rate = 0;
  std::call_once(once, [] {
    // The fastest of several short trials of thread CPU time. A disturbance
    // (an interrupt, a hypervisor taking the core while the thread's clock
    // runs, a core still at low speed) can only slow a trial down, and one
    // lasting through most trials once made the median 1.7x slow (CI, stop
    // 28). The warm-up and the spread over ~20 ms give such a window a chance
    // to end before the last trial.
    constexpr uint64_t kIters = 1 << 19;
    BurnLoop(4 * kIters);
    double best = 0;
    for (int i = 0; i < 16; ++i) {
      const int64_t t0 = ThreadCpuNanos();
      BurnLoop(kIters);
      const int64_t dt = std::max<int64_t>(1, ThreadCpuNanos() - t0);
      best = std::max(best, static_cast<double>(kIters) * 1000.0 / static_cast<double>(dt));
    }
    rate = best;
  });
  return rate;
}

namespace {

using google::protobuf::Value;

// Typed access to an op's arguments (validation already checked types).
class Args {
 public:
  explicit Args(const schema::UdfOp& spec) : spec_(spec) {}
  double Number(const std::string& key, double def) const {
    auto it = spec_.args().find(key);
    return it == spec_.args().end() ? def : it->second.number_value();
  }
  bool Has(const std::string& key) const { return spec_.args().count(key) > 0; }
  std::string String(const std::string& key, const std::string& def) const {
    auto it = spec_.args().find(key);
    return it == spec_.args().end() ? def : it->second.string_value();
  }
  std::vector<std::string> StringList(const std::string& key) const {
    std::vector<std::string> out;
    auto it = spec_.args().find(key);
    if (it != spec_.args().end()) {
      for (const auto& v : it->second.list_value().values()) out.push_back(v.string_value());
    }
    return out;
  }
  std::vector<double> NumberList(const std::string& key, std::vector<double> def) const {
    auto it = spec_.args().find(key);
    if (it == spec_.args().end()) return def;
    std::vector<double> out;
    for (const auto& v : it->second.list_value().values()) out.push_back(v.number_value());
    return out;
  }
  // Arguments later cast to integers must be whole numbers in [lo, hi]: a
  // cast of 1e300 or NaN is undefined behaviour, and a crop of 2^40 pixels
  // is a typo, not a request.
  Status CheckRange(const std::string& key, double lo, double hi, bool whole = true) const {
    if (!Has(key)) return Status::OK();
    const double v = Number(key, 0);
    if (!(v >= lo && v <= hi) || (whole && v != std::floor(v))) {
      char range[96];
      std::snprintf(range, sizeof range, "from %.17g to %.17g", lo, hi);
      return Status::InvalidArgument("'" + spec_.op() + "': argument '" + key + "' must be a " +
                                     (whole ? "whole number " : "number ") + range);
    }
    return Status::OK();
  }
  Status Require(const std::string& key) const {
    if (!Has(key)) return Status::InvalidArgument("'" + spec_.op() + "' requires argument '" + key + "'");
    return Status::OK();
  }

 private:
  const schema::UdfOp& spec_;
};

// Base for ops on one component of the element.
class ComponentOp : public UdfOp {
 public:
  explicit ComponentOp(const Args& a) : component_(static_cast<size_t>(a.Number("component", 0))) {}

 protected:
  StatusOr<Tensor*> Get(Element* e, const char* op) const {
    PLUMBER_RETURN_IF_ERROR(Has(e->size(), op));
    return &(*e)[component_];
  }
  // The same for a predicate, which reads the element without changing it.
  StatusOr<const Tensor*> Get(const Element& e, const char* op) const {
    PLUMBER_RETURN_IF_ERROR(Has(e.size(), op));
    return &e[component_];
  }
  size_t component_;

 private:
  Status Has(size_t components, const char* op) const {
    if (component_ < components) return Status::OK();
    return Status::InvalidArgument(std::string(op) + ": the element has " +
                                   FormatCount(components, "component", "components") + ", no component " +
                                   std::to_string(component_));
  }
};

Status WantImage(const Tensor& t, const char* op) {
  if (t.shape().size() != 3 || (t.dtype() != DType::kUint8 && t.dtype() != DType::kFloat32)) {
    return Status::InvalidArgument(std::string(op) + ": expected an HWC image (uint8 or float32), got " +
                                   t.DebugType());
  }
  return Status::OK();
}

// ---- parse_example ----------------------------------------------------------

class ParseExample final : public ComponentOp {
 public:
  explicit ParseExample(const Args& a) : ComponentOp(a), features_(a.StringList("features")) {}

  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "parse_example"));
    if (t->dtype() != DType::kString || t->NumElements() != 1) {
      return Status::InvalidArgument("parse_example: expected a serialized Example (string scalar), got " +
                                     t->DebugType());
    }
    PLUMBER_ASSIGN_OR_RETURN(Features parsed, DecodeExample(t->strings()[0]));
    std::vector<std::string> names = features_;
    if (names.empty()) {
      for (const auto& [k, v] : parsed) names.push_back(k);
    }
    Element out;
    for (const auto& name : names) {
      auto it = parsed.find(name);
      if (it == parsed.end()) return Status::InvalidArgument("parse_example: the Example has no feature '" + name + "'");
      out.push_back(ToTensor(it->second));
    }
    e->erase(e->begin() + static_cast<ptrdiff_t>(component_));
    e->insert(e->begin() + static_cast<ptrdiff_t>(component_), std::make_move_iterator(out.begin()),
              std::make_move_iterator(out.end()));
    return Status::OK();
  }

 private:
  // A one-value list becomes a scalar, as FixedLenFeature([]) would give.
  static Tensor ToTensor(const FeatureValue& v) {
    auto shape = [](size_t n) { return n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(n)}; };
    if (const auto* b = std::get_if<std::vector<std::string>>(&v)) {
      Tensor t(DType::kString, shape(b->size()));
      t.strings() = *b;
      return t;
    }
    if (const auto* f = std::get_if<std::vector<float>>(&v)) return Tensor::FromVector(DType::kFloat32, *f, shape(f->size()));
    const auto& i = std::get<std::vector<int64_t>>(v);
    return Tensor::FromVector(DType::kInt64, i, shape(i.size()));
  }
  std::vector<std::string> features_;
};

// ---- decode_jpeg --------------------------------------------------------------

// turbojpeg handles are not thread-safe; one per thread, freed at exit.
struct TjHandle {
  tjhandle h = tjInitDecompress();
  ~TjHandle() { tjDestroy(h); }
};

class DecodeJpeg final : public ComponentOp {
 public:
  explicit DecodeJpeg(const Args& a) : ComponentOp(a), channels_(static_cast<int>(a.Number("channels", 3))) {}

  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "decode_jpeg"));
    if (t->dtype() != DType::kString || t->NumElements() != 1) {
      return Status::InvalidArgument("decode_jpeg: expected JPEG bytes (string scalar), got " + t->DebugType());
    }
    static thread_local TjHandle tj;
    const std::string& jpeg = t->strings()[0];
    int w = 0, h = 0, subsamp = 0, colorspace = 0;
    auto* src = reinterpret_cast<const unsigned char*>(jpeg.data());
    if (tjDecompressHeader3(tj.h, src, jpeg.size(), &w, &h, &subsamp, &colorspace) != 0) {
      return Status::InvalidArgument(std::string("decode_jpeg: not a JPEG image: ") + tjGetErrorStr2(tj.h));
    }
    // The header's size is checked before the buffer exists: a few bytes
    // of hostile JPEG can claim 65535 x 65535 pixels.
    PLUMBER_RETURN_IF_ERROR(CheckTensorSize(DType::kUint8, {h, w, channels_}, "decode_jpeg"));
    Tensor img(DType::kUint8, {h, w, channels_});
    const int pf = channels_ == 1 ? TJPF_GRAY : TJPF_RGB;
    if (tjDecompress2(tj.h, src, jpeg.size(), reinterpret_cast<unsigned char*>(img.raw().data()), w, 0, h, pf,
                      TJFLAG_FASTDCT) != 0) {
      return Status::InvalidArgument(std::string("decode_jpeg: corrupt JPEG: ") + tjGetErrorStr2(tj.h));
    }
    *t = std::move(img);
    return Status::OK();
  }

 private:
  int channels_;
};

// ---- random_crop / random_flip_left_right / resize -------------------------------

class RandomCrop final : public ComponentOp {
 public:
  explicit RandomCrop(const Args& a)
      : ComponentOp(a),
        h_(static_cast<int64_t>(a.Number("height", 1))),
        w_(static_cast<int64_t>(a.Number("width", 1))),
        seed_(static_cast<uint64_t>(a.Number("seed", 0))) {}

  Status Apply(Element* e, const UdfCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "random_crop"));
    PLUMBER_RETURN_IF_ERROR(WantImage(*t, "random_crop"));
    const int64_t H = t->shape()[0], W = t->shape()[1], C = t->shape()[2];
    if (H < h_ || W < w_) {
      return Status::InvalidArgument("random_crop: image " + t->DebugType() + " is smaller than the crop " +
                                     std::to_string(h_) + "x" + std::to_string(w_));
    }
    std::mt19937_64 rng(MixSeed(seed_, ctx.element_index, ctx.epoch));
    const int64_t y0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(H - h_ + 1));
    const int64_t x0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(W - w_ + 1));
    const size_t px = DTypeSize(t->dtype()) * static_cast<size_t>(C);
    Tensor out(t->dtype(), {h_, w_, C});
    for (int64_t y = 0; y < h_; ++y) {
      std::memcpy(out.raw().data() + static_cast<size_t>(y * w_) * px,
                  t->raw().data() + static_cast<size_t>((y0 + y) * W + x0) * px, static_cast<size_t>(w_) * px);
    }
    *t = std::move(out);
    return Status::OK();
  }

 private:
  int64_t h_, w_;
  uint64_t seed_;
};

class RandomFlip final : public ComponentOp {
 public:
  explicit RandomFlip(const Args& a) : ComponentOp(a), seed_(static_cast<uint64_t>(a.Number("seed", 0))) {}

  Status Apply(Element* e, const UdfCtx& ctx) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "random_flip_left_right"));
    PLUMBER_RETURN_IF_ERROR(WantImage(*t, "random_flip_left_right"));
    if ((MixSeed(seed_, ctx.element_index, ctx.epoch) & 1) == 0) return Status::OK();
    const int64_t H = t->shape()[0], W = t->shape()[1];
    const size_t px = DTypeSize(t->dtype()) * static_cast<size_t>(t->shape()[2]);
    std::string tmp(px, '\0');
    char* d = t->raw().data();
    for (int64_t y = 0; y < H; ++y) {
      char* row = d + static_cast<size_t>(y * W) * px;
      for (int64_t x = 0; x < W / 2; ++x) {
        char* a = row + static_cast<size_t>(x) * px;
        char* b = row + static_cast<size_t>(W - 1 - x) * px;
        std::memcpy(tmp.data(), a, px);
        std::memcpy(a, b, px);
        std::memcpy(b, tmp.data(), px);
      }
    }
    return Status::OK();
  }

 private:
  uint64_t seed_;
};

class Resize final : public ComponentOp {
 public:
  explicit Resize(const Args& a)
      : ComponentOp(a), h_(static_cast<int64_t>(a.Number("height", 1))), w_(static_cast<int64_t>(a.Number("width", 1))) {}

  // Bilinear, with pixel centres aligned as tf.image.resize does.
  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "resize"));
    PLUMBER_RETURN_IF_ERROR(WantImage(*t, "resize"));
    const int64_t H = t->shape()[0], W = t->shape()[1], C = t->shape()[2];
    PLUMBER_RETURN_IF_ERROR(CheckTensorSize(t->dtype(), {h_, w_, C}, "resize"));
    Tensor out(t->dtype(), {h_, w_, C});
    const double sy = static_cast<double>(H) / static_cast<double>(h_);
    const double sx = static_cast<double>(W) / static_cast<double>(w_);
    for (int64_t y = 0; y < h_; ++y) {
      const double fy = std::clamp((static_cast<double>(y) + 0.5) * sy - 0.5, 0.0, static_cast<double>(H - 1));
      const int64_t y0 = static_cast<int64_t>(fy), y1 = std::min(y0 + 1, H - 1);
      const double wy = fy - static_cast<double>(y0);
      for (int64_t x = 0; x < w_; ++x) {
        const double fx = std::clamp((static_cast<double>(x) + 0.5) * sx - 0.5, 0.0, static_cast<double>(W - 1));
        const int64_t x0 = static_cast<int64_t>(fx), x1 = std::min(x0 + 1, W - 1);
        const double wx = fx - static_cast<double>(x0);
        for (int64_t c = 0; c < C; ++c) {
          auto at = [&](int64_t yy, int64_t xx) { return t->GetDouble((yy * W + xx) * C + c); };
          const double v = (1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) + wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1));
          out.SetDouble((y * w_ + x) * C + c, t->dtype() == DType::kUint8 ? std::round(v) : v);
        }
      }
    }
    *t = std::move(out);
    return Status::OK();
  }

 private:
  int64_t h_, w_;
};

// ---- normalize ------------------------------------------------------------------

class Normalize final : public ComponentOp {
 public:
  explicit Normalize(const Args& a)
      : ComponentOp(a), mean_(a.NumberList("mean", {0.0})), std_(a.NumberList("std", {1.0})) {}

  // uint8 HWC -> float32 CHW, (x - mean[c]) / std[c]; one value applies to
  // every channel.
  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "normalize"));
    if (t->shape().size() != 3 || t->dtype() != DType::kUint8) {
      return Status::InvalidArgument("normalize: expected a uint8 HWC image, got " + t->DebugType());
    }
    const int64_t H = t->shape()[0], W = t->shape()[1], C = t->shape()[2];
    auto pick = [&](const std::vector<double>& v, int64_t c) -> StatusOr<double> {
      if (v.size() == 1) return v[0];
      if (static_cast<int64_t>(v.size()) == C) return v[static_cast<size_t>(c)];
      return Status::InvalidArgument("normalize: mean/std have " + std::to_string(v.size()) +
                                     " values for an image of " + std::to_string(C) + " channels");
    };
    Tensor out(DType::kFloat32, {C, H, W});
    const auto* src = reinterpret_cast<const uint8_t*>(t->raw().data());
    float* dst = out.data<float>();
    for (int64_t c = 0; c < C; ++c) {
      PLUMBER_ASSIGN_OR_RETURN(double m, pick(mean_, c));
      PLUMBER_ASSIGN_OR_RETURN(double s, pick(std_, c));
      if (s == 0) return Status::InvalidArgument("normalize: std must not be 0");
      const float mf = static_cast<float>(m), inv = static_cast<float>(1.0 / s);
      float* plane = dst + c * H * W;
      for (int64_t i = 0; i < H * W; ++i) plane[i] = (static_cast<float>(src[i * C + c]) - mf) * inv;
    }
    *t = std::move(out);
    return Status::OK();
  }

 private:
  std::vector<double> mean_, std_;
};

// ---- decompress / tokenize / length_filter ------------------------------------------

class DecompressOp final : public ComponentOp {
 public:
  DecompressOp(const Args& a, Codec codec) : ComponentOp(a), codec_(codec) {}

  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "decompress"));
    if (t->dtype() != DType::kString || t->NumElements() != 1) {
      return Status::InvalidArgument("decompress: expected bytes (string scalar), got " + t->DebugType());
    }
    auto out = Decompress(codec_, t->strings()[0], kMaxTensorBytes);
    if (!out.ok()) return out.status().WithContext("decompress");
    t->strings()[0] = std::move(out).value();
    return Status::OK();
  }

 private:
  Codec codec_;
};

class Tokenize final : public ComponentOp {
 public:
  explicit Tokenize(const Args& a)
      : ComponentOp(a), vocab_(static_cast<uint64_t>(a.Number("vocab_size", 32000))) {}

  // Whitespace split, each token hashed (FNV-1a) into [0, vocab_size).
  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "tokenize"));
    if (t->dtype() != DType::kString || t->NumElements() != 1) {
      return Status::InvalidArgument("tokenize: expected a string scalar, got " + t->DebugType());
    }
    std::vector<int32_t> ids;
    const std::string& s = t->strings()[0];
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i == s.size()) break;
      uint64_t h = 1469598103934665603ull;
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
        h = (h ^ static_cast<unsigned char>(s[i++])) * 1099511628211ull;
      }
      ids.push_back(static_cast<int32_t>(h % vocab_));
    }
    *t = Tensor::FromVector(DType::kInt32, ids, {static_cast<int64_t>(ids.size())});
    return Status::OK();
  }

 private:
  uint64_t vocab_;
};

class LengthFilter final : public ComponentOp {
 public:
  explicit LengthFilter(const Args& a)
      : ComponentOp(a),
        min_(a.Number("min", 0)),
        max_(a.Number("max", std::numeric_limits<double>::infinity())) {}

  Status Apply(Element*, const UdfCtx&) const override { return Status::OK(); }

  // Length: the bytes of a string scalar, else the number of values.
  StatusOr<bool> Test(const Element& e) const override {
    PLUMBER_ASSIGN_OR_RETURN(const Tensor* component, Get(e, "length_filter"));
    const Tensor& t = *component;
    const double len = t.dtype() == DType::kString && t.NumElements() == 1 ? static_cast<double>(t.strings()[0].size())
                                                                           : static_cast<double>(t.NumElements());
    return len >= min_ && len <= max_;
  }

 private:
  double min_, max_;
};

// Keeps an element whose scalar component (a label) is one of `values`,
// or, without values, lies within min..max: "train on a subset of
// classes". A tensor of one value counts as a scalar, as parse_example's
// int64 features are.
class LabelIn final : public ComponentOp {
 public:
  explicit LabelIn(const Args& a)
      : ComponentOp(a),
        values_(a.NumberList("values", {})),
        min_(a.Number("min", -std::numeric_limits<double>::infinity())),
        max_(a.Number("max", std::numeric_limits<double>::infinity())) {}

  Status Apply(Element*, const UdfCtx&) const override { return Status::OK(); }

  StatusOr<bool> Test(const Element& e) const override {
    PLUMBER_ASSIGN_OR_RETURN(const Tensor* component, Get(e, "label_in"));
    const Tensor& t = *component;
    if (t.dtype() == DType::kString || t.NumElements() != 1) {
      return Status::InvalidArgument("label_in: expected a numeric scalar, got " + t.DebugType());
    }
    const double v = t.GetDouble(0);
    if (!values_.empty()) return std::find(values_.begin(), values_.end(), v) != values_.end();
    return v >= min_ && v <= max_;
  }

 private:
  std::vector<double> values_;
  double min_, max_;
};

// ---- cpu_burn / sleep / add ---------------------------------------------------------------

class CpuBurn final : public UdfOp {
 public:
  explicit CpuBurn(const Args& a)
      : iterations_(static_cast<uint64_t>(a.Number("micros", 0) * BurnIterationsPerMicro())) {}

  Status Apply(Element*, const UdfCtx&) const override {
    BurnLoop(iterations_);
    return Status::OK();
  }

 private:
  uint64_t iterations_;
};

class Sleep final : public UdfOp {
 public:
  explicit Sleep(const Args& a) : micros_(static_cast<int64_t>(a.Number("micros", 0))) {}

  Status Apply(Element*, const UdfCtx&) const override {
    BlockedScope blocked(Wait::kWork, CurrentNode());
    std::this_thread::sleep_for(std::chrono::microseconds(micros_));
    return Status::OK();
  }

 private:
  int64_t micros_;
};

class Add final : public ComponentOp {
 public:
  explicit Add(const Args& a) : ComponentOp(a), value_(a.Number("value", 1)) {}

  Status Apply(Element* e, const UdfCtx&) const override {
    PLUMBER_ASSIGN_OR_RETURN(Tensor * t, Get(e, "add"));
    if (t->dtype() == DType::kString) return Status::InvalidArgument("add: expected a numeric tensor, got " + t->DebugType());
    if (t->dtype() == DType::kInt64) {
      auto* d = t->data<int64_t>();
      const auto v = static_cast<int64_t>(value_);
      for (int64_t i = 0, n = t->NumElements(); i < n; ++i) d[i] += v;
      return Status::OK();
    }
    for (int64_t i = 0, n = t->NumElements(); i < n; ++i) t->SetDouble(i, t->GetDouble(i) + value_);
    return Status::OK();
  }

 private:
  double value_;
};

}  // namespace

namespace {

using UdfFactory = StatusOr<std::unique_ptr<UdfOp>> (*)(const Args& a, const std::string& op);

template <typename Op>
StatusOr<std::unique_ptr<UdfOp>> Plain(const Args& a, const std::string&) {
  return std::unique_ptr<UdfOp>(new Op(a));
}

StatusOr<std::unique_ptr<UdfOp>> MakeDecodeJpeg(const Args& a, const std::string&) {
  const double ch = a.Number("channels", 3);
  if (ch != 1 && ch != 3) return Status::InvalidArgument("decode_jpeg: channels must be 1 or 3");
  return std::unique_ptr<UdfOp>(new DecodeJpeg(a));
}

template <typename Op>
StatusOr<std::unique_ptr<UdfOp>> Sized(const Args& a, const std::string& op) {
  PLUMBER_RETURN_IF_ERROR(a.Require("height"));
  PLUMBER_RETURN_IF_ERROR(a.Require("width"));
  if (a.Number("height", 0) < 1 || a.Number("width", 0) < 1) {
    return Status::InvalidArgument(op + ": height and width must be >= 1");
  }
  return std::unique_ptr<UdfOp>(new Op(a));
}

StatusOr<std::unique_ptr<UdfOp>> MakeLabelIn(const Args& a, const std::string&) {
  const bool has_values = a.Has("values"), has_range = a.Has("min") || a.Has("max");
  if (has_values == has_range) {
    return Status::InvalidArgument("label_in: give either values (a list) or a range (min, max), not " +
                                   std::string(has_values ? "both" : "neither"));
  }
  if (has_values && a.NumberList("values", {}).empty()) {
    return Status::InvalidArgument("label_in: values must not be empty (it would keep nothing)");
  }
  if (a.Number("min", 0) > a.Number("max", 0) && a.Has("min") && a.Has("max")) {
    return Status::InvalidArgument("label_in: min is above max (it would keep nothing)");
  }
  return std::unique_ptr<UdfOp>(new LabelIn(a));
}

StatusOr<std::unique_ptr<UdfOp>> MakeDecompress(const Args& a, const std::string&) {
  PLUMBER_RETURN_IF_ERROR(a.Require("format"));
  PLUMBER_ASSIGN_OR_RETURN(Codec codec, ParseCodec(a.String("format", "")));
  if (codec == Codec::kNone) return Status::InvalidArgument("decompress: format must be gzip, zlib or zstd");
  return std::unique_ptr<UdfOp>(new DecompressOp(a, codec));
}

StatusOr<std::unique_ptr<UdfOp>> MakeTokenize(const Args& a, const std::string&) {
  if (a.Number("vocab_size", 1) < 1) return Status::InvalidArgument("tokenize: vocab_size must be >= 1");
  return std::unique_ptr<UdfOp>(new Tokenize(a));
}

// An hour per element is already absurd; the bound keeps the burn's
// iteration count far from overflow.
template <typename Op>
StatusOr<std::unique_ptr<UdfOp>> Timed(const Args& a, const std::string& op) {
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("micros", 0, 3.6e9, /*whole=*/false));
  PLUMBER_RETURN_IF_ERROR(a.Require("micros"));
  if (a.Number("micros", 0) < 0) return Status::InvalidArgument(op + ": micros must be >= 0");
  return std::unique_ptr<UdfOp>(new Op(a));
}

// One implementation per row of the UDF op table (lib/pipeline/udf_table.h);
// the registry test checks that none is missing.
using UdfFactoryRow = std::pair<std::string_view, UdfFactory>;
constexpr std::array kUdfFactories = {
    UdfFactoryRow{"parse_example", &Plain<ParseExample>},
    UdfFactoryRow{"decode_jpeg", &MakeDecodeJpeg},
    UdfFactoryRow{"random_crop", &Sized<RandomCrop>},
    UdfFactoryRow{"random_flip_left_right", &Plain<RandomFlip>},
    UdfFactoryRow{"resize", &Sized<Resize>},
    UdfFactoryRow{"normalize", &Plain<Normalize>},
    UdfFactoryRow{"decompress", &MakeDecompress},
    UdfFactoryRow{"tokenize", &MakeTokenize},
    UdfFactoryRow{"length_filter", &Plain<LengthFilter>},
    UdfFactoryRow{"label_in", &MakeLabelIn},
    UdfFactoryRow{"cpu_burn", &Timed<CpuBurn>},
    UdfFactoryRow{"sleep", &Timed<Sleep>},
    UdfFactoryRow{"add", &Plain<Add>},
};

}  // namespace

StatusOr<std::unique_ptr<UdfOp>> MakeUdfOp(const schema::UdfOp& spec) {
  const Args a(spec);
  constexpr double kMaxSide = 1 << 20;           // pixels per image side
  constexpr double kMaxWhole = 9007199254740992;  // 2^53: exact in a double
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("component", 0, 1 << 20));
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("height", 1, kMaxSide));
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("width", 1, kMaxSide));
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("seed", 0, kMaxWhole));
  PLUMBER_RETURN_IF_ERROR(a.CheckRange("vocab_size", 1, kMaxWhole));
  for (const auto& [name, factory] : kUdfFactories) {
    if (name == spec.op()) return factory(a, spec.op());
  }
  return Status::InvalidArgument("unknown UDF op '" + spec.op() + "'");
}

StatusOr<Udf> Udf::Make(const google::protobuf::RepeatedPtrField<schema::UdfOp>& specs) {
  Udf udf;
  for (int i = 0; i < specs.size(); ++i) {
    auto op = MakeUdfOp(specs[i]);
    if (!op.ok()) return op.status().WithContext("udf[" + std::to_string(i) + "]");
    udf.ops_.push_back(std::move(op).value());
    udf.names_.push_back(specs[i].op());
  }
  return udf;
}

Status Udf::Apply(Element* e, const UdfCtx& ctx) const {
  for (const auto& op : ops_) PLUMBER_RETURN_IF_ERROR(op->Apply(e, ctx));
  return Status::OK();
}

StatusOr<bool> Udf::Test(const Element& e, const UdfCtx& ctx) const {
  if (ops_.empty()) return Status::InvalidArgument("empty predicate");
  if (ops_.size() == 1) return ops_.back()->Test(e);
  Element copy = e;
  for (size_t i = 0; i + 1 < ops_.size(); ++i) PLUMBER_RETURN_IF_ERROR(ops_[i]->Apply(&copy, ctx));
  return ops_.back()->Test(copy);
}

}  // namespace plumber::runtime
