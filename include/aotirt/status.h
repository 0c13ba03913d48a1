// Status and Result: how every aotirt function reports failure.
//
// A Status is one pointer: null means OK, otherwise it owns a heap record with
// a code, a message and the source location where it was made. Result<T>
// holds either a value or a non-OK Status. Neither ever throws.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

// Marks the public API for export from libaotirt.so; all else is hidden.
#define AOTIRT_API [[gnu::visibility("default")]]

namespace aotirt {

enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,   // the caller passed something wrong (shape, dtype, count)
  kNotFound = 2,          // a file, entry, symbol or name does not exist
  kOutOfRange = 3,
  kResourceExhausted = 4, // out of memory, or past a configured limit
  kUnimplemented = 5,     // a feature or op aotirt does not provide
  kInternal = 6,          // a bug in aotirt or in the model library
  kUnavailable = 7,       // a device or backend that is not present
  kIncompatible = 8,      // a package built for another device, ISA or GPU
  kIoError = 9,           // reading or writing a file failed
  kDataLoss = 10,         // a file is corrupt or truncated
};

// Returns a short stable name such as "INVALID_ARGUMENT".
AOTIRT_API const char* status_code_name(StatusCode code);

class [[nodiscard]] AOTIRT_API Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, const char* file = nullptr, int line = 0);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok_status() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // Borrowed; valid while this Status lives. Empty for OK.
  const std::string& message() const;
  // "CODE: message" (and " [file:line]" when a location is known).
  std::string to_string() const;

  // Prepends context, e.g. "loading model.pt2: ", keeping code and location.
  Status& annotate(const std::string& context);

 private:
  struct State {
    StatusCode code;
    std::string message;
    const char* file;
    int line;
  };
  std::unique_ptr<State> state_;
};

template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same<T, Status>::value, "Result<Status> is meaningless");

 public:
  Result(T value) : has_value_(true) { new (&storage_) T(std::move(value)); }  // NOLINT
  Result(Status status) : status_(std::move(status)) {                           // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "Result built from an OK Status");
  }
  Result(const Result& o) : status_(o.status_), has_value_(o.has_value_) {
    if (has_value_) new (&storage_) T(o.value());
  }
  Result(Result&& o) noexcept : status_(std::move(o.status_)), has_value_(o.has_value_) {
    if (has_value_) new (&storage_) T(std::move(o.value()));
  }
  Result& operator=(Result o) {
    destroy();
    status_ = std::move(o.status_);
    has_value_ = o.has_value_;
    if (has_value_) new (&storage_) T(std::move(o.value()));
    return *this;
  }
  ~Result() { destroy(); }

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }
  Status take_status() { return std::move(status_); }

  T& value() & { return *reinterpret_cast<T*>(&storage_); }
  const T& value() const& { return *reinterpret_cast<const T*>(&storage_); }
  T&& value() && { return std::move(*reinterpret_cast<T*>(&storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  void destroy() {
    if (has_value_) reinterpret_cast<T*>(&storage_)->~T();
    has_value_ = false;
  }
  Status status_;
  bool has_value_ = false;
  typename std::aligned_storage<sizeof(T), alignof(T)>::type storage_;
};

}  // namespace aotirt
