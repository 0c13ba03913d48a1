// The CUDA Device: properties, allocator, copies and the package checks.
// Instances come from the device registry (get_device); this header lets the
// CUDA shims and ops reach the allocator and properties behind the generic
// Device interface.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/runtime/cuda_allocator.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "backends/cuda/runtime/cuda_readback.h"
#include "device/device.h"

namespace aotirt {

// What the ops ask of the GPU, read attribute by attribute when the device is
// created (cudaGetDeviceProperties queries every property, some of them
// slowly, and sits on the cold start's path).
struct CudaDeviceProperties {
  int major = 0;
  int minor = 0;
  int sm_count = 0;
  size_t shared_memory_per_block_optin = 0;
};

// The GPU's name and memory, for descriptions and messages: read on first
// use with cudaGetDeviceProperties.
struct CudaDeviceIdentity {
  std::string name;
  size_t total_memory = 0;
};

class CudaDevice final : public Device {
 public:
  static Result<std::unique_ptr<CudaDevice>> create(int index);

  DeviceId id() const override { return DeviceId{DeviceType::kCuda, index_}; }
  std::string description() const override;
  Allocator& allocator() override { return *allocator_; }
  Status copy(const TensorImpl& dst, const TensorImpl& src, bool non_blocking) override;
  Status zero(const TensorImpl& dst) override;
  Status synchronize() override;
  void* current_stream() override;
  // Reads of up to CudaReadbackPool::kSlotBytes are queued (pinned memory
  // and an event); larger ones are copied at once.
  Result<std::unique_ptr<DeviceReadback>> read_back(const TensorImpl& src) override;
  CudaReadbackPool& readback_pool() { return readback_pool_; }
  // Holds the run's deferred device-side checks (cuda_run_checks.h).
  std::unique_ptr<RunScope> enter_run() override;
  Status prepare_model_load() override;
  Status check_package(const std::vector<std::pair<std::string, std::string>>& metadata) override;
  // CUDA graphs: relaxed-mode stream capture of |body| on the current stream,
  // with the allocator serving this thread from the graph's private pool.
  Result<std::unique_ptr<DeviceGraph>> capture(const std::function<Status()>& body) override;
  // Pinned, multi-threaded reads of the package for the library's weight
  // copies (cuda_upload.h), with the options from the environment.
  Result<std::unique_ptr<HostUpload>> begin_host_upload(const uint8_t* data, size_t size, const std::string& path,
                                                        uint64_t file_offset) override;

  int index() const { return index_; }
  const CudaDeviceProperties& properties() const { return props_; }
  const CudaDeviceIdentity& identity() const;
  CudaAllocator& cuda_allocator() { return *allocator_; }
  // What the ops keep for this device (cuda_op_caches.h).
  CudaOpCaches& op_caches() { return op_caches_; }
  // Empties the ops' caches, then gives cached memory back.
  void release_caches() override;

 private:
  CudaDevice(int index, CudaDeviceProperties props, std::unique_ptr<CudaAllocator> allocator)
      : index_(index), props_(std::move(props)), allocator_(std::move(allocator)), readback_pool_(index) {}

  int index_;
  CudaDeviceProperties props_;
  mutable std::once_flag identity_once_;
  mutable CudaDeviceIdentity identity_;
  std::unique_ptr<CudaAllocator> allocator_;
  // Before allocator_ in destruction: cached buffers go back to it.
  CudaOpCaches op_caches_;
  CudaReadbackPool readback_pool_;
};

// The registry's CUDA device |index| (created on first use).
Result<CudaDevice*> cuda_device(int index);

// Checks an AOTI_COMPUTE_CAPABILITY value ("90", "86", "100") against a GPU of
// compute capability |major|.|minor|; INCOMPATIBLE on a mismatch. Exposed for
// tests.
Status cuda_check_compute_capability(const std::string& package_cc, int major, int minor,
                                     const std::string& gpu_name);

}  // namespace aotirt
