#include "backends/cuda/runtime/cuda_allocator.h"

#include <new>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <string>

#include "backends/cuda/runtime/cuda_status.h"
#include "base/fault.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/log.h"
#include "base/status.h"

namespace aotirt {

// ---- CudaGraphPool ----

CudaGraphPool::~CudaGraphPool() {
  CudaDeviceScope scope(device_);
  for (void* p : owned_) cudaFree(p);
  cudaGetLastError();
}

Result<void*> CudaGraphPool::take(size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(capacity);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  // cudaMalloc queues nothing on a stream, so a relaxed-mode recording
  // allows it; the memory then belongs to the graph for its whole life.
  CudaDeviceScope scope(device_);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, capacity);
  if (err != cudaSuccess) {
    cudaGetLastError();
    Status s = cuda_error_status(err, "cudaMalloc", __FILE__, __LINE__);
    return s.annotate(fmt::format("allocating {} bytes for a CUDA graph on cuda:{}", capacity, device_));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  owned_.push_back(p);
  reserved_ += capacity;
  return p;
}

void CudaGraphPool::give_back(void* ptr, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_[capacity].push_back(ptr);
}

void CudaGraphPool::adopt(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  owned_.push_back(ptr);
}

size_t CudaGraphPool::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_;
}

// ---- CudaAllocator ----

size_t CudaAllocator::size_class(size_t nbytes) {
  // Fine classes for small tensors, coarser ones for big buffers, so that a
  // model's repeated requests land on the same cached blocks.
  constexpr size_t kSmall = 512, kLarge = size_t{128} << 10, kLargeFrom = size_t{1} << 20;
  if (nbytes == 0) return kSmall;
  const size_t unit = nbytes < kLargeFrom ? kSmall : kLarge;
  return (nbytes + unit - 1) / unit * unit;
}

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
  AOTIRT_ASSIGN_OR_RETURN(a->cached_stream_, cuda_default_stream(device));
  return a;
}

CudaAllocator::~CudaAllocator() {
  flush_cache();
  if (pool_) cudaMemPoolDestroy(pool_);
}

Status CudaAllocator::begin_capture(std::shared_ptr<CudaGraphPool> pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capture_pool_)
    return AOTIRT_STATUS(kUnavailable, "a CUDA graph is already being recorded on cuda:{}", device_);
  capture_pool_ = std::move(pool);
  capture_thread_ = std::this_thread::get_id();
  capture_active_.store(true, std::memory_order_release);
  return Status();
}

void CudaAllocator::end_capture() {
  std::shared_ptr<CudaGraphPool> done;
  std::lock_guard<std::mutex> lock(mutex_);
  done.swap(capture_pool_);
  capture_thread_ = std::thread::id();
  capture_active_.store(false, std::memory_order_release);
}

bool CudaAllocator::capturing_on_this_thread() const {
  if (!capture_active_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return capture_pool_ && capture_thread_ == std::this_thread::get_id();
}

Result<void*> CudaAllocator::zeroed_for_capture(size_t nbytes) {
  std::shared_ptr<CudaGraphPool> pool;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (capture_pool_ && capture_thread_ == std::this_thread::get_id()) pool = capture_pool_;
  }
  if (!pool) return AOTIRT_STATUS(kInternal, "no CUDA graph is being recorded on this thread");
  CudaDeviceScope scope(device_);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  void* p = nullptr;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(nbytes, 1)));
  pool->adopt(p);  // freed with the graph's pool
  // A non-blocking stream of its own: no part of the recording, and no
  // implicit wait on the legacy stream (which would end the recording).
  cudaStream_t side = nullptr;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaError_t err = cudaMemsetAsync(p, 0, nbytes, side);
  if (err == cudaSuccess) err = cudaStreamSynchronize(side);
  cudaStreamDestroy(side);
  AOTIRT_CUDA_RETURN_IF_ERROR(err);
  return p;
}

Result<void*> CudaAllocator::allocate(size_t nbytes) {
  if (fault::check(fault::Point::kDeviceAlloc))
    return AOTIRT_STATUS(kResourceExhausted, "out of memory on cuda:{} allocating {} bytes (injected fault)",
                         device_, nbytes);
  const size_t capacity = size_class(nbytes);
  std::shared_ptr<CudaGraphPool> graph_pool;
  cudaStream_t stream = nullptr;
  bool flush = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.limit_bytes && stats_.active_bytes + nbytes > stats_.limit_bytes)
      return AOTIRT_STATUS(kResourceExhausted,
                           "allocating {} bytes on cuda:{} would pass the memory limit of {} bytes ({} in use)",
                           nbytes, device_, stats_.limit_bytes, stats_.active_bytes);
    // Reserve now so concurrent callers cannot both pass the limit check.
    stats_.active_bytes += nbytes;
    if (capture_pool_ && capture_thread_ == std::this_thread::get_id()) graph_pool = capture_pool_;
    flush = stats_.limit_bytes && stats_.active_bytes + cached_bytes_ + capacity > stats_.limit_bytes;
  }
  auto unreserve = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.active_bytes -= nbytes;
  };
  void* ptr = nullptr;
  if (graph_pool) {
    Result<void*> p = graph_pool->take(capacity);
    if (!p.ok()) {
      unreserve();
      return p.status();
    }
    ptr = p.value();
  } else {
    Result<cudaStream_t> s = cuda_current_stream(device_);
    if (!s.ok()) {
      unreserve();
      return s.status();
    }
    stream = s.value();
    if (flush) flush_cache();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(CacheKey{stream, capacity});
      if (it != cache_.end() && !it->second.empty()) {
        ptr = it->second.back();
        try {
          blocks_.emplace(ptr, Block{nbytes, capacity, stream, nullptr});
        } catch (const std::bad_alloc&) {
          stats_.active_bytes -= nbytes;  // the block stays in the cache
          return AOTIRT_STATUS(kResourceExhausted, "out of host memory tracking {} bytes on cuda:{}", nbytes,
                               device_);
        }
        it->second.pop_back();
        cached_bytes_ -= capacity;
        stats_.alloc_count++;
        stats_.cache_hits++;
        if (stats_.active_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.active_bytes;
        return ptr;
      }
    }
    const bool pooled = pooled_on(stream);
    cudaError_t err = cudaSuccess;
    for (int attempt = 0; attempt < 2; ++attempt) {
      {
        CudaDeviceScope scope(device_);
        if (!scope.status().ok())
          err = cudaErrorInvalidDevice;
        else
          err = pooled ? cudaMallocFromPoolAsync(&ptr, capacity, pool_, stream) : cudaMalloc(&ptr, capacity);
      }
      if (err != cudaErrorMemoryAllocation || attempt == 1) break;
      // Out of memory: give cached memory back, wait for pending frees and
      // try once more.
      cudaGetLastError();
      trim();
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      unreserve();
      Status st = cuda_error_status(err, pooled ? "cudaMallocFromPoolAsync" : "cudaMalloc", __FILE__, __LINE__);
      return st.annotate(fmt::format("allocating {} bytes on cuda:{}", nbytes, device_));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      blocks_.emplace(ptr, Block{nbytes, capacity, stream, graph_pool});
      stats_.alloc_count++;
      if (stats_.active_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.active_bytes;
      return ptr;
    } catch (const std::bad_alloc&) {
      stats_.active_bytes -= nbytes;
    }
  }
  // No host memory to track the block: it goes back where it came from.
  if (graph_pool)
    graph_pool->give_back(ptr, capacity);
  else
    free_to_device(ptr, capacity, stream);
  return AOTIRT_STATUS(kResourceExhausted, "out of host memory tracking {} bytes on cuda:{}", nbytes, device_);
}

bool CudaAllocator::pooled_on(cudaStream_t stream) const {
  // The default stream's blocks live in the host cache, so the pool's
  // stream-ordered reuse gains them nothing, while its first allocation
  // (its first mapping) costs many times cudaMalloc's first, and host
  // memory: a model's first run paid that on its first input.
  return pool_ && stream != cached_stream_;
}

namespace {
thread_local int t_synchronous_frees = 0;
}  // namespace

CudaAllocator::SynchronousFrees::SynchronousFrees() { ++t_synchronous_frees; }
CudaAllocator::SynchronousFrees::~SynchronousFrees() { --t_synchronous_frees; }

void CudaAllocator::free_to_device(void* ptr, size_t capacity, cudaStream_t stream) {
  cudaError_t err;
  // cudaFree frees pool memory too, after waiting for the device; the
  // block's stream is not touched, so it may be gone.
  if (pooled_on(stream) && t_synchronous_frees == 0) {
    err = cudaFreeAsync(ptr, stream);
  } else {
    CudaDeviceScope scope(device_);
    err = cudaFree(ptr);
  }
  if (err != cudaSuccess) {
    // At process exit the runtime may be gone already; nothing to report to.
    cudaGetLastError();
    if (err != cudaErrorCudartUnloading)
      AOTIRT_LOG(kWarning, "freeing {} bytes on cuda:{} failed: {}", capacity, device_, cudaGetErrorString(err));
  }
}

void CudaAllocator::flush_cache() {
  std::map<CacheKey, std::vector<void*>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cache.swap(cache_);
    cached_bytes_ = 0;
  }
  for (auto& kv : cache)
    for (void* p : kv.second) free_to_device(p, kv.first.second, kv.first.first);
}

void CudaAllocator::deallocate(void* ptr, size_t nbytes) {
  // Called from destructors: nothing may escape, out of host memory included.
  try {
    Status s = release(ptr);
    if (!s.ok()) AOTIRT_LOG(kWarning, "{}", s.to_string());
  } catch (...) {
  }
}

Status CudaAllocator::release(void* ptr) {
  Block b;
  std::shared_ptr<CudaGraphPool> recording;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end())
      return AOTIRT_STATUS(kNotFound, "pointer {} was not allocated by aotirt on cuda:{}", ptr, device_);
    b = std::move(it->second);
    blocks_.erase(it);
    stats_.active_bytes -= b.nbytes;
    if (!b.graph_pool) {
      if (capture_pool_ && capture_thread_ == std::this_thread::get_id()) {
        // Recorded work may have used it: it must keep its contents for
        // every replay, so it leaves this allocator with the graph.
        recording = capture_pool_;
      } else if (b.stream == cached_stream_) {
        // Kept sorted by address, highest first, and handed out lowest
        // first: a run then gets the same addresses as the run before it
        // (or the one before that, while the caller holds the previous
        // outputs) instead of an order that rotates from run to run, which
        // lets cuBLASLt and cuDNN calls be replayed (cuda_op_replay.h).
        try {
          std::vector<void*>& list = cache_[CacheKey{b.stream, b.capacity}];
          list.insert(std::upper_bound(list.begin(), list.end(), ptr, std::greater<void*>()), ptr);
          cached_bytes_ += b.capacity;
          return Status();
        } catch (const std::bad_alloc&) {
          // No host memory to list it in the cache: it goes back to the
          // device below instead (a deallocation never fails).
        }
      }
    }
  }
  if (b.graph_pool) {
    b.graph_pool->give_back(ptr, b.capacity);
  } else if (recording) {
    recording->adopt(ptr);
  } else {
    free_to_device(ptr, b.capacity, b.stream);
  }
  // Dropping |b| may destroy a graph's pool (outside the lock: it frees).
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
    s.cached_bytes = cached_bytes_;
  }
  if (pool_) {
    uint64_t reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess)
      s.cached_bytes += reserved > used ? static_cast<size_t>(reserved - used) : 0;
    cudaGetLastError();
  }
  return s;
}

size_t CudaAllocator::pool_reserved_bytes() const {
  uint64_t reserved = 0;
  if (pool_ && cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess) {
    cudaGetLastError();
    reserved = 0;
  }
  return static_cast<size_t>(reserved);
}

void CudaAllocator::set_limit(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.limit_bytes = bytes;
  }
  if (bytes) flush_cache();
  if (pool_) {
    uint64_t threshold = bytes ? bytes : UINT64_MAX;
    cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (bytes) cudaMemPoolTrimTo(pool_, bytes);
    cudaGetLastError();
  }
}

void CudaAllocator::trim() {
  flush_cache();
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
