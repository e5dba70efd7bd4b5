// The two encodings of plumber's files (JSON for people, binary protobuf or
// framed records for machines), told apart by content when reading and by
// extension or flag when writing.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace google::protobuf { class Message; }

namespace plumber {

enum class Encoding { kJson, kBinary };

// JSON when the first non-blank byte is '{'; binary otherwise.
Encoding DetectEncoding(std::string_view bytes);

// ".json" -> JSON; ".pb", ".binpb", ".trace" -> binary; else InvalidArgument.
StatusOr<Encoding> EncodingForPath(const std::string& path);
// "json" or "pb"/"binary".
StatusOr<Encoding> ParseEncodingName(std::string_view name);

// Binary protobuf with map entries sorted by key, so that a file converted
// twice is the same bytes.
std::string SerializeDeterministic(const google::protobuf::Message& msg);

// Protobuf JSON mapping with proto field names, two-space indentation and a
// trailing newline, so committed files diff well.
std::string MessageToJson(const google::protobuf::Message& msg);

// Parses JSON text into msg. Errors say "<source>:<line>:<col>: ..." for
// syntax errors and name the field for schema errors.
Status JsonToMessage(std::string_view json, const std::string& source, google::protobuf::Message* msg);

}  // namespace plumber
