#include "backends/cuda/runtime/cuda_readback.h"

#include <cstring>
#include <utility>

#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/status.h"

namespace aotirt {
namespace {

class CudaReadback final : public DeviceReadback {
 public:
  CudaReadback(CudaReadbackPool* pool, int device, CudaReadbackPool::Slot slot, size_t bytes)
      : pool_(pool), device_(device), slot_(slot), bytes_(bytes) {}
  ~CudaReadback() override {
    // The copy may still be writing the slot: it goes back once finished.
    if (!finished_) {
      CudaDeviceScope scope(device_);
      if (cudaEventSynchronize(slot_.event) != cudaSuccess) cudaGetLastError();
    }
    pool_->give(slot_);
  }
  CudaReadback(const CudaReadback&) = delete;
  CudaReadback& operator=(const CudaReadback&) = delete;

  Status wait(void* dst) override {
    if (!finished_) {
      CudaDeviceScope scope(device_);
      AOTIRT_RETURN_IF_ERROR(scope.status());
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(slot_.event));
      finished_ = true;
    }
    if (bytes_ > 0) std::memcpy(dst, slot_.host, bytes_);
    return Status();
  }

 private:
  CudaReadbackPool* pool_;
  int device_;
  CudaReadbackPool::Slot slot_;
  size_t bytes_;
  bool finished_ = false;
};

}  // namespace

CudaReadbackPool::~CudaReadbackPool() {
  for (const Slot& s : free_) destroy(device_, s);
}

void CudaReadbackPool::destroy(int device, Slot slot) {
  CudaDeviceScope scope(device);
  if (slot.event && cudaEventDestroy(slot.event) != cudaSuccess) cudaGetLastError();
  if (slot.host && cudaFreeHost(slot.host) != cudaSuccess) cudaGetLastError();
}

size_t CudaReadbackPool::free_slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

void CudaReadbackPool::give(Slot slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < kMaxFree) {
      free_.push_back(slot);
      return;
    }
  }
  destroy(device_, slot);
}

Result<CudaReadbackPool::Slot> CudaReadbackPool::take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      Slot s = free_.back();
      free_.pop_back();
      return s;
    }
  }
  Slot s;
  cudaError_t e = cudaHostAlloc(&s.host, kSlotBytes, cudaHostAllocDefault);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s.event, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    cudaGetLastError();
    destroy(device_, s);
    return AOTIRT_STATUS(kResourceExhausted, "cannot make a pinned read-back buffer on cuda:{}: {}", device_,
                         cudaGetErrorString(e));
  }
  return s;
}

Result<std::unique_ptr<DeviceReadback>> CudaReadbackPool::read(cudaStream_t stream, const void* src, size_t bytes) {
  AOTIRT_ENSURE(bytes <= kSlotBytes, kInvalidArgument, "a read back of {} bytes (at most {})", bytes, kSlotBytes);
  CudaDeviceScope scope(device_);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  AOTIRT_ASSIGN_OR_RETURN(Slot slot, take());
  cudaError_t e = bytes > 0 ? cudaMemcpyAsync(slot.host, src, bytes, cudaMemcpyDeviceToHost, stream) : cudaSuccess;
  if (e == cudaSuccess) e = cudaEventRecord(slot.event, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    // Nothing of this read is in flight unless the copy went out; wait for
    // it before the slot is reused.
    if (cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
    give(slot);
    return AOTIRT_STATUS(kInternal, "reading {} bytes back from cuda:{}: {}", bytes, device_, cudaGetErrorString(e));
  }
  return std::unique_ptr<DeviceReadback>(new CudaReadback(this, device_, slot, bytes));
}

}  // namespace aotirt
