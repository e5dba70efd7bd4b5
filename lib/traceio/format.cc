// Encoding detection and the JSON mapping shared by pipelines and traces.
#include "format.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/type_resolver_util.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <nlohmann/json.hpp>

namespace plumber {

Encoding DetectEncoding(std::string_view bytes) {
  for (char c : bytes) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    return c == '{' ? Encoding::kJson : Encoding::kBinary;
  }
  return Encoding::kBinary;
}

StatusOr<Encoding> EncodingForPath(const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".json")) return Encoding::kJson;
  if (ends_with(".pb") || ends_with(".binpb") || ends_with(".trace")) return Encoding::kBinary;
  return Status::InvalidArgument(path + ": cannot tell the format from the extension (use .json or .pb, or --to)");
}

StatusOr<Encoding> ParseEncodingName(std::string_view name) {
  if (name == "json") return Encoding::kJson;
  if (name == "pb" || name == "binary") return Encoding::kBinary;
  return Status::InvalidArgument("unknown format '" + std::string(name) + "' (expected json or pb)");
}

std::string SerializeDeterministic(const google::protobuf::Message& msg) {
  std::string out;
  msg.ByteSizeLong();  // fills the cached sizes SerializeWithCachedSizes relies on
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    msg.SerializeWithCachedSizes(&coded);
  }
  return out;
}

std::string MessageToJson(const google::protobuf::Message& msg) {
  // Printed from the deterministic binary form: MessageToJsonString would
  // emit map entries in hash order, so two conversions could differ.
  static auto* const resolver = google::protobuf::util::NewTypeResolverForDescriptorPool(
      "type.googleapis.com", google::protobuf::DescriptorPool::generated_pool());
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string out;
  // Printing a valid message cannot fail.
  (void)google::protobuf::util::BinaryToJsonString(resolver, "type.googleapis.com/" + msg.GetDescriptor()->full_name(),
                                                   SerializeDeterministic(msg), &out, options);
  if (out.empty() || out.back() != '\n') out.push_back('\n');
  return out;
}

namespace {

// Our schemas nest a few levels (a UDF argument may hold lists of lists);
// anything deeper is not a pipeline or a trace. Protobuf's JSON parser is
// quadratic in the depth: 100,000 nested brackets took it over ten minutes.
constexpr int kMaxJsonDepth = 64;

// Where valid JSON first nests deeper than kMaxJsonDepth, or npos.
size_t FindTooDeep(std::string_view json) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

std::string LineAndColumn(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

Status JsonToMessage(std::string_view json, const std::string& source, google::protobuf::Message* msg) {
  // nlohmann first: it reports where a syntax error is, protobuf does not.
  try {
    if (!nlohmann::json::accept(json)) [[maybe_unused]] auto parsed = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("; ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    return Status::InvalidArgument(source + ":" + LineAndColumn(json, e.byte > 0 ? e.byte - 1 : 0) +
                                   ": invalid JSON: " + what);
  }
  if (const size_t deep = FindTooDeep(json); deep != std::string_view::npos) {
    return Status::InvalidArgument(source + ":" + LineAndColumn(json, deep) + ": JSON nested more than " +
                                   std::to_string(kMaxJsonDepth) + " levels deep; no " +
                                   msg->GetDescriptor()->name() + " nests that far");
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(std::string(json), msg, options);
  if (!st.ok()) {
    return Status::InvalidArgument(source + ": does not match the " + msg->GetDescriptor()->name() +
                                   " schema: " + std::string(st.message()));
  }
  return Status::OK();
}

}  // namespace plumber
