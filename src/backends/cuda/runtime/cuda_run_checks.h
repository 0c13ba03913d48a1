// Device-side argument checks read once per model run. Some op arguments can
// only be checked by the kernels that read them (an index held on the
// device); a kernel that meets a bad one skips it and sets words in device
// memory. Outside a run, the op reads those words back at once, which waits
// for the stream. Inside a run (CudaDevice::enter_run), the op takes a slot
// of the run's words instead and goes on; the run reads every slot with one
// copy and one wait at its end (Device::RunScope::finish) and fails with the
// first bad argument's error. A run on one thread holds one block of slots
// from a pool the device owns; the block goes back when the run ends.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "aotirt/status.h"
#include "device/device.h"

namespace aotirt {

class CudaDevice;

// int64 words per slot: [0] set to 1 by the first kernel that meets a bad
// argument, [1] and [2] what the op wrote to describe it; [3] spare.
constexpr int kCudaCheckSlotWords = 4;
// Slots per run; a run that needs more has its further ops check at once.
constexpr int kCudaCheckSlots = 128;

// The error for a slot whose first word is set, from its words.
using CudaCheckDescribe = std::function<Status(const int64_t* words)>;

// The block of slots a run holds: device words, zero unless a kernel set
// them, and their pinned host mirror.
struct CudaCheckBlock {
  int64_t* device_words = nullptr;
  int64_t* host_words = nullptr;
  ~CudaCheckBlock();
};

class CudaRunScope final : public Device::RunScope {
 public:
  explicit CudaRunScope(CudaDevice* device);
  ~CudaRunScope() override;
  CudaRunScope(const CudaRunScope&) = delete;
  CudaRunScope& operator=(const CudaRunScope&) = delete;

  // Reads the slots the run's ops took (a copy and a wait on their stream),
  // then leaves them zeroed; the first set slot's error, if any.
  Status finish() override;

  // A zeroed slot of this thread's run on |device| for a check whose kernels
  // are queued on |stream|, which |describe| turns into the error. Null when
  // the thread runs no model there, the run's ops used another stream, or
  // its slots are used up: the op then checks at once.
  static int64_t* defer(int device, cudaStream_t stream, CudaCheckDescribe describe);

 private:
  // Waits for the slots' stream and zeroes the used ones; for a run that
  // ends without finish() or whose check failed.
  void scrub();

  CudaDevice* device_;
  CudaRunScope* outer_;  // the thread's enclosing run, restored at the end
  std::unique_ptr<CudaCheckBlock> block_;
  cudaStream_t stream_ = nullptr;
  std::vector<CudaCheckDescribe> slots_;
};

// The blocks of a device's idle runs (CudaDevice::op_caches). Bounded: past
// a few idle blocks, returned ones are freed.
Result<std::unique_ptr<CudaCheckBlock>> cuda_take_check_block(CudaDevice& device);
void cuda_return_check_block(CudaDevice& device, std::unique_ptr<CudaCheckBlock> block);

}  // namespace aotirt
