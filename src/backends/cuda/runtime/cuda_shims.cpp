// The CUDA-only shims of shim.h: device and stream guards, the current stream,
// and raw allocations (used for weights when a model was built with
// AOT_INDUCTOR_USE_CACHING_ALLOCATOR). Guards are heap objects owned by the
// handle; deleting one restores what creating it replaced.
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

struct CudaGuard {
  int original_device;
};

struct CudaStreamGuard {
  int device;
  int original_device;
  CudaStreamSlot original_slot;
};

// A negative index means "the current device", as in c10.
Result<int> resolve_index(int32_t device_index) {
  if (device_index < 0) return cuda_current_device();
  AOTIRT_RETURN_IF_ERROR(cuda_check_device_index(device_index));
  return static_cast<int>(device_index);
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret_guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret_guard);
    AOTIRT_ASSIGN_OR_RETURN(int original, cuda_current_device());
    AOTIRT_ASSIGN_OR_RETURN(int target, resolve_index(device_index));
    if (target != original) AOTIRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(target));
    *ret_guard = reinterpret_cast<CUDAGuardHandle>(new CudaGuard{original});
    return Status();
  });
}

AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    auto* g = reinterpret_cast<CudaGuard*>(guard);
    int original = g->original_device;
    delete g;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(original));
    return Status();
  });
}

AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    AOTIRT_ASSIGN_OR_RETURN(int target, resolve_index(device_index));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(target));
    return Status();
  });
}

AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
                                                   CUDAStreamGuardHandle* ret_guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret_guard);
    AOTIRT_ASSIGN_OR_RETURN(int original, cuda_current_device());
    AOTIRT_ASSIGN_OR_RETURN(int device, resolve_index(device_index));
    if (device != original) AOTIRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    auto* g = new CudaStreamGuard{device, original, cuda_stream_slot(device)};
    cuda_set_stream_slot(device, CudaStreamSlot{true, static_cast<cudaStream_t>(stream)});
    *ret_guard = reinterpret_cast<CUDAStreamGuardHandle>(g);
    return Status();
  });
}

AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    auto* g = reinterpret_cast<CudaStreamGuard*>(guard);
    CudaStreamGuard saved = *g;
    delete g;
    cuda_set_stream_slot(saved.device, saved.original_slot);
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaSetDevice(saved.original_device));
    return Status();
  });
}

AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret_stream);
    AOTIRT_ASSIGN_OR_RETURN(int device, resolve_index(device_index));
    AOTIRT_ASSIGN_OR_RETURN(cudaStream_t s, cuda_current_stream(device));
    *ret_stream = static_cast<void*>(s);
    return Status();
  });
}

AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes, void** ret_ptr) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret_ptr);
    AOTIRT_ASSIGN_OR_RETURN(int device, cuda_current_device());
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
    AOTIRT_ASSIGN_OR_RETURN(*ret_ptr, dev->cuda_allocator().allocate(static_cast<size_t>(nbytes)));
    return Status();
  });
}

AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void* ptr) noexcept {
  return shim_call(__func__, [&]() -> Status {
    if (!ptr) return Status();
    cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    if (err != cudaSuccess || attr.type != cudaMemoryTypeDevice) {
      cudaGetLastError();
      return AOTIRT_STATUS(kInvalidArgument, "pointer {} is not CUDA device memory from raw_alloc", ptr);
    }
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(attr.device));
    return dev->cuda_allocator().release(ptr);
  });
}

}  // extern "C"
