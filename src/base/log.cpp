#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace aotirt {
namespace {

LogLevel initial_level() {
  const char* env = std::getenv("AOTIRT_LOG_LEVEL");
  if (!env) return LogLevel::kWarning;
  if (!std::strcmp(env, "debug")) return LogLevel::kDebug;
  if (!std::strcmp(env, "info")) return LogLevel::kInfo;
  if (!std::strcmp(env, "error")) return LogLevel::kError;
  if (!std::strcmp(env, "off")) return LogLevel::kOff;
  return LogLevel::kWarning;
}

std::atomic<int> g_level{static_cast<int>(initial_level())};
std::mutex g_sink_mutex;
LogSink g_sink = nullptr;
void* g_sink_user = nullptr;

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    default: return "";
  }
}

}  // namespace

void set_log_sink(LogSink sink, void* user) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = sink;
  g_sink_user = user;
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void log_message(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink) {
    g_sink(level, message.c_str(), g_sink_user);
    return;
  }
  std::fprintf(stderr, "aotirt %s: %s\n", level_name(level), message.c_str());
}

}  // namespace aotirt
