// Device memory for the CUDA backend: a stream-ordered allocator over a
// memory pool that aotirt owns (cudaMallocFromPoolAsync / cudaFreeAsync).
//
// Each block is allocated on the calling thread's current stream and freed on
// that same stream, whichever thread frees it, so the pool can hand it out
// again in stream order without a device synchronization. The pool keeps
// freed memory cached until trim() or until it passes the configured limit.
// Devices without memory-pool support fall back to cudaMalloc/cudaFree.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "device/device.h"

namespace aotirt {

class CudaAllocator final : public Allocator {
 public:
  static Result<std::unique_ptr<CudaAllocator>> create(int device);
  ~CudaAllocator() override;

  // On the current stream. Fails with RESOURCE_EXHAUSTED past the limit or
  // when the device is out of memory; the allocator stays usable.
  Result<void*> allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  MemoryStats stats() const override;
  // Caps the bytes handed out; the pool also returns cached memory to the
  // device above this mark at each synchronization.
  void set_limit(size_t bytes) override;
  // Waits for the device, then gives every cached byte back.
  void trim() override;
  void reset_peak() override;

  // Frees |ptr| from allocate() without its size (raw_delete). NOT_FOUND when
  // this allocator did not hand it out.
  Status release(void* ptr);
  bool owns(void* ptr) const;
  int device() const { return device_; }
  bool uses_pool() const { return pool_ != nullptr; }

 private:
  struct Block {
    size_t nbytes;
    cudaStream_t stream;
  };
  explicit CudaAllocator(int device) : device_(device) {}
  void free_block(void* ptr, const Block& b);

  int device_;
  cudaMemPool_t pool_ = nullptr;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> blocks_;
  MemoryStats stats_;
};

}  // namespace aotirt
