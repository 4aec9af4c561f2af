// <ukai/status.hpp>: Status and Result<T>, values for expected failures (bad config,
// refused connection, malformed frame). Exceptions are not used for those; a Status names
// what went wrong and where in its message. Part of the installed public headers (the tree's
// src/core/status.h forwards here).
//
// Checked access: reading the value of a Result that holds an error throws
// ukai::BadResultAccess (carrying the error) in every build, never undefined behaviour. The
// runtime catches it at its handler dispatch boundary, so a handler that dereferences a
// failed unpack (`*m.reader().GetString()` on a short payload) fails alone, reported, and
// the process goes on (docs/runtime.md, "Handler errors").
//
// Thread safety: plain values; distinct objects may be used from distinct threads.
#ifndef UKAI_STATUS_HPP_
#define UKAI_STATUS_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ukai {

// What kind of failure a Status describes. Callers branch on the code; people read the
// message.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input: config value, command-line argument, API argument
  kParseError,          // malformed text or bytes (TOML, wire frame, buffer unpack)
  kNotFound,            // unknown name (routing algorithm, handler, module, key)
  kOutOfRange,          // read past the end, value outside its domain
  kUnsupported,         // valid request that this component cannot do
  kFailedPrecondition,  // object not in a state that allows the call
  kUnavailable,         // peer or resource gone (closed connection, dead process)
  kDeadlock,            // the simulator's watchdog fired
  kIoError,             // operating-system call failed
  kInternal,            // a broken invariant of ukai itself
  kCancelled,           // the caller cancelled the operation (a request)
  kTimeout,             // the operation's deadline passed (a request)
  kWouldBlock,          // the call would have to wait (runtime: a peer's send queue is full)
};
// The largest StatusCode value (codes travel on the wire in replies).
inline constexpr StatusCode kLastStatusCode = StatusCode::kWouldBlock;

// Returns a short lower-case name of `code` ("invalid argument", ...).
std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  // A default-constructed Status is OK.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status ParseError(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Deadlock(std::string m) { return {StatusCode::kDeadlock, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status WouldBlock(std::string m) { return {StatusCode::kWouldBlock, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // The config key the error is about ("router.vcs"), or "" when it is not about one key.
  // Config checks set it (WithKey) so that a caller can find where the key was written
  // without reading the message; the message still names the key for people. Not sent on
  // the wire (a runtime reply carries code and message only).
  const std::string& key() const { return key_; }

  // "invalid argument: router.vcs: must be >= 1 (got 0) at quick.toml:4:7"; "OK" when ok.
  std::string ToString() const;

  // Returns a copy whose message is "context: message" (no-op when ok); the key is kept.
  Status WithContext(std::string_view context) const;

  // Returns a copy that carries `key` as key() (no-op when ok); the message is unchanged.
  Status WithKey(std::string key) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string key_;
};

// Thrown by Result<T>::value() (and *, ->) on a Result that holds an error: a programming
// error, checked in every build. what() is "Result::value() on an error: <status>";
// status() is the error the Result held.
class BadResultAccess : public std::logic_error {
 public:
  explicit BadResultAccess(Status status)
      : std::logic_error("Result::value() on an error: " + status.ToString()),
        status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Either a value of type T or a non-OK Status. Access to value() on an error throws
// BadResultAccess (above). A Result built from an OK Status (a programming error) holds
// an kInternal error saying so.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // The error, or OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & {
    Check();
    return std::get<T>(v_);
  }
  const T& value() const& {
    Check();
    return std::get<T>(v_);
  }
  T&& value() && {
    Check();
    return std::get<T>(std::move(v_));
  }

  // On an rvalue (`*Rma::Create(ctx)`, `*std::move(r)`) the value is moved out.
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void Check() const {
    if (!ok()) throw BadResultAccess(std::get<Status>(v_));
  }
  std::variant<T, Status> v_;
};

}  // namespace ukai

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define UKAI_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::ukai::Status ukai_status_ = (expr);        \
    if (!ukai_status_.ok()) return ukai_status_; \
  } while (0)

#endif  // __cplusplus >= 202002L

#endif  // UKAI_STATUS_HPP_
