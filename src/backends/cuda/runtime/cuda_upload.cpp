#include "backends/cuda/runtime/cuda_upload.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/fault.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/file_util.h"
#include "base/log.h"
#include "base/status.h"

// The static runtime's own cudaMemcpy, renamed at build time (see the
// header and src/backends/cuda/CMakeLists.txt).
extern "C" cudaError_t aotirt_cudart_memcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);

namespace aotirt {
namespace {

std::atomic<size_t> g_uploads{0}, g_copies{0}, g_bytes{0}, g_pageable_bytes{0};

class Upload;

// Open uploads. A copy is routed under this lock, so an upload cannot be
// closed while one of its copies is being queued.
std::mutex g_open_mu;
std::vector<Upload*> g_open;
std::atomic<int> g_open_count{0};

class Upload final : public HostUpload {
 public:
  Upload(int device, const uint8_t* data, size_t size, std::string path, uint64_t file_offset, UniqueFd fd,
         const CudaUploadOptions& options)
      : device_(device),
        data_(data),
        size_(size),
        path_(std::move(path)),
        file_offset_(file_offset),
        fd_(std::move(fd)),
        options_(options),
        owner_(std::this_thread::get_id()),
        start_(std::chrono::steady_clock::now()) {}
  ~Upload() override { (void)close_and_wait(); }

  Status start() {
    const int n = std::max(1, options_.threads);
    for (int i = 0; i < n; ++i) {
      cudaStream_t s = nullptr;
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams_.push_back(s);
    }
    for (int i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(streams_[i]); });
    return Status();
  }

  Status finish() override { return close_and_wait(); }

  std::thread::id owner() const { return owner_; }
  bool owns(const void* src, size_t count) const {
    const auto p = reinterpret_cast<uintptr_t>(src), b = reinterpret_cast<uintptr_t>(data_);
    return p >= b && count <= size_ && p - b <= size_ - count;
  }
  bool targets_device(const void* dst) const {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, dst) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeDevice && a.device == device_;
  }

  // Queues one copy; cudaSuccess, or the error that ended the upload.
  cudaError_t enqueue(void* dst, const void* src, size_t count) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(dst), e = b + count;
    bool overlaps = false;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (failed_) return failure_code_;
      auto it = dst_ranges_.upper_bound(b);
      if (it != dst_ranges_.end() && it->first < e) overlaps = true;
      if (it != dst_ranges_.begin() && std::prev(it)->second > b) overlaps = true;
    }
    // A destination written twice: the first copy must land first.
    if (overlaps) {
      const cudaError_t d = drain();
      if (d != cudaSuccess) return d;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      if (failed_) return failure_code_;
      dst_ranges_[b] = std::max(dst_ranges_[b], e);
      jobs_.push_back(Job{static_cast<uint8_t*>(dst), static_cast<size_t>(static_cast<const uint8_t*>(src) - data_),
                          count, 0});
      ++copies_;
      bytes_ += count;
    }
    work_cv_.notify_all();
    g_copies.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(count, std::memory_order_relaxed);
    return cudaSuccess;
  }

  // Waits until every queued copy has landed.
  cudaError_t drain() {
    {
      std::unique_lock<std::mutex> lk(mu_);
      idle_cv_.wait(lk, [&] { return failed_ || (jobs_.empty() && busy_ == 0); });
      if (failed_) return failure_code_;
    }
    for (cudaStream_t s : streams_) {
      const cudaError_t e = cudaStreamSynchronize(s);
      if (e != cudaSuccess) {
        fail(cuda_error_status(e, "cudaStreamSynchronize", __FILE__, __LINE__), e);
        return e;
      }
    }
    std::lock_guard<std::mutex> g(mu_);
    dst_ranges_.clear();
    return failed_ ? failure_code_ : cudaSuccess;
  }

 private:
  struct Job {
    uint8_t* dst;
    size_t offset;  // from data_
    size_t size;
    size_t taken;   // bytes handed to workers
  };
  struct Piece {
    uint8_t* dst = nullptr;
    size_t offset = 0;
    size_t size = 0;
  };

  void fail(Status s, cudaError_t code) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!failed_) {
        failed_ = true;
        error_ = std::move(s);
        failure_code_ = code;
      }
      jobs_.clear();
    }
    idle_cv_.notify_all();
    work_cv_.notify_all();
  }

  // Reads |p| from the file into |buf| (pinned).
  Status read_piece(const Piece& p, uint8_t* buf) {
    if (int e = fault::check(fault::Point::kWeightsRead))
      return AOTIRT_STATUS(kIoError, "reading the weights of '{}' at byte {}: {} (injected fault)", path_,
                           file_offset_ + p.offset, std::strerror(e));
    size_t done = 0;
    while (done < p.size) {
      const uint64_t at = file_offset_ + p.offset + done;
      const ssize_t r = ::pread(fd_.get(), buf + done, p.size - done, static_cast<off_t>(at));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        return AOTIRT_STATUS(kIoError, "reading the weights of '{}' at byte {}: {}", path_, at,
                             std::strerror(errno));
      if (r == 0)
        return AOTIRT_STATUS(kDataLoss, "'{}' ends at byte {}, inside its weights ({} bytes from byte {})", path_,
                             at, size_, file_offset_);
      done += static_cast<size_t>(r);
    }
    return Status();
  }

  void work(cudaStream_t stream) {
    if (cudaSetDevice(device_) != cudaSuccess) {
      const cudaError_t e = cudaGetLastError();
      fail(cuda_error_status(e, "cudaSetDevice", __FILE__, __LINE__), e);
      return;
    }
    // Two pinned buffers: one fills while the other's copy runs. Without
    // them (pinned memory refused), the runtime's pageable copy does it.
    uint8_t* bufs[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};
    bool pinned = true;
    for (int i = 0; i < 2 && pinned; ++i) {
      void* p = nullptr;
      pinned = cudaHostAlloc(&p, options_.piece_bytes, cudaHostAllocDefault) == cudaSuccess &&
               cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming) == cudaSuccess;
      bufs[i] = static_cast<uint8_t*>(p);
    }
    if (!pinned) {
      cudaGetLastError();
      AOTIRT_LOG(kDebug, "weight upload: no pinned buffer of {} bytes; this thread copies pageable memory",
                 options_.piece_bytes);
    }
    bool used[2] = {false, false};
    int slot = 0;
    for (;;) {
      Piece p;
      {
        std::unique_lock<std::mutex> lk(mu_);
        work_cv_.wait(lk, [&] { return closed_ || failed_ || !jobs_.empty(); });
        if (failed_ || jobs_.empty()) break;
        Job& j = jobs_.front();
        const size_t limit = pinned ? options_.piece_bytes : j.size;
        p.size = std::min(limit, j.size - j.taken);
        p.dst = j.dst + j.taken;
        p.offset = j.offset + j.taken;
        j.taken += p.size;
        if (j.taken == j.size) jobs_.pop_front();
        ++busy_;
      }
      Status s;
      cudaError_t code = cudaErrorUnknown;
      if (pinned) {
        if (used[slot]) {
          code = cudaEventSynchronize(done[slot]);
          if (code != cudaSuccess) s = cuda_error_status(code, "cudaEventSynchronize", __FILE__, __LINE__);
        }
        if (s.ok()) s = read_piece(p, bufs[slot]);
        if (s.ok()) {
          code = cudaMemcpyAsync(p.dst, bufs[slot], p.size, cudaMemcpyHostToDevice, stream);
          if (code == cudaSuccess) code = cudaEventRecord(done[slot], stream);
          if (code != cudaSuccess) s = cuda_error_status(code, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
        used[slot] = true;
        slot ^= 1;
      } else {
        code = aotirt_cudart_memcpy(p.dst, data_ + p.offset, p.size, cudaMemcpyHostToDevice);
        if (code != cudaSuccess) s = cuda_error_status(code, "cudaMemcpy", __FILE__, __LINE__);
        g_pageable_bytes.fetch_add(p.size, std::memory_order_relaxed);
      }
      if (!s.ok()) fail(std::move(s), code == cudaSuccess ? cudaErrorUnknown : code);
      {
        std::lock_guard<std::mutex> g(mu_);
        --busy_;
      }
      idle_cv_.notify_all();
    }
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) fail(cuda_error_status(e, "cudaStreamSynchronize", __FILE__, __LINE__), e);
    for (int i = 0; i < 2; ++i) {
      if (done[i]) cudaEventDestroy(done[i]);
      if (bufs[i]) cudaFreeHost(bufs[i]);
    }
  }

  Status close_and_wait() {
    if (closed_for_good_) return error_copy();
    closed_for_good_ = true;
    {
      std::lock_guard<std::mutex> g(g_open_mu);
      auto it = std::find(g_open.begin(), g_open.end(), this);
      if (it != g_open.end()) {
        g_open.erase(it);
        g_open_count.fetch_sub(1, std::memory_order_release);
      }
    }
    if (!workers_.empty()) (void)drain();
    {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
    streams_.clear();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    AOTIRT_LOG(kDebug, "weight upload from '{}': {} copies, {:.1f} MB on {} threads in {:.1f} ms ({:.1f} GB/s)",
               path_, copies_, bytes_ / 1e6, options_.threads, ms, ms > 0 ? bytes_ / ms / 1e6 : 0.0);
    return error_copy();
  }

  Status error_copy() {
    std::lock_guard<std::mutex> g(mu_);
    return error_;
  }

  const int device_;
  const uint8_t* const data_;
  const size_t size_;
  const std::string path_;
  const uint64_t file_offset_;
  UniqueFd fd_;
  const CudaUploadOptions options_;
  const std::thread::id owner_;
  const std::chrono::steady_clock::time_point start_;

  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Job> jobs_;                       // guarded by mu_
  size_t busy_ = 0;                            // pieces workers hold; guarded by mu_
  bool closed_ = false;                        // guarded by mu_
  bool failed_ = false;                        // guarded by mu_
  Status error_;                               // guarded by mu_
  cudaError_t failure_code_ = cudaSuccess;     // guarded by mu_
  std::map<uintptr_t, uintptr_t> dst_ranges_;  // queued since the last drain; guarded by mu_
  size_t copies_ = 0, bytes_ = 0;              // guarded by mu_
  bool closed_for_good_ = false;               // owner thread only
  std::vector<cudaStream_t> streams_;
  std::vector<std::thread> workers_;
};

// Routes a cudaMemcpy made while uploads are open. False: not for any upload;
// the runtime does it.
bool route_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaError_t* result) {
  std::lock_guard<std::mutex> g(g_open_mu);
  const std::thread::id me = std::this_thread::get_id();
  for (Upload* u : g_open) {
    if (u->owner() != me) continue;
    if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDefault) && count > 0 && u->owns(src, count) &&
        u->targets_device(dst)) {
      *result = u->enqueue(dst, src, count);
      return true;
    }
    // Another copy on the same thread: the queued ones land first.
    const cudaError_t e = u->drain();
    if (e != cudaSuccess) {
      *result = e;
      return true;
    }
  }
  return false;
}

}  // namespace

CudaUploadOptions cuda_upload_options() {
  CudaUploadOptions o;
  if (!cuda_options().enabled(CudaFeature::kUpload)) o.threads = 0;
  if (!cuda_options().enabled(CudaFeature::kUploadThreshold)) o.min_bytes = 0;
  return o;
}

Result<std::unique_ptr<HostUpload>> cuda_begin_upload(int index, const uint8_t* data, size_t size,
                                                      const std::string& path, uint64_t file_offset,
                                                      const CudaUploadOptions& options) {
  if (options.threads <= 0 || !data || size < options.min_bytes || size == 0) return std::unique_ptr<HostUpload>();
  if (options.piece_bytes == 0)
    return AOTIRT_STATUS(kInvalidArgument, "weight upload pieces of 0 bytes");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return AOTIRT_STATUS(kIoError, "cannot open '{}' to read its weights: {}", path, std::strerror(errno));
  CudaDeviceScope scope(index);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  std::unique_ptr<Upload> u(new Upload(index, data, size, path, file_offset, std::move(fd), options));
  AOTIRT_RETURN_IF_ERROR(u->start());
  {
    std::lock_guard<std::mutex> g(g_open_mu);
    g_open.push_back(u.get());
    g_open_count.fetch_add(1, std::memory_order_release);
  }
  g_uploads.fetch_add(1, std::memory_order_relaxed);
  return std::unique_ptr<HostUpload>(std::move(u));
}

CudaUploadStats cuda_upload_stats() {
  CudaUploadStats s;
  s.uploads = g_uploads.load();
  s.copies = g_copies.load();
  s.bytes = g_bytes.load();
  s.pageable_bytes = g_pageable_bytes.load();
  return s;
}

}  // namespace aotirt

// What model libraries and aotirt call. Exported (the "cuda*" pattern of
// src/aotirt.map). Queueing a copy allocates; running out of memory there is
// reported as the runtime would, never thrown into the caller.
extern "C" __attribute__((visibility("default"))) cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                                                          cudaMemcpyKind kind) {
  if (aotirt::g_open_count.load(std::memory_order_acquire) > 0) {
    cudaError_t r = cudaSuccess;
    try {
      if (aotirt::route_copy(dst, src, count, kind, &r)) return r;
    } catch (const std::bad_alloc&) {
      return cudaErrorMemoryAllocation;
    }
  }
  return aotirt_cudart_memcpy(dst, src, count, kind);
}
