#include "shim/common/shim_profile.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

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

std::vector<ShimProfileCount> shim_profile_counts(bool reset) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  // Literals of one name may have several addresses (one per library).
  std::map<std::string, ShimProfileCount> merged;
  for (const auto& kv : p.counters) {
    ShimProfileCount& c = merged[kv.first];
    c.name = kv.first;
    c.calls += kv.second.calls;
    c.ns += kv.second.ns;
  }
  if (reset) p.counters.clear();
  std::vector<ShimProfileCount> out;
  for (auto& kv : merged) out.push_back(std::move(kv.second));
  return out;
}

}  // namespace aotirt
