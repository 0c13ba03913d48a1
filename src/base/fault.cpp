#include "base/fault.h"

#include <array>
#include <mutex>
#include <optional>

namespace aotirt::fault {

std::atomic<bool> g_active{false};

namespace {

struct PointState {
  uint64_t hits = 0;
  std::optional<Plan> plan;
};

std::mutex& state_mutex() {
  static std::mutex m;
  return m;
}

std::array<PointState, static_cast<size_t>(Point::kCount)>& states() {
  static std::array<PointState, static_cast<size_t>(Point::kCount)> s;
  return s;
}

}  // namespace

void arm(Point p, Plan plan) {
  std::lock_guard<std::mutex> lock(state_mutex());
  PointState& s = states()[static_cast<size_t>(p)];
  s.hits = 0;
  s.plan = std::move(plan);
  g_active.store(true, std::memory_order_relaxed);
}

void reset() {
  std::lock_guard<std::mutex> lock(state_mutex());
  for (PointState& s : states()) s = PointState();
  g_active.store(false, std::memory_order_relaxed);
}

void start_counting() {
  std::lock_guard<std::mutex> lock(state_mutex());
  for (PointState& s : states()) s.hits = 0;
  g_active.store(true, std::memory_order_relaxed);
}

uint64_t hits(Point p) {
  std::lock_guard<std::mutex> lock(state_mutex());
  return states()[static_cast<size_t>(p)].hits;
}

int check_slow(Point p) {
  std::function<void()> before;
  int error = 0;
  {
    std::lock_guard<std::mutex> lock(state_mutex());
    PointState& s = states()[static_cast<size_t>(p)];
    ++s.hits;
    if (!s.plan || s.hits != s.plan->nth) return 0;
    before = std::move(s.plan->before);
    error = s.plan->error;
    s.plan.reset();
  }
  // Outside the lock: the action may do anything, allocations included.
  if (before) before();
  return error;
}

}  // namespace aotirt::fault
