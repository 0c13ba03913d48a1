// Streams and the current device for the CUDA backend.
//
// Each device has a default stream that aotirt creates once and keeps for the
// process (a blocking stream, so it stays ordered with the legacy stream the
// model library's own cudaMemcpy calls use). Each thread has a current stream
// per device: the default unless a stream guard (aoti_torch_create_cuda_stream_guard)
// set another. Fallback ops, allocations and copies go to the current stream.
#pragma once

#include <cuda_runtime_api.h>

#include "aotirt/status.h"

namespace aotirt {

// Devices aotirt tracks per thread; higher indices are refused.
constexpr int kCudaMaxDevices = 64;

// Number of visible devices, or UNAVAILABLE with the runtime's reason.
Result<int> cuda_device_count();
// Fails with INVALID_ARGUMENT/NOT_FOUND unless 0 <= |device| < count.
Status cuda_check_device_index(int device);

// The calling thread's current device (cudaGetDevice).
Result<int> cuda_current_device();

// The default stream of |device|, created on first use. Borrowed: it lives
// until process exit.
Result<cudaStream_t> cuda_default_stream(int device);

// The calling thread's current stream for |device|.
Result<cudaStream_t> cuda_current_stream(int device);

// What a guard saves and restores: whether the thread had set a stream for a
// device, and which.
struct CudaStreamSlot {
  bool set = false;
  cudaStream_t stream = nullptr;
};
// Reads and replaces the calling thread's slot for |device| (0 <= device <
// kCudaMaxDevices, checked by the caller).
CudaStreamSlot cuda_stream_slot(int device);
void cuda_set_stream_slot(int device, CudaStreamSlot slot);

// Switches the calling thread to |device| for the lifetime of the object and
// switches back afterwards; does nothing when it is already current.
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int device);
  ~CudaDeviceScope();
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;
  // The outcome of the switch; check it before queuing work.
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;
  Status status_;
};

}  // namespace aotirt
