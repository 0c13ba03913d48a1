#include "backends/cuda/cuda_allocator.h"

#include <cstdint>

#include "backends/cuda/cuda_status.h"
#include "backends/cuda/cuda_stream.h"
#include "base/log.h"
#include "base/status.h"

namespace aotirt {

Result<std::unique_ptr<CudaAllocator>> CudaAllocator::create(int device) {
  std::unique_ptr<CudaAllocator> a(new CudaAllocator(device));
  int pools = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device));
  if (pools) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemPoolCreate(&a->pool_, &props));
    // Keep freed memory cached across synchronizations (the default gives it
    // back at every sync, which makes steady-state inference reallocate).
    uint64_t threshold = UINT64_MAX;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemPoolSetAttribute(a->pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  return a;
}

CudaAllocator::~CudaAllocator() {
  if (pool_) cudaMemPoolDestroy(pool_);
}

Result<void*> CudaAllocator::allocate(size_t nbytes) {
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(device_));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.limit_bytes && stats_.active_bytes + nbytes > stats_.limit_bytes)
      return AOTIRT_STATUS(kResourceExhausted,
                           "allocating {} bytes on cuda:{} would pass the memory limit of {} bytes ({} in use)",
                           nbytes, device_, stats_.limit_bytes, stats_.active_bytes);
    // Reserve now so concurrent callers cannot both pass the limit check.
    stats_.active_bytes += nbytes;
  }
  // A zero-byte request still gets a distinct pointer.
  const size_t request = nbytes ? nbytes : 1;
  void* ptr = nullptr;
  cudaError_t err = cudaSuccess;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (pool_) {
      CudaDeviceScope scope(device_);
      err = scope.status().ok() ? cudaMallocFromPoolAsync(&ptr, request, pool_, stream) : cudaErrorInvalidDevice;
    } else {
      CudaDeviceScope scope(device_);
      err = scope.status().ok() ? cudaMalloc(&ptr, request) : cudaErrorInvalidDevice;
    }
    if (err != cudaErrorMemoryAllocation || attempt == 1) break;
    // Out of memory: wait for pending frees, give cached memory back and try once more.
    cudaGetLastError();
    {
      CudaDeviceScope scope(device_);
      cudaDeviceSynchronize();
      if (pool_) cudaMemPoolTrimTo(pool_, 0);
    }
    cudaGetLastError();
  }
  if (err != cudaSuccess) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.active_bytes -= nbytes;
    }
    Status s = cuda_error_status(err, pool_ ? "cudaMallocFromPoolAsync" : "cudaMalloc", __FILE__, __LINE__);
    return s.annotate(fmt::format("allocating {} bytes on cuda:{}", nbytes, device_));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_.emplace(ptr, Block{nbytes, stream});
  stats_.alloc_count++;
  if (stats_.active_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.active_bytes;
  return ptr;
}

void CudaAllocator::free_block(void* ptr, const Block& b) {
  cudaError_t err;
  if (pool_) {
    err = cudaFreeAsync(ptr, b.stream);
  } else {
    CudaDeviceScope scope(device_);
    err = cudaFree(ptr);
  }
  if (err != cudaSuccess) {
    // At process exit the runtime may be gone already; nothing to report to.
    cudaGetLastError();
    if (err != cudaErrorCudartUnloading)
      AOTIRT_LOG(kWarning, "freeing {} bytes on cuda:{} failed: {}", b.nbytes, device_, cudaGetErrorString(err));
  }
}

void CudaAllocator::deallocate(void* ptr, size_t nbytes) {
  Status s = release(ptr);
  if (!s.ok()) AOTIRT_LOG(kWarning, "{}", s.to_string());
}

Status CudaAllocator::release(void* ptr) {
  Block b;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end())
      return AOTIRT_STATUS(kNotFound, "pointer {} was not allocated by aotirt on cuda:{}", ptr, device_);
    b = it->second;
    blocks_.erase(it);
    stats_.active_bytes -= b.nbytes;
  }
  free_block(ptr, b);
  return Status();
}

bool CudaAllocator::owns(void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.count(ptr) != 0;
}

MemoryStats CudaAllocator::stats() const {
  MemoryStats s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = stats_;
  }
  if (pool_) {
    uint64_t reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess)
      s.cached_bytes = reserved > used ? static_cast<size_t>(reserved - used) : 0;
    cudaGetLastError();
  }
  return s;
}

void CudaAllocator::set_limit(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.limit_bytes = bytes;
  }
  if (pool_) {
    uint64_t threshold = bytes ? bytes : UINT64_MAX;
    cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (bytes) cudaMemPoolTrimTo(pool_, bytes);
    cudaGetLastError();
  }
}

void CudaAllocator::trim() {
  if (!pool_) return;
  CudaDeviceScope scope(device_);
  if (!scope.status().ok()) return;
  // Memory freed on a stream returns to the pool only once the stream gets there.
  cudaDeviceSynchronize();
  cudaMemPoolTrimTo(pool_, 0);
  cudaGetLastError();
}

void CudaAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.active_bytes;
}

}  // namespace aotirt
