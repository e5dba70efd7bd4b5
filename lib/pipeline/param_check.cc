// The shared parameter checks of param_check.h.
#include "pipeline/param_check.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "pipeline/op_table.h"
#include "pipeline/udf_table.h"

namespace plumber {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

namespace {

bool TypeMatches(ArgType type, const google::protobuf::Value& v) {
  using K = google::protobuf::Value::KindCase;
  auto all_of_kind = [&](K kind) {
    if (v.kind_case() != K::kListValue) return false;
    for (const auto& e : v.list_value().values()) {
      if (e.kind_case() != kind) return false;
    }
    return true;
  };
  switch (type) {
    case ArgType::kNumber: return v.kind_case() == K::kNumberValue;
    case ArgType::kString: return v.kind_case() == K::kStringValue;
    case ArgType::kBool: return v.kind_case() == K::kBoolValue;
    case ArgType::kStringList: return all_of_kind(K::kStringValue);
    case ArgType::kNumberList: return all_of_kind(K::kNumberValue);
  }
  return false;
}

std::string TypeName(ArgType type) {
  switch (type) {
    case ArgType::kNumber: return "a number";
    case ArgType::kString: return "a string";
    case ArgType::kBool: return "true or false";
    case ArgType::kStringList: return "a list of strings";
    case ArgType::kNumberList: return "a list of numbers";
  }
  return "?";
}

// "gzip", "zlib" and "zstd" -> "gzip, zlib or zstd".
std::string Choices(std::span<const std::string_view> choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

}  // namespace

std::string Problem::ToString() const {
  std::string out;
  if (!node.empty()) out += "node " + Quote(node) + ": ";
  if (!field.empty()) out += "field " + Quote(field) + ": ";
  return out + message;
}

ParamChecker::ParamChecker(const schema::Node& node, bool in_function,
                           std::function<bool(const std::string&)> is_node, std::vector<Problem>* out)
    : node_(node), in_function_(in_function), is_node_(std::move(is_node)), out_(out) {}

void ParamChecker::Add(std::string field, std::string message) {
  out_->push_back({node_.name(), std::move(field), std::move(message)});
}

void ParamChecker::Min(const std::string& field, int64_t value, int64_t lo) {
  if (value < lo) Add(field, "must be >= " + std::to_string(lo) + ", got " + std::to_string(value));
}

void ParamChecker::Threads(const std::string& field, int64_t value) {
  Min(field, value, 1);
  if (value > kMaxParallelism) {
    Add(field, "must be at most " + std::to_string(kMaxParallelism) + ", got " + std::to_string(value));
  }
}

void ParamChecker::Compression(const std::string& field, const std::string& c) {
  if (c != "" && c != "GZIP" && c != "ZLIB") {
    Add(field, "unknown compression " + Quote(c) + " (expected \"\", \"GZIP\" or \"ZLIB\")");
  }
}

void ParamChecker::ReaderSource(int files) {
  if (files == 0 && node_.inputs_size() == 0 && !in_function_ && !imported_) {
    Add(node_.op() + ".files", "a reader needs files, an input of file names, or to be part of an interleave function");
  }
  if (files > 0 && node_.inputs_size() > 0) {
    Add(node_.op() + ".files", "give either files or an input of file names, not both");
  }
}

void ParamChecker::Udf(const std::string& field, const google::protobuf::RepeatedPtrField<schema::UdfOp>& udf,
                       bool is_filter) {
  for (int i = 0; i < udf.size(); ++i) {
    const schema::UdfOp& step = udf[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    const UdfOpDef* def = FindUdfOp(step.op());
    if (def == nullptr) {
      std::vector<std::string_view> known;
      for (const auto& u : AllUdfOps()) known.push_back(u.name);
      Add(where + ".op", "unknown UDF op " + Quote(step.op()) + " (known: " + JoinNames(known) + ")");
      continue;
    }
    const bool last = i + 1 == udf.size();
    if (def->predicate && !(is_filter && last)) {
      Add(where + ".op", Quote(step.op()) + " is a predicate: it may only end a filter's predicate");
    } else if (is_filter && last && !def->predicate) {
      Add(where + ".op", "a filter's predicate must end in a predicate op such as 'length_filter'");
    }
    UdfArgs(where, *def, step);
  }
}

void ParamChecker::UdfArgs(const std::string& where, const UdfOpDef& def, const schema::UdfOp& step) {
  // Sorted so the problems come out in a stable order.
  std::map<std::string, const google::protobuf::Value*> given;
  for (const auto& [k, v] : step.args()) given[k] = &v;
  for (const auto& entry : given) {
    const std::string& key = entry.first;
    const google::protobuf::Value* value = entry.second;
    const auto it = std::find_if(def.args.begin(), def.args.end(), [&](const UdfArgDef& a) { return a.name == key; });
    const std::string field = where + ".args." + key;
    if (it == def.args.end()) {
      std::vector<std::string_view> known;
      for (const auto& a : def.args) known.push_back(a.name);
      Add(field, Quote(def.name) + " takes no argument " + Quote(key) +
                     (known.empty() ? std::string(" (it takes none)") : " (it takes: " + JoinNames(known) + ")"));
      continue;
    }
    if (!TypeMatches(it->type, *value)) {
      Add(field, "must be " + TypeName(it->type));
      continue;
    }
    if (it->type == ArgType::kNumber) {
      const double v = value->number_value();
      if (!std::isfinite(v) || (it->min >= 0 && v < 0)) {
        Add(field, "must be a finite number >= 0");
      } else if (v < it->min) {
        Add(field, "must be >= " + std::to_string(static_cast<int64_t>(it->min)));
      }
    }
    if (!it->choices.empty() &&
        std::find(it->choices.begin(), it->choices.end(), value->string_value()) == it->choices.end()) {
      Add(field, "unknown " + key + " " + Quote(value->string_value()) + " (expected " + Choices(it->choices) + ")");
    }
  }
  for (const auto& a : def.args) {
    if (a.required && !given.count(std::string(a.name))) {
      Add(where + ".args." + std::string(a.name), Quote(def.name) + " requires this argument");
    }
  }
}

}  // namespace plumber
