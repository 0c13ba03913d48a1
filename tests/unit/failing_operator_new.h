// The unit test program's global operator new, which can fail on demand:
// every allocation of at least some size, or the Nth allocation from now.
// It lets tests drive host out-of-memory through every step of load and run
// (std::bad_alloc where the allocation is made) without exhausting the
// machine. Unarmed it is malloc. Defined in failing_operator_new.cpp, which
// replaces the replaceable global allocation functions for the whole program.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aotirt::test {

// Allocations of at least |bytes| throw std::bad_alloc while this is
// non-zero (0 turns it off).
void fail_allocations_from(size_t bytes);
// The |nth| operator new call from now, on any thread, throws (0 turns it
// off); calls are counted from here.
void fail_allocation_at(uint64_t nth);
// Counts operator new calls from now without failing any.
void count_allocations();
// Calls counted since count_allocations() or fail_allocation_at().
uint64_t allocations_counted();
// Stops counting and failing.
void stop_failing_allocations();

// Arms fail_allocations_from for a scope.
struct FailLargeAllocations {
  explicit FailLargeAllocations(size_t bytes) { fail_allocations_from(bytes); }
  ~FailLargeAllocations() { fail_allocations_from(0); }
};

}  // namespace aotirt::test
