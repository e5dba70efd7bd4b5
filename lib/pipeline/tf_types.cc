// Looking up the rows of tf_types.h.
#include "pipeline/tf_types.h"

#include <cctype>

namespace plumber {

TfTypeName SplitTfType(std::string_view op) {
  TfTypeName t;
  std::string s(op);
  const size_t d = s.find("Dataset");
  if (d != std::string::npos) s.erase(d, 7);
  t.type = s;
  size_t v = s.size();
  while (v > 0 && std::isdigit(static_cast<unsigned char>(s[v - 1]))) --v;
  if (v > 0 && v < s.size() && s[v - 1] == 'V') {
    t.base = s.substr(0, v - 1);
    t.version = s.substr(v - 1);
  } else {
    t.base = s;
  }
  return t;
}

const TfTypeDef* FindTfType(std::string_view type) {
  const TfTypeName t = SplitTfType(type);
  for (const auto& row : kTfTypes) {
    if (row.base == t.base) return &row;
  }
  return nullptr;
}

std::span<const TfTypeDef> AllTfTypes() { return kTfTypes; }

}  // namespace plumber
