// Status text and classification.
#include "status.h"

namespace plumber {
namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "Invalid argument";
    case Status::Code::kNotFound: return "Not found";
    case Status::Code::kCorruption: return "Corruption";
    case Status::Code::kIOError: return "IO error";
    case Status::Code::kFailedPrecondition: return "Failed precondition";
    case Status::Code::kOutOfRange: return "Out of range";
    case Status::Code::kResourceExhausted: return "Resource exhausted";
    case Status::Code::kCancelled: return "Cancelled";
    case Status::Code::kUnimplemented: return "Unimplemented";
    case Status::Code::kInternal: return "Internal error";
  }
  return "Unknown";
}

}  // namespace

bool Status::IsBadInput() const {
  switch (code_) {
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kCorruption:
    case Code::kFailedPrecondition:
    case Code::kOutOfRange:
    case Code::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, std::string(prefix) + ": " + message_);
}

}  // namespace plumber
