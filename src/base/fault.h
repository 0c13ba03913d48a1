// Fault injection: named points in the runtime where an operation can be
// made to fail on purpose (the Nth device allocation, a write of a package
// file, a read of the weights), so that tests drive every error path of
// load and run with the failure a full disk or a bad sector would give.
// Unarmed, a point costs one relaxed atomic load; nothing in normal use arms
// one. Tests reach this header through the static library.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace aotirt::fault {

enum class Point : int {
  kDeviceAlloc = 0,  // Allocator::allocate of every device (CPU, CUDA)
  kFileWrite,        // write_all: the model library's memfd, extracted kernels
  kWeightsRead,      // reading a range of the weights blob before the copy
  kCount,
};

// What check() returns: 0 to go on, else the errno value to fail with.
// |before| runs at the armed hit, before the operation, whether or not an
// error is injected (a test can make the failure real there: truncate the
// file being read, say).
struct Plan {
  uint64_t nth = 1;  // the hit, counted from arm(), that fails (1 = the next)
  int error = 0;     // errno value to report; 0 = run |before| only
  std::function<void()> before;
};

// Arms |p| for one failure; replaces an earlier plan of |p|. Turns on
// counting (hits()).
void arm(Point p, Plan plan);
// Disarms every point, stops counting and zeroes the counts.
void reset();
// Counts hits of every point from now on, without failing any.
void start_counting();
// Hits of |p| since counting started (arm() restarts its count).
uint64_t hits(Point p);

// At the point itself: 0, or the errno value to fail with.
int check_slow(Point p);
extern std::atomic<bool> g_active;
inline int check(Point p) {
  if (!g_active.load(std::memory_order_relaxed)) return 0;
  return check_slow(p);
}

// Arms a plan for the life of a scope and resets everything at its end.
class Scope {
 public:
  Scope() = default;
  Scope(Point p, Plan plan) { arm(p, std::move(plan)); }
  ~Scope() { reset(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

}  // namespace aotirt::fault
