// A minimal protobuf wire-format codec for tf.train.Example.
#include "runtime/example.h"

#include <cstring>

namespace plumber::runtime {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(std::string* out, int field, int wire) { PutVarint(out, (static_cast<uint64_t>(field) << 3) | wire); }

void PutLengthDelimited(std::string* out, int field, std::string_view bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string EncodeFeature(const FeatureValue& value, bool packed) {
  std::string list;
  int kind = 0;
  if (const auto* bytes = std::get_if<std::vector<std::string>>(&value)) {
    kind = 1;
    for (const auto& b : *bytes) PutLengthDelimited(&list, 1, b);
  } else if (const auto* floats = std::get_if<std::vector<float>>(&value)) {
    kind = 2;
    std::string body;
    for (float f : *floats) {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (packed) {
        PutFixed32(&body, bits);
      } else {
        PutTag(&list, 1, 5);
        PutFixed32(&list, bits);
      }
    }
    if (packed && !floats->empty()) PutLengthDelimited(&list, 1, body);
  } else {
    kind = 3;
    std::string body;
    for (int64_t v : std::get<std::vector<int64_t>>(value)) {
      if (packed) {
        PutVarint(&body, static_cast<uint64_t>(v));
      } else {
        PutTag(&list, 1, 0);
        PutVarint(&list, static_cast<uint64_t>(v));
      }
    }
    if (packed && !body.empty()) PutLengthDelimited(&list, 1, body);
  }
  std::string feature;
  PutLengthDelimited(&feature, kind, list);
  return feature;
}

// Reads protobuf fields off the front of a buffer.
class WireReader {
 public:
  explicit WireReader(std::string_view in) : in_(in) {}
  bool done() const { return in_.empty(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      const auto b = static_cast<unsigned char>(in_[0]);
      in_.remove_prefix(1);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool Fixed32(uint32_t* v) {
    if (in_.size() < 4) return false;
    *v = 0;
    for (int i = 3; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>(in_[i]);
    in_.remove_prefix(4);
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > in_.size()) return false;
    *out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool Tag(int* field, int* wire) {
    uint64_t t;
    if (!Varint(&t)) return false;
    *field = static_cast<int>(t >> 3);
    *wire = static_cast<int>(t & 7);
    return *field > 0;
  }
  bool SkipField(int wire) {
    uint64_t v;
    std::string_view s;
    uint32_t f;
    switch (wire) {
      case 0: return Varint(&v);
      case 1:
        if (in_.size() < 8) return false;
        in_.remove_prefix(8);
        return true;
      case 2: return Bytes(&s);
      case 5: return Fixed32(&f);
      default: return false;
    }
  }

 private:
  std::string_view in_;
};

Status Malformed(const std::string& what) { return Status::InvalidArgument("malformed tf.train.Example: " + what); }

StatusOr<FeatureValue> DecodeFeature(std::string_view bytes, const std::string& key) {
  WireReader r(bytes);
  FeatureValue value = std::vector<std::string>{};
  int field, wire;
  while (!r.done()) {
    if (!r.Tag(&field, &wire)) return Malformed("feature '" + key + "'");
    if (wire != 2 || field < 1 || field > 3) {
      if (!r.SkipField(wire)) return Malformed("feature '" + key + "'");
      continue;
    }
    std::string_view list;
    if (!r.Bytes(&list)) return Malformed("feature '" + key + "'");
    WireReader lr(list);
    int lf, lw;
    if (field == 1) {
      std::vector<std::string> out;
      while (!lr.done()) {
        std::string_view b;
        if (!lr.Tag(&lf, &lw)) return Malformed("bytes list of '" + key + "'");
        if (lf != 1 || lw != 2) {
          if (!lr.SkipField(lw)) return Malformed("bytes list of '" + key + "'");
          continue;
        }
        if (!lr.Bytes(&b)) return Malformed("bytes list of '" + key + "'");
        out.emplace_back(b);
      }
      value = std::move(out);
    } else if (field == 2) {
      std::vector<float> out;
      auto push = [&](uint32_t bits) {
        float f;
        std::memcpy(&f, &bits, 4);
        out.push_back(f);
      };
      while (!lr.done()) {
        if (!lr.Tag(&lf, &lw)) return Malformed("float list of '" + key + "'");
        uint32_t bits;
        if (lf == 1 && lw == 5) {
          if (!lr.Fixed32(&bits)) return Malformed("float list of '" + key + "'");
          push(bits);
        } else if (lf == 1 && lw == 2) {
          std::string_view packed;
          if (!lr.Bytes(&packed) || packed.size() % 4 != 0) return Malformed("packed floats of '" + key + "'");
          WireReader pr(packed);
          while (!pr.done() && pr.Fixed32(&bits)) push(bits);
        } else if (!lr.SkipField(lw)) {
          return Malformed("float list of '" + key + "'");
        }
      }
      value = std::move(out);
    } else {
      std::vector<int64_t> out;
      while (!lr.done()) {
        if (!lr.Tag(&lf, &lw)) return Malformed("int64 list of '" + key + "'");
        uint64_t v;
        if (lf == 1 && lw == 0) {
          if (!lr.Varint(&v)) return Malformed("int64 list of '" + key + "'");
          out.push_back(static_cast<int64_t>(v));
        } else if (lf == 1 && lw == 2) {
          std::string_view packed;
          if (!lr.Bytes(&packed)) return Malformed("packed int64s of '" + key + "'");
          WireReader pr(packed);
          while (!pr.done()) {
            if (!pr.Varint(&v)) return Malformed("packed int64s of '" + key + "'");
            out.push_back(static_cast<int64_t>(v));
          }
        } else if (!lr.SkipField(lw)) {
          return Malformed("int64 list of '" + key + "'");
        }
      }
      value = std::move(out);
    }
  }
  return value;
}

}  // namespace

std::string EncodeExample(const Features& features, bool packed) {
  std::string map;
  for (const auto& [key, value] : features) {
    std::string entry;
    PutLengthDelimited(&entry, 1, key);
    PutLengthDelimited(&entry, 2, EncodeFeature(value, packed));
    PutLengthDelimited(&map, 1, entry);
  }
  std::string example;
  PutLengthDelimited(&example, 1, map);
  return example;
}

StatusOr<Features> DecodeExample(std::string_view bytes) {
  Features out;
  WireReader r(bytes);
  int field, wire;
  while (!r.done()) {
    if (!r.Tag(&field, &wire)) return Malformed("bad tag");
    if (field != 1 || wire != 2) {
      if (!r.SkipField(wire)) return Malformed("bad field");
      continue;
    }
    std::string_view features;
    if (!r.Bytes(&features)) return Malformed("truncated features");
    WireReader fr(features);
    while (!fr.done()) {
      if (!fr.Tag(&field, &wire)) return Malformed("bad feature map");
      if (field != 1 || wire != 2) {
        if (!fr.SkipField(wire)) return Malformed("bad feature map");
        continue;
      }
      std::string_view entry;
      if (!fr.Bytes(&entry)) return Malformed("truncated feature map entry");
      WireReader er(entry);
      std::string key;
      std::string_view value;
      bool has_value = false;
      while (!er.done()) {
        if (!er.Tag(&field, &wire)) return Malformed("bad map entry");
        std::string_view b;
        if (wire == 2 && (field == 1 || field == 2)) {
          if (!er.Bytes(&b)) return Malformed("bad map entry");
          if (field == 1) {
            key.assign(b);
          } else {
            value = b;
            has_value = true;
          }
        } else if (!er.SkipField(wire)) {
          return Malformed("bad map entry");
        }
      }
      FeatureValue decoded = std::vector<std::string>{};
      if (has_value) {
        PLUMBER_ASSIGN_OR_RETURN(decoded, DecodeFeature(value, key));
      }
      out[key] = std::move(decoded);
    }
  }
  return out;
}

}  // namespace plumber::runtime
