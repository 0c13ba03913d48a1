#include "backends/cpu/cpu_allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "base/fault.h"
#include "base/status.h"

namespace aotirt {

namespace {
constexpr size_t kAlignment = 64;
// Larger requests cannot succeed on any real machine; refusing them up front
// also keeps the size-class arithmetic below from overflowing.
constexpr size_t kMaxAllocation = size_t{1} << 62;

// Blocks of 8 MiB and more (model inputs and outputs: an LLM's cache or
// logits) are aligned to 2 MiB and asked for transparent huge pages: one
// page fault per 2 MiB instead of 512. Each fault takes the process's memory
// map lock, which the CUDA driver holds for long stretches while it creates a
// context; `aotirt run` reading a large input beside a GPU load took several
// times as long when its faults were stuck behind the driver (bench/notes.md,
// row 22).
constexpr size_t kHugeThreshold = size_t{8} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

void* allocate_block(size_t cls) {
  if (cls < kHugeThreshold) return std::aligned_alloc(kAlignment, cls);
  void* p = std::aligned_alloc(kHugePage, cls);  // size classes this large are multiples of 2 MiB
  if (p) madvise(p, cls, MADV_HUGEPAGE);          // advice only: failing it changes nothing
  return p;
}
}

CpuAllocator::CpuAllocator(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}

CpuAllocator::~CpuAllocator() { trim(); }

size_t CpuAllocator::size_class(size_t nbytes) {
  if (nbytes <= 256) return 256;
  if (nbytes > kMaxAllocation) return nbytes;
  // Four classes per power of two keeps waste under 25%.
  size_t p = 256;
  while (p < nbytes) p <<= 1;
  size_t step = p / 8;  // p/2 .. p in quarters of p/2
  size_t cls = p / 2;
  while (cls < nbytes) cls += step;
  return cls;
}

Result<void*> CpuAllocator::allocate(size_t nbytes) {
  if (fault::check(fault::Point::kDeviceAlloc))
    return AOTIRT_STATUS(kResourceExhausted, "out of host memory allocating {} bytes (injected fault)", nbytes);
  if (nbytes > kMaxAllocation)
    return AOTIRT_STATUS(kResourceExhausted, "host allocation of {} bytes is larger than any machine's memory",
                         nbytes);
  size_t cls = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= cls;
      stats_.active_bytes += cls;
      stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.active_bytes);
      ++stats_.alloc_count;
      ++stats_.cache_hits;
      return p;
    }
    if (stats_.limit_bytes && stats_.active_bytes + stats_.cached_bytes + cls > stats_.limit_bytes) {
      // Give the cache back before refusing: the limit counts what we hold.
      for (auto& kv : free_)
        for (void* q : kv.second) std::free(q);
      free_.clear();
      stats_.cached_bytes = 0;
      if (stats_.active_bytes + cls > stats_.limit_bytes)
        return AOTIRT_STATUS(kResourceExhausted,
                             "host allocation of {} bytes exceeds the memory limit of {} bytes "
                             "({} bytes in use)",
                             nbytes, stats_.limit_bytes, stats_.active_bytes);
    }
  }
  void* p = allocate_block(cls);
  if (!p) return AOTIRT_STATUS(kResourceExhausted, "out of host memory allocating {} bytes", nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.active_bytes += cls;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.active_bytes);
  ++stats_.alloc_count;
  return p;
}

void CpuAllocator::deallocate(void* ptr, size_t nbytes) {
  if (!ptr) return;
  size_t cls = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.active_bytes -= cls;
    if (stats_.cached_bytes + cls <= max_cached_bytes_) {
      try {
        free_[cls].push_back(ptr);
        stats_.cached_bytes += cls;
        return;
      } catch (const std::bad_alloc&) {
        // No memory to list it in the cache: it goes straight back below
        // (called from destructors, a deallocation never fails).
      }
    }
  }
  std::free(ptr);
}

MemoryStats CpuAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CpuAllocator::set_limit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.limit_bytes = bytes;
}

void CpuAllocator::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& kv : free_)
    for (void* p : kv.second) std::free(p);
  free_.clear();
  stats_.cached_bytes = 0;
}

void CpuAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.active_bytes;
}

}  // namespace aotirt
