//===- Error.h - Errors as values -------------------------------*- C++ -*-===//
//
// Library code never prints or exits. It returns an Error (a message, or
// success) or an Expected<T> (a value, or an Error). Only a tool's main turns
// an error into text on stderr and an exit code.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_ERROR_H
#define GC_SUPPORT_ERROR_H

#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace gc {

/// A failure with a human-readable message, or success. The message names
/// the file, node or op it is about; callers may prefix context.
class [[nodiscard]] Error {
public:
  static Error success() { return Error(); }
  static Error failure(std::string message) {
    Error e;
    e.message_ = std::move(message);
    e.failed_ = true;
    return e;
  }

  explicit operator bool() const { return failed_; }
  const std::string &message() const { return message_; }

  /// Returns this error with "context: " put before its message.
  Error withContext(const std::string &context) const {
    if (!failed_)
      return *this;
    return failure(context + ": " + message_);
  }

private:
  std::string message_;
  bool failed_ = false;
};

/// Builds an error message with stream syntax:
///   return makeError() << path << ": bad magic";
class ErrorBuilder {
public:
  template <typename T> ErrorBuilder &operator<<(const T &v) {
    os_ << v;
    return *this;
  }
  operator Error() const { return Error::failure(os_.str()); }
  std::string str() const { return os_.str(); }

private:
  std::ostringstream os_;
};
inline ErrorBuilder makeError() { return ErrorBuilder(); }

/// A value of type T, or the Error that prevented it.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : storage_(std::move(value)) {}
  Expected(Error error) : storage_(std::move(error)) {
    assert(std::get<Error>(storage_) && "Expected built from success");
  }
  Expected(const ErrorBuilder &b) : Expected(Error(b)) {}

  explicit operator bool() const { return std::holds_alternative<T>(storage_); }
  T &operator*() { return std::get<T>(storage_); }
  const T &operator*() const { return std::get<T>(storage_); }
  T *operator->() { return &std::get<T>(storage_); }
  const T *operator->() const { return &std::get<T>(storage_); }
  T take() { return std::move(std::get<T>(storage_)); }
  const Error &error() const { return std::get<Error>(storage_); }

private:
  std::variant<T, Error> storage_;
};

} // namespace gc

/// Returns from the enclosing function if `expr` (an Error) failed.
#define GC_RETURN_IF_ERROR(expr)                                               \
  do {                                                                         \
    if (::gc::Error gcErr_ = (expr))                                           \
      return gcErr_;                                                           \
  } while (0)

#endif // GC_SUPPORT_ERROR_H
