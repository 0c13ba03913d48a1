#include "base/status.h"

namespace aotirt {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kIncompatible: return "INCOMPATIBLE";
    case StatusCode::kIoError: return "IO_ERROR";
    case StatusCode::kDataLoss: return "DATA_LOSS";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message, const char* file, int line) {
  if (code == StatusCode::kOk) return;
  state_.reset(new State{code, std::move(message), file, line});
}

Status::Status(const Status& other) {
  if (other.state_) state_.reset(new State(*other.state_));
}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_.reset(other.state_ ? new State(*other.state_) : nullptr);
  return *this;
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::to_string() const {
  if (!state_) return "OK";
  std::string s = fmt::format("{}: {}", status_code_name(state_->code), state_->message);
  if (state_->file) {
    // Only the file name: full build paths are noise for users.
    const char* base = state_->file;
    for (const char* p = state_->file; *p; ++p)
      if (*p == '/') base = p + 1;
    s += fmt::format(" [{}:{}]", base, state_->line);
  }
  return s;
}

Status& Status::annotate(const std::string& context) {
  if (state_) state_->message = context + ": " + state_->message;
  return *this;
}

namespace {
thread_local Status t_last_error;
}

void set_last_error(const Status& status) { t_last_error = status; }
const Status& get_last_error() { return t_last_error; }
void clear_last_error() { t_last_error = Status(); }

}  // namespace aotirt
