#include "shim/common/shim_profile.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "aotirt/model.h"

namespace aotirt {

std::atomic<bool> g_shim_profiling{false};

namespace {
struct Counter {
  uint64_t calls = 0;
  int64_t ns = 0;
};
struct Profile {
  std::mutex mutex;
  // Keyed by the literal's address: one entry per function, no string work
  // on the hot path.
  std::map<const char*, Counter> counters;
};
Profile& profile() {
  static auto* p = new Profile();  // leaked: shims may run during static destruction
  return *p;
}
}  // namespace

void shim_profile_record(const char* name, int64_t ns) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  Counter& c = p.counters[name];
  c.calls++;
  c.ns += ns;
}

void set_shim_profiling(bool on) { g_shim_profiling.store(on, std::memory_order_relaxed); }

std::vector<ShimProfileEntry> shim_profile(bool reset) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::map<std::string, ShimProfileEntry> merged;
  for (const auto& kv : p.counters) {
    ShimProfileEntry& e = merged[kv.first];
    e.name = kv.first;
    e.calls += kv.second.calls;
    e.total_us += static_cast<double>(kv.second.ns) / 1000.0;
  }
  if (reset) p.counters.clear();
  std::vector<ShimProfileEntry> out;
  for (auto& kv : merged) out.push_back(std::move(kv.second));
  return out;
}

}  // namespace aotirt
