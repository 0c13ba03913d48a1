// Device::read_back on CUDA: a read of a few bytes (a generated token) into
// pinned host memory, queued on the stream with an event after it, so that
// the host can queue the next step before it collects the bytes. Pinned
// buffers and events cost more to make than a read takes, so the device
// keeps finished ones in a small pool, bounded and freed with it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "aotirt/status.h"
#include "device/device.h"

namespace aotirt {

class CudaReadbackPool {
 public:
  // Bytes of one read; larger ones take the device's plain copy.
  static constexpr size_t kSlotBytes = 256;
  // Finished slots kept for reuse; more are freed when they finish.
  static constexpr size_t kMaxFree = 8;

  explicit CudaReadbackPool(int device) : device_(device) {}
  ~CudaReadbackPool();
  CudaReadbackPool(const CudaReadbackPool&) = delete;
  CudaReadbackPool& operator=(const CudaReadbackPool&) = delete;

  // Queues a copy of |bytes| (at most kSlotBytes) from device memory |src|
  // on |stream|, and an event after it.
  Result<std::unique_ptr<DeviceReadback>> read(cudaStream_t stream, const void* src, size_t bytes);
  // Slots kept for reuse (for tests).
  size_t free_slots() const;

  struct Slot {
    void* host = nullptr;
    cudaEvent_t event = nullptr;
  };
  // Takes back a slot whose read has finished.
  void give(Slot slot);

 private:
  Result<Slot> take();
  static void destroy(int device, Slot slot);

  int device_;
  mutable std::mutex mutex_;
  std::vector<Slot> free_;
};

}  // namespace aotirt
