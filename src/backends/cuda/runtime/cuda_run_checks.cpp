#include "backends/cuda/runtime/cuda_run_checks.h"

#include <mutex>
#include <utility>
#include <vector>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/status.h"

namespace aotirt {
namespace {

constexpr size_t kBlockBytes = sizeof(int64_t) * kCudaCheckSlotWords * kCudaCheckSlots;
// Idle blocks kept; more runs than this at once make and free their own.
constexpr size_t kMaxIdleBlocks = 16;

thread_local CudaRunScope* t_run = nullptr;

class CheckBlockPool final : public CudaOpCache {
 public:
  const char* name() const override { return "run check words"; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_.size();
  }
  void clear() override {
    std::vector<std::unique_ptr<CudaCheckBlock>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(idle_);
  }
  std::unique_ptr<CudaCheckBlock> take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.empty()) return nullptr;
    std::unique_ptr<CudaCheckBlock> b = std::move(idle_.back());
    idle_.pop_back();
    return b;
  }
  void give(std::unique_ptr<CudaCheckBlock> b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdleBlocks) idle_.push_back(std::move(b));
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<CudaCheckBlock>> idle_;
};

CheckBlockPool& pool_of(CudaDevice& device) {
  return device.op_caches().get<CheckBlockPool>([] { return std::make_unique<CheckBlockPool>(); });
}

}  // namespace

CudaCheckBlock::~CudaCheckBlock() {
  if (device_words) cudaFree(device_words);
  if (host_words) cudaFreeHost(host_words);
}

Result<std::unique_ptr<CudaCheckBlock>> cuda_take_check_block(CudaDevice& device) {
  if (std::unique_ptr<CudaCheckBlock> b = pool_of(device).take()) return b;
  CudaDeviceScope scope(device.index());
  AOTIRT_RETURN_IF_ERROR(scope.status());
  auto b = std::make_unique<CudaCheckBlock>();
  void* words = nullptr;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMalloc(&words, kBlockBytes));
  b->device_words = static_cast<int64_t*>(words);
  void* host = nullptr;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMallocHost(&host, kBlockBytes));
  b->host_words = static_cast<int64_t*>(host);
  // Synchronous: the block may next be used on any stream.
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemset(words, 0, kBlockBytes));
  return b;
}

void cuda_return_check_block(CudaDevice& device, std::unique_ptr<CudaCheckBlock> block) {
  pool_of(device).give(std::move(block));
}

CudaRunScope::CudaRunScope(CudaDevice* device) : device_(device), outer_(t_run) { t_run = this; }

CudaRunScope::~CudaRunScope() {
  if (!slots_.empty()) scrub();
  if (block_) cuda_return_check_block(*device_, std::move(block_));
  t_run = outer_;
}

void CudaRunScope::scrub() {
  // Only after a failure: the cost of the waits does not matter, and the
  // block must be clean for a run on any stream.
  CudaDeviceScope scope(device_->index());
  if (!block_ || !scope.status().ok()) {
    block_.reset();  // freed rather than reused with words in an unknown state
    slots_.clear();
    return;
  }
  const size_t bytes = sizeof(int64_t) * kCudaCheckSlotWords * slots_.size();
  if (cudaStreamSynchronize(stream_) != cudaSuccess || cudaMemset(block_->device_words, 0, bytes) != cudaSuccess) {
    cudaGetLastError();
    block_.reset();
  }
  slots_.clear();
}

Status CudaRunScope::finish() {
  if (slots_.empty()) return Status();
  const size_t bytes = sizeof(int64_t) * kCudaCheckSlotWords * slots_.size();
  {
    CudaDeviceScope scope(device_->index());
    AOTIRT_RETURN_IF_ERROR(scope.status());
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(block_->host_words, block_->device_words, bytes, cudaMemcpyDeviceToHost, stream_));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    const int64_t* words = block_->host_words + i * kCudaCheckSlotWords;
    if (words[0] == 0) continue;
    Status error = slots_[i] ? slots_[i](words) : AOTIRT_STATUS(kInvalidArgument, "a device-side check failed");
    scrub();
    return error;
  }
  slots_.clear();
  return Status();
}

int64_t* CudaRunScope::defer(int device, cudaStream_t stream, CudaCheckDescribe describe) {
  CudaRunScope* run = t_run;
  if (!run || run->device_->index() != device) return nullptr;
  if (run->slots_.size() >= static_cast<size_t>(kCudaCheckSlots)) return nullptr;
  if (!run->slots_.empty() && run->stream_ != stream) return nullptr;
  if (!run->block_) {
    Result<std::unique_ptr<CudaCheckBlock>> b = cuda_take_check_block(*run->device_);
    if (!b.ok()) return nullptr;  // the op checks at once instead
    run->block_ = std::move(b).value();
  }
  run->stream_ = stream;
  int64_t* slot = run->block_->device_words + run->slots_.size() * kCudaCheckSlotWords;
  run->slots_.push_back(std::move(describe));
  return slot;
}

}  // namespace aotirt
