// Function tables for cuBLASLt, cuDNN, cuFFT, cuSOLVER and cuBLAS, filled
// with dlopen/dlsym on first use (the list is cuda_symbols.inc). libaotirt.so
// has no link-time dependency on any of them, so it loads where they are
// missing; an op that needs one then fails with UNAVAILABLE naming the
// library and how to provide it.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <memory>
#include <string>

#include "aotirt/status.h"

namespace aotirt {

struct CublasLtApi {
#define AOTIRT_CUBLASLT_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
  void* library = nullptr;  // dlopen handle, kept open for the process lifetime
  std::string name;         // what was opened
};

struct CudnnApi {
#define AOTIRT_CUDNN_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
  void* library = nullptr;
  std::string name;
};

// cuFFT, cuSOLVER (dense) and cuBLAS, for the FFT and linear-algebra ops.
struct CufftApi {
#define AOTIRT_CUFFT_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
  void* library = nullptr;
  std::string name;
};

struct CusolverApi {
#define AOTIRT_CUSOLVER_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
  void* library = nullptr;
  std::string name;
};

struct CublasApi {
#define AOTIRT_CUBLAS_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
  void* library = nullptr;
  std::string name;
};

// Sonames tried when no override is set.
constexpr const char* kCublasLtLibrary = "libcublasLt.so.13";
constexpr const char* kCudnnLibrary = "libcudnn.so.9";
constexpr const char* kCufftLibrary = "libcufft.so.12";
constexpr const char* kCusolverLibrary = "libcusolver.so.12";
constexpr const char* kCublasLibrary = "libcublas.so.13";

// Opens |library| (a soname or a path) and resolves every table entry.
// UNAVAILABLE when the library cannot be opened, lacks a function or is an
// incompatible major version.
Result<std::unique_ptr<CublasLtApi>> load_cublaslt(const std::string& library);
Result<std::unique_ptr<CudnnApi>> load_cudnn(const std::string& library);
Result<std::unique_ptr<CufftApi>> load_cufft(const std::string& library);
Result<std::unique_ptr<CusolverApi>> load_cusolver(const std::string& library);
Result<std::unique_ptr<CublasApi>> load_cublas(const std::string& library);

// The process-wide tables, loaded once; AOTIRT_CUBLASLT_LIBRARY,
// AOTIRT_CUDNN_LIBRARY, AOTIRT_CUFFT_LIBRARY, AOTIRT_CUSOLVER_LIBRARY and
// AOTIRT_CUBLAS_LIBRARY name another file. A failure is remembered.
Result<const CublasLtApi*> cublaslt_api();
Result<const CudnnApi*> cudnn_api();
Result<const CufftApi*> cufft_api();
Result<const CusolverApi*> cusolver_api();
Result<const CublasApi*> cublas_api();
// The tables if an earlier call loaded them, else null (for error texts).
const CublasLtApi* cublaslt_api_if_loaded();
const CudnnApi* cudnn_api_if_loaded();

}  // namespace aotirt
