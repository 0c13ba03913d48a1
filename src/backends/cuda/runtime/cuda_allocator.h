// Device memory for the CUDA backend: blocks of aotirt's default stream for
// the device from cudaMalloc behind a host-side cache, blocks of other streams
// from a memory pool that aotirt owns (cudaMallocFromPoolAsync /
// cudaFreeAsync, stream-ordered).
//
// Each block is allocated on the calling thread's current stream and freed on
// that same stream, whichever thread frees it. A block freed on the default
// stream goes to a cache on the host and is handed out again to the next
// request of the same size class on that stream, without any CUDA call: work
// queued on one stream runs in order, so the next user cannot overtake the
// previous one. (Blocks of other streams, which callers may destroy, go
// straight back to the pool.) trim(), the memory limit and out-of-memory
// retries give cached blocks back (cudaFree, which waits for the device).
// The default stream's blocks come from cudaMalloc (the host cache keeps
// them), other streams' from the pool. Devices without memory-pool support
// use cudaMalloc/cudaFree.
//
// While a graph is recorded (begin_capture), allocations made by the
// recording thread come from a CudaGraphPool that belongs to that graph, so
// replays find their memory at the same addresses and nothing outside the
// graph reuses it.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device/device.h"

namespace aotirt {

// Memory private to one recorded graph. Blocks freed while recording are
// reused by later allocations of the same recording (its work runs in
// stream order); after the recording they stay reserved until the graph and
// every tensor allocated from the pool are gone.
class CudaGraphPool {
 public:
  explicit CudaGraphPool(int device) : device_(device) {}
  ~CudaGraphPool();  // cudaFree of every block (waits for the device)
  CudaGraphPool(const CudaGraphPool&) = delete;
  CudaGraphPool& operator=(const CudaGraphPool&) = delete;

  // A block of exactly |capacity| bytes: a freed one or a new cudaMalloc.
  Result<void*> take(size_t capacity);
  void give_back(void* ptr, size_t capacity);
  // Keeps a block that is not the pool's own until the pool dies: it was
  // freed while recording, so recorded work may still use it on replay.
  void adopt(void* ptr);
  size_t reserved_bytes() const;

 private:
  int device_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  std::vector<void*> owned_;
  size_t reserved_ = 0;
};

class CudaAllocator final : public Allocator {
 public:
  static Result<std::unique_ptr<CudaAllocator>> create(int device);
  ~CudaAllocator() override;

  // On the current stream. Fails with RESOURCE_EXHAUSTED past the limit or
  // when the device is out of memory; the allocator stays usable.
  Result<void*> allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  MemoryStats stats() const override;
  // Caps the bytes handed out; cached memory above this mark goes back to
  // the device.
  void set_limit(size_t bytes) override;
  // Waits for the device, then gives every cached byte back.
  void trim() override;
  void reset_peak() override;

  // Frees |ptr| from allocate() without its size (raw_delete). NOT_FOUND when
  // this allocator did not hand it out.
  Status release(void* ptr);
  // While one is alive on a thread, the blocks that thread gives back to the
  // device are freed with cudaFree (which waits for the device) instead of
  // cudaFreeAsync on the stream they were used on, which may have been
  // destroyed since: for dropping the ops' caches once the device is idle.
  class SynchronousFrees {
   public:
    SynchronousFrees();
    ~SynchronousFrees();
    SynchronousFrees(const SynchronousFrees&) = delete;
    SynchronousFrees& operator=(const SynchronousFrees&) = delete;
  };
  bool owns(void* ptr) const;
  int device() const { return device_; }
  bool uses_pool() const { return pool_ != nullptr; }
  // The memory the pool holds from the device, in use or not (0 without one).
  size_t pool_reserved_bytes() const;

  // Routes the calling thread's allocations to |pool| until end_capture().
  // One recording at a time per device: UNAVAILABLE otherwise.
  Status begin_capture(std::shared_ptr<CudaGraphPool> pool);
  void end_capture();
  // Whether the calling thread is recording a graph on this device.
  bool capturing_on_this_thread() const;
  // While the calling thread records a graph: |nbytes| of zeroed memory that
  // belongs to the graph (freed with it), zeroed before this returns on a
  // stream outside the recording, so the graph holds no memset node for it.
  // For state that the recorded kernels return to zero themselves (split-k
  // semaphores). INTERNAL when this thread records nothing.
  Result<void*> zeroed_for_capture(size_t nbytes);

  // The size class a request of |nbytes| is served from.
  static size_t size_class(size_t nbytes);

 private:
  struct Block {
    size_t nbytes = 0;    // what the caller asked for (for the stats)
    size_t capacity = 0;  // the size class actually reserved
    cudaStream_t stream = nullptr;
    std::shared_ptr<CudaGraphPool> graph_pool;  // set for recording-time blocks
  };
  using CacheKey = std::pair<cudaStream_t, size_t>;

  explicit CudaAllocator(int device) : device_(device) {}
  // Whether blocks of |stream| come from the pool (else from cudaMalloc).
  bool pooled_on(cudaStream_t stream) const;
  // Returns a block's memory to the device (cudaFreeAsync / cudaFree).
  void free_to_device(void* ptr, size_t capacity, cudaStream_t stream);
  // Gives every host-cached block back to the device pool. Call unlocked.
  void flush_cache();

  int device_;
  cudaMemPool_t pool_ = nullptr;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> blocks_;
  cudaStream_t cached_stream_ = nullptr;  // the device's default stream
  std::map<CacheKey, std::vector<void*>> cache_;
  size_t cached_bytes_ = 0;  // in cache_
  std::shared_ptr<CudaGraphPool> capture_pool_;
  std::thread::id capture_thread_;
  // Mirrors capture_pool_ != nullptr, so the ops' check on every call takes
  // no lock when nothing is being recorded.
  std::atomic<bool> capture_active_{false};
  MemoryStats stats_;
};

}  // namespace aotirt
