// Function tables for cuBLASLt and cuDNN, filled with dlopen/dlsym on first
// use (the list is cuda_symbols.inc). libaotirt.so has no link-time dependency
// on either library, so it loads where they are missing; an op that needs one
// then fails with UNAVAILABLE naming the library and how to provide it.
#pragma once

#include <cublasLt.h>
#include <cudnn.h>

#include <memory>
#include <string>

#include "aotirt/status.h"

namespace aotirt {

struct CublasLtApi {
#define AOTIRT_CUBLASLT_FN(name) decltype(&::name) name = nullptr;
#define AOTIRT_CUDNN_FN(name)
#include "backends/cuda/runtime/cuda_symbols.inc"
#undef AOTIRT_CUBLASLT_FN
#undef AOTIRT_CUDNN_FN
  void* library = nullptr;  // dlopen handle, kept open for the process lifetime
  std::string name;         // what was opened
};

struct CudnnApi {
#define AOTIRT_CUBLASLT_FN(name)
#define AOTIRT_CUDNN_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/runtime/cuda_symbols.inc"
#undef AOTIRT_CUBLASLT_FN
#undef AOTIRT_CUDNN_FN
  void* library = nullptr;
  std::string name;
};

// Sonames tried when no override is set.
constexpr const char* kCublasLtLibrary = "libcublasLt.so.13";
constexpr const char* kCudnnLibrary = "libcudnn.so.9";

// Opens |library| (a soname or a path) and resolves every table entry.
// UNAVAILABLE when the library cannot be opened, lacks a function or is an
// incompatible major version.
Result<std::unique_ptr<CublasLtApi>> load_cublaslt(const std::string& library);
Result<std::unique_ptr<CudnnApi>> load_cudnn(const std::string& library);

// The process-wide tables, loaded once; AOTIRT_CUBLASLT_LIBRARY and
// AOTIRT_CUDNN_LIBRARY name another file. A failure is remembered.
Result<const CublasLtApi*> cublaslt_api();
Result<const CudnnApi*> cudnn_api();
// The tables if an earlier call loaded them, else null (for error texts).
const CublasLtApi* cublaslt_api_if_loaded();
const CudnnApi* cudnn_api_if_loaded();

}  // namespace aotirt
