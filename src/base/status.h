// Internal helpers around the public Status/Result: construction macros that
// record file and line, early-return macros, and the thread-local last error
// that shims and the public API fill and the CLI prints.
#pragma once

#include <fmt/format.h>

#include <string>

#include "aotirt/status.h"

namespace aotirt {

// Formats a message and makes a Status carrying |file| and |line|.
template <class... Args>
Status make_status(StatusCode code, const char* file, int line, fmt::format_string<Args...> f,
                   Args&&... args) {
  return Status(code, fmt::format(f, std::forward<Args>(args)...), file, line);
}

// Stores |status| as this thread's last error (replacing any earlier one).
void set_last_error(const Status& status);
// This thread's last error; OK when none was recorded since the last clear.
const Status& get_last_error();
void clear_last_error();

}  // namespace aotirt

#define AOTIRT_STATUS(code, ...) \
  ::aotirt::make_status(::aotirt::StatusCode::code, __FILE__, __LINE__, __VA_ARGS__)

#define AOTIRT_CONCAT_INNER(a, b) a##b
#define AOTIRT_CONCAT(a, b) AOTIRT_CONCAT_INNER(a, b)

// Returns the Status of |expr| from the enclosing function when it is not OK.
#define AOTIRT_RETURN_IF_ERROR(expr)                       \
  do {                                                     \
    ::aotirt::Status aotirt_status_ = (expr);              \
    if (!aotirt_status_.ok()) return aotirt_status_;       \
  } while (0)

// Evaluates a Result; on error returns its Status, else binds the value to |lhs|.
#define AOTIRT_ASSIGN_OR_RETURN(lhs, expr) \
  AOTIRT_ASSIGN_OR_RETURN_IMPL(AOTIRT_CONCAT(aotirt_result_, __LINE__), lhs, expr)
#define AOTIRT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.take_status();           \
  lhs = std::move(tmp).value()

// Returns an error Status when |cond| is false (input validation, not invariants).
#define AOTIRT_ENSURE(cond, code, ...)                     \
  do {                                                     \
    if (!(cond)) return AOTIRT_STATUS(code, __VA_ARGS__);  \
  } while (0)
