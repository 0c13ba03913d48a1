// Logging with a replaceable sink. The library prints nothing by default except
// warnings and errors, to stderr; hosts may redirect or silence them.
#pragma once

#include <fmt/format.h>

#include <string>

namespace aotirt {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

using LogSink = void (*)(LogLevel level, const char* message, void* user);

// Replaces the sink; nullptr restores the default stderr sink.
void set_log_sink(LogSink sink, void* user);
// Messages below |level| are dropped. Default: kWarning, or AOTIRT_LOG_LEVEL.
void set_log_level(LogLevel level);
LogLevel log_level();
void log_message(LogLevel level, const std::string& message);

}  // namespace aotirt

#define AOTIRT_LOG(level, ...)                                                  \
  do {                                                                          \
    if (static_cast<int>(::aotirt::LogLevel::level) >=                          \
        static_cast<int>(::aotirt::log_level()))                                \
      ::aotirt::log_message(::aotirt::LogLevel::level, fmt::format(__VA_ARGS__)); \
  } while (0)
