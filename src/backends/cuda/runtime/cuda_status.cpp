#include "backends/cuda/runtime/cuda_status.h"

#include <cuda.h>

#include <mutex>

#include "backends/cuda/runtime/cuda_symbols.h"
#include "base/status.h"

namespace aotirt {

StatusCode cuda_error_code(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return StatusCode::kOk;
    case cudaErrorMemoryAllocation:
      return StatusCode::kResourceExhausted;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorStubLibrary:
      return StatusCode::kUnavailable;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidConfiguration:
      return StatusCode::kInvalidArgument;
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return StatusCode::kUnimplemented;
    default:
      return StatusCode::kInternal;
  }
}

Status cuda_error_status(cudaError_t err, const char* expr, const char* file, int line) {
  // Consume the error so the model library's own cudaGetLastError() checks
  // do not trip over a failure aotirt already reported. Sticky errors (a
  // kernel fault) stay, as they must.
  cudaGetLastError();
  return Status(cuda_error_code(err),
                fmt::format("CUDA error {} ({}): {} [in {}]", cudaGetErrorName(err), static_cast<int>(err),
                            cudaGetErrorString(err), expr),
                file, line);
}

namespace {

using CuGetErrorFn = int (*)(int, const char**);

struct DriverErrorNames {
  CuGetErrorFn name = nullptr;
  CuGetErrorFn text = nullptr;
};

// The driver's own names, fetched through the runtime so aotirt does not
// link libcuda; absent without a driver.
const DriverErrorNames& driver_error_names() {
  static DriverErrorNames names;
  static std::once_flag once;
  std::call_once(once, [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      names.name = reinterpret_cast<CuGetErrorFn>(fn);
    fn = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuGetErrorString", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      names.text = reinterpret_cast<CuGetErrorFn>(fn);
    cudaGetLastError();
  });
  return names;
}

}  // namespace

StatusCode cu_result_code(int result) {
  switch (static_cast<CUresult>(result)) {
    case CUDA_SUCCESS:
      return StatusCode::kOk;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return StatusCode::kResourceExhausted;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NO_DEVICE:
      return StatusCode::kUnavailable;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_HANDLE:
      return StatusCode::kInvalidArgument;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_SUPPORTED:
      return StatusCode::kUnimplemented;
    case CUDA_ERROR_FILE_NOT_FOUND:
    case CUDA_ERROR_NOT_FOUND:
      return StatusCode::kNotFound;
    default:
      return StatusCode::kInternal;
  }
}

Status cu_result_status(int result, const char* expr, const char* file, int line) {
  const DriverErrorNames& names = driver_error_names();
  const char* name = nullptr;
  const char* text = nullptr;
  if (names.name) names.name(result, &name);
  if (names.text) names.text(result, &text);
  return Status(cu_result_code(result),
                fmt::format("CUDA driver error {} ({}): {} [in {}]", name ? name : "CUresult", result,
                            text ? text : "no driver to describe it", expr),
                file, line);
}

Status cublas_status(int status, const char* expr, const char* file, int line) {
  StatusCode code = StatusCode::kInternal;
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED: code = StatusCode::kResourceExhausted; break;
    case CUBLAS_STATUS_INVALID_VALUE: code = StatusCode::kInvalidArgument; break;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: code = StatusCode::kUnimplemented; break;
    case CUBLAS_STATUS_NOT_INITIALIZED: code = StatusCode::kUnavailable; break;
    default: break;
  }
  const CublasLtApi* api = cublaslt_api_if_loaded();
  auto st = static_cast<cublasStatus_t>(status);
  return Status(code,
                fmt::format("cuBLASLt error {} ({}): {} [in {}]", api ? api->cublasLtGetStatusName(st) : "status",
                            status, api ? api->cublasLtGetStatusString(st) : "cuBLASLt is not loaded", expr),
                file, line);
}

Status cudnn_status(int status, const char* expr, const char* file, int line) {
  StatusCode code = StatusCode::kInternal;
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    code = StatusCode::kResourceExhausted;
  else if (status >= 1000 && status < 2000)
    code = StatusCode::kUnavailable;
  else if (status >= 2000 && status < 3000)
    code = StatusCode::kInvalidArgument;
  else if (status >= 3000 && status < 4000)
    code = StatusCode::kUnimplemented;
  const CudnnApi* api = cudnn_api_if_loaded();
  return Status(code,
                fmt::format("cuDNN error {}: {} [in {}]", status,
                            api ? api->cudnnGetErrorString(static_cast<cudnnStatus_t>(status)) : "cuDNN is not loaded",
                            expr),
                file, line);
}

}  // namespace aotirt
