#include "backends/cuda/runtime/cuda_stream.h"

#include <array>
#include <mutex>

#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"

namespace aotirt {
namespace {

thread_local std::array<CudaStreamSlot, kCudaMaxDevices> t_streams;

struct DefaultStreams {
  std::mutex mutex;
  std::array<cudaStream_t, kCudaMaxDevices> streams{};
  std::array<bool, kCudaMaxDevices> made{};
};

DefaultStreams& default_streams() {
  // Leaked: streams must outlive model libraries' static destructors.
  static auto* s = new DefaultStreams();
  return *s;
}

}  // namespace

Result<int> cuda_device_count() {
  static std::once_flag once;
  static int count = 0;
  static Status status;
  std::call_once(once, [] {
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();
      count = 0;
      status = Status(StatusCode::kUnavailable,
                      fmt::format("CUDA is unavailable: {} ({})", cudaGetErrorString(err), cudaGetErrorName(err)));
    } else if (count == 0) {
      status = Status(StatusCode::kUnavailable, "CUDA is unavailable: no CUDA device is visible");
    }
  });
  if (!status.ok()) return status;
  return count;
}

Status cuda_check_device_index(int device) {
  AOTIRT_ASSIGN_OR_RETURN(int count, cuda_device_count());
  if (device < 0 || device >= count)
    return AOTIRT_STATUS(kInvalidArgument, "CUDA device index {} is out of range: {} device(s) visible", device,
                         count);
  if (device >= kCudaMaxDevices)
    return AOTIRT_STATUS(kUnimplemented, "CUDA device index {} is above aotirt's limit of {}", device,
                         kCudaMaxDevices);
  return Status();
}

Result<int> cuda_current_device() {
  int device = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  return device;
}

Result<cudaStream_t> cuda_default_stream(int device) {
  AOTIRT_RETURN_IF_ERROR(cuda_check_device_index(device));
  DefaultStreams& d = default_streams();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.made[device]) {
    CudaDeviceScope scope(device);
    AOTIRT_RETURN_IF_ERROR(scope.status());
    cudaStream_t s = nullptr;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
    d.streams[device] = s;
    d.made[device] = true;
  }
  return d.streams[device];
}

Result<cudaStream_t> cuda_current_stream(int device) {
  if (device >= 0 && device < kCudaMaxDevices && t_streams[device].set) return t_streams[device].stream;
  return cuda_default_stream(device);
}

CudaStreamSlot cuda_stream_slot(int device) { return t_streams[device]; }

void cuda_set_stream_slot(int device, CudaStreamSlot slot) { t_streams[device] = slot; }

CudaDeviceScope::CudaDeviceScope(int device) {
  int current = 0;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) {
    status_ = cuda_error_status(err, "cudaGetDevice", __FILE__, __LINE__);
    return;
  }
  if (current == device) return;
  err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    status_ = cuda_error_status(err, "cudaSetDevice", __FILE__, __LINE__);
    return;
  }
  previous_ = current;
}

CudaDeviceScope::~CudaDeviceScope() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace aotirt
