// Host-time profile of the shim calls a model library makes: how often each
// aoti_torch_* function runs and how long it takes on the calling thread
// (not the device work it queues). Off by default; when off, the cost is one
// relaxed atomic load per call. Turned on through aotirt::set_shim_profiling
// (`aotirt bench --profile-shims`), to find where a run's host time goes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace aotirt {

extern std::atomic<bool> g_shim_profiling;

// Adds one call of |name| (a string literal: __func__) that took |ns|.
void shim_profile_record(const char* name, int64_t ns);

struct ShimProfileCount {
  std::string name;
  uint64_t calls = 0;
  int64_t ns = 0;
};
// The counts so far, one per function, by name; |reset| clears them.
std::vector<ShimProfileCount> shim_profile_counts(bool reset);

// Times a scope into the profile when profiling is on.
class ShimProfileScope {
 public:
  explicit ShimProfileScope(const char* name)
      : name_(g_shim_profiling.load(std::memory_order_relaxed) ? name : nullptr) {
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~ShimProfileScope() {
    if (name_)
      shim_profile_record(
          name_, std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_)
                     .count());
  }
  ShimProfileScope(const ShimProfileScope&) = delete;
  ShimProfileScope& operator=(const ShimProfileScope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace aotirt
