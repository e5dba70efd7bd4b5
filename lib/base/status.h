// Status: the outcome of an operation that can fail, in the LevelDB style.
// Libraries return Status or StatusOr<T>; exceptions stop at the CLI
// boundary. A Status carries a code (what kind of failure, which decides the
// exit code) and a message that names the file and place it concerns.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace plumber {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,   // bad usage or bad input: exit code 2
    kNotFound,          // a named file, node or field does not exist
    kCorruption,        // a file's bytes are not what its format says
    kIOError,           // the system refused a read or write
    kFailedPrecondition,// input is well-formed but cannot be used as asked
    kOutOfRange,        // a value beyond what the operation supports
    kResourceExhausted, // a configured ceiling was reached
    kCancelled,         // stopped on request (signal, Close)
    kUnimplemented,
    kInternal,          // a bug in plumber
  };

  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status FailedPrecondition(std::string msg) { return Status(Code::kFailedPrecondition, std::move(msg)); }
  static Status OutOfRange(std::string msg) { return Status(Code::kOutOfRange, std::move(msg)); }
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }
  static Status Cancelled(std::string msg) { return Status(Code::kCancelled, std::move(msg)); }
  static Status Unimplemented(std::string msg) { return Status(Code::kUnimplemented, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // True for failures caused by what the user handed us (exit code 2), as
  // opposed to the system or plumber failing (exit code 1).
  bool IsBadInput() const;

  // "Corruption: trace.pb: record 3 at offset 120: ..." style text.
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message"; used to add the file
  // or node name as an error travels up.
  Status WithContext(std::string_view prefix) const;

  bool operator==(const Status& other) const = default;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status saying why there is none.
template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::Internal("StatusOr constructed from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Precondition for the accessors: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace plumber

// Returns from the enclosing function when `expr` yields a non-OK Status.
#define PLUMBER_RETURN_IF_ERROR(expr)              \
  do {                                             \
    ::plumber::Status _plumber_st = (expr);        \
    if (!_plumber_st.ok()) return _plumber_st;     \
  } while (0)

#define PLUMBER_CONCAT_INNER(a, b) a##b
#define PLUMBER_CONCAT(a, b) PLUMBER_CONCAT_INNER(a, b)
// Declares `lhs` from a StatusOr expression, returning its Status on failure.
#define PLUMBER_ASSIGN_OR_RETURN(lhs, expr) \
  PLUMBER_ASSIGN_OR_RETURN_IMPL(PLUMBER_CONCAT(_plumber_so_, __LINE__), lhs, expr)
#define PLUMBER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
