#include "failing_operator_new.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace aotirt::test {
namespace {

std::atomic<size_t> g_fail_from{0};
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_fail_at{0};

}  // namespace

void fail_allocations_from(size_t bytes) { g_fail_from = bytes; }

void fail_allocation_at(uint64_t nth) {
  g_calls = 0;
  g_fail_at = nth;
  g_counting = nth != 0;
}

void count_allocations() {
  g_fail_at = 0;
  g_calls = 0;
  g_counting = true;
}

uint64_t allocations_counted() { return g_calls.load(); }

void stop_failing_allocations() {
  g_counting = false;
  g_fail_at = 0;
}

// Whether this call must fail.
static bool should_fail(size_t n) {
  const size_t from = g_fail_from.load(std::memory_order_relaxed);
  if (from != 0 && n >= from) return true;
  if (!g_counting.load(std::memory_order_relaxed)) return false;
  const uint64_t call = g_calls.fetch_add(1) + 1;
  return call == g_fail_at.load(std::memory_order_relaxed);
}

}  // namespace aotirt::test

// The replaceable global allocation functions. The nothrow forms are
// replaced too: libstdc++ frees what its nothrow new gave (std::stable_sort's
// buffer) with the plain delete, so both must come from the same allocator,
// which ASan checks. The aligned forms pair only with each other and are
// left to the library.
void* operator new(std::size_t n) {
  if (aotirt::test::should_fail(n)) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
