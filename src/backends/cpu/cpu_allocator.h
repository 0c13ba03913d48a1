// Host memory allocator with a cache keyed by size class.
//
// AOTI wrappers allocate every intermediate through aoti_torch_empty_strided
// on each Run, so reusing blocks of the same class saves most of the malloc
// and page-fault cost of steady-state inference.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "device/device.h"

namespace aotirt {

class CpuAllocator final : public Allocator {
 public:
  // |max_cached_bytes| bounds the cache; blocks beyond it go back to the system.
  explicit CpuAllocator(size_t max_cached_bytes = size_t{1} << 30);
  ~CpuAllocator() override;

  Result<void*> allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  MemoryStats stats() const override;
  void set_limit(size_t bytes) override;
  void trim() override;
  void reset_peak() override;

  // The block size that a request of |nbytes| is rounded up to.
  static size_t size_class(size_t nbytes);

 private:
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> cached blocks
  MemoryStats stats_;
  size_t max_cached_bytes_;
};

}  // namespace aotirt
