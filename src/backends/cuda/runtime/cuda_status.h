// CUDA error codes as aotirt Status: the runtime's cudaError_t, the driver's
// CUresult, cuBLASLt's and cuDNN's status codes. Each Status carries the code's
// name, its text, the expression that failed and the file and line.
//
// Making a Status from a cudaError_t also clears the runtime's last-error slot
// (for errors that are not sticky), so a failure aotirt reported cleanly does
// not resurface in the model library's next cudaGetLastError() check.
#pragma once

#include <cuda_runtime_api.h>

#include "aotirt/status.h"

namespace aotirt {

// The StatusCode a cudaError_t maps to: out of memory -> RESOURCE_EXHAUSTED,
// no driver or device -> UNAVAILABLE, bad argument -> INVALID_ARGUMENT,
// unsupported -> UNIMPLEMENTED, anything else -> INTERNAL.
StatusCode cuda_error_code(cudaError_t err);
Status cuda_error_status(cudaError_t err, const char* expr, const char* file, int line);

// Driver API results (CUresult, passed as int so this header needs no cuda.h).
// Names come from the driver when one is installed, else the number is shown.
StatusCode cu_result_code(int result);
Status cu_result_status(int result, const char* expr, const char* file, int line);

// cuBLASLt (cublasStatus_t) and cuDNN (cudnnStatus_t), passed as int.
Status cublas_status(int status, const char* expr, const char* file, int line);
Status cudnn_status(int status, const char* expr, const char* file, int line);

}  // namespace aotirt

#define AOTIRT_CUDA_RETURN_IF_ERROR(expr)                                      \
  do {                                                                         \
    cudaError_t aotirt_cuda_err_ = (expr);                                     \
    if (aotirt_cuda_err_ != cudaSuccess)                                       \
      return ::aotirt::cuda_error_status(aotirt_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define AOTIRT_CU_RETURN_IF_ERROR(expr)                                        \
  do {                                                                         \
    int aotirt_cu_res_ = static_cast<int>(expr);                               \
    if (aotirt_cu_res_ != 0)                                                   \
      return ::aotirt::cu_result_status(aotirt_cu_res_, #expr, __FILE__, __LINE__); \
  } while (0)

#define AOTIRT_CUBLAS_RETURN_IF_ERROR(expr)                                    \
  do {                                                                         \
    int aotirt_cublas_st_ = static_cast<int>(expr);                            \
    if (aotirt_cublas_st_ != 0)                                                \
      return ::aotirt::cublas_status(aotirt_cublas_st_, #expr, __FILE__, __LINE__); \
  } while (0)

#define AOTIRT_CUDNN_RETURN_IF_ERROR(expr)                                     \
  do {                                                                         \
    int aotirt_cudnn_st_ = static_cast<int>(expr);                             \
    if (aotirt_cudnn_st_ != 0)                                                 \
      return ::aotirt::cudnn_status(aotirt_cudnn_st_, #expr, __FILE__, __LINE__); \
  } while (0)
