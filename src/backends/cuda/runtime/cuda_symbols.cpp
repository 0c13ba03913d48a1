#include "backends/cuda/runtime/cuda_symbols.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "backends/cuda/runtime/cuda_options.h"
#include "base/status.h"

namespace aotirt {
namespace {

Result<void*> open_library(const std::string& library, const char* what, const char* env_var) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return AOTIRT_STATUS(kUnavailable,
                         "{} is unavailable: dlopen(\"{}\") failed: {}. Install it (for example the "
                         "NVIDIA pip wheel) and add its folder to LD_LIBRARY_PATH, or set {} to its path",
                         what, library, err ? err : "unknown error", env_var);
  }
  return handle;
}

template <class Fn>
Status resolve(void* handle, const char* symbol, const std::string& library, Fn* out) {
  dlerror();
  void* p = dlsym(handle, symbol);
  if (!p)
    return AOTIRT_STATUS(kUnavailable, "{} lacks the function {}: an older or incompatible release?", library,
                         symbol);
  *out = reinterpret_cast<Fn>(p);
  return Status();
}

template <class Api, class Loader>
struct Loaded {
  std::once_flag once;
  std::unique_ptr<Api> api;
  Status status;
  std::atomic<const Api*> ready{nullptr};

  Result<const Api*> get(Loader loader, const std::string& chosen, const char* default_name) {
    std::call_once(once, [&] {
      const std::string name = chosen.empty() ? default_name : chosen;
      auto loaded = loader(name);
      if (loaded.ok()) {
        api = std::move(loaded).value();
        ready.store(api.get(), std::memory_order_release);
      } else {
        status = loaded.take_status();
      }
    });
    if (api) return static_cast<const Api*>(api.get());
    return status;
  }
};

using CublasLtLoader = Result<std::unique_ptr<CublasLtApi>> (*)(const std::string&);
using CudnnLoader = Result<std::unique_ptr<CudnnApi>> (*)(const std::string&);
using CufftLoader = Result<std::unique_ptr<CufftApi>> (*)(const std::string&);
using CusolverLoader = Result<std::unique_ptr<CusolverApi>> (*)(const std::string&);
using CublasLoader = Result<std::unique_ptr<CublasApi>> (*)(const std::string&);

// Leaked on purpose: ops may run from static destructors of model libraries.
Loaded<CublasLtApi, CublasLtLoader>& cublaslt_slot() {
  static auto* slot = new Loaded<CublasLtApi, CublasLtLoader>();
  return *slot;
}
Loaded<CudnnApi, CudnnLoader>& cudnn_slot() {
  static auto* slot = new Loaded<CudnnApi, CudnnLoader>();
  return *slot;
}
Loaded<CufftApi, CufftLoader>& cufft_slot() {
  static auto* slot = new Loaded<CufftApi, CufftLoader>();
  return *slot;
}
Loaded<CusolverApi, CusolverLoader>& cusolver_slot() {
  static auto* slot = new Loaded<CusolverApi, CusolverLoader>();
  return *slot;
}
Loaded<CublasApi, CublasLoader>& cublas_slot() {
  static auto* slot = new Loaded<CublasApi, CublasLoader>();
  return *slot;
}

// Fails unless |library| reports major version |expected| (|reported| is
// its own answer, or -1 when it could not say).
Status check_major(void* handle, const std::string& library, const char* what, int reported, int expected) {
  if (reported == expected) return Status();
  dlclose(handle);
  return AOTIRT_STATUS(kUnavailable, "{} is {} major version {}, but aotirt was built for major version {}", library,
                       what, reported, expected);
}

}  // namespace

Result<std::unique_ptr<CublasLtApi>> load_cublaslt(const std::string& library) {
  AOTIRT_ASSIGN_OR_RETURN(void* handle, open_library(library, "cuBLASLt", "AOTIRT_CUBLASLT_LIBRARY"));
  std::unique_ptr<CublasLtApi> api(new CublasLtApi());
  api->library = handle;
  api->name = library;
  Status st;
#define AOTIRT_CUBLASLT_FN(fn) \
  if (st.ok()) st = resolve(handle, #fn, library, &api->fn);
#include "backends/cuda/runtime/cuda_symbols.inc"
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  size_t version = api->cublasLtGetVersion();
  if (version / 10000 != CUBLAS_VER_MAJOR) {
    dlclose(handle);
    return AOTIRT_STATUS(kUnavailable, "{} is cuBLASLt version {}, but aotirt was built for major version {}",
                         library, version, CUBLAS_VER_MAJOR);
  }
  return api;
}

Result<std::unique_ptr<CudnnApi>> load_cudnn(const std::string& library) {
  AOTIRT_ASSIGN_OR_RETURN(void* handle, open_library(library, "cuDNN", "AOTIRT_CUDNN_LIBRARY"));
  std::unique_ptr<CudnnApi> api(new CudnnApi());
  api->library = handle;
  api->name = library;
  Status st;
#define AOTIRT_CUDNN_FN(fn) \
  if (st.ok()) st = resolve(handle, #fn, library, &api->fn);
#include "backends/cuda/runtime/cuda_symbols.inc"
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  size_t version = api->cudnnGetVersion();
  if (version / 10000 != CUDNN_MAJOR) {
    dlclose(handle);
    return AOTIRT_STATUS(kUnavailable, "{} is cuDNN version {}, but aotirt was built for major version {}", library,
                         version, CUDNN_MAJOR);
  }
  return api;
}

Result<std::unique_ptr<CufftApi>> load_cufft(const std::string& library) {
  AOTIRT_ASSIGN_OR_RETURN(void* handle, open_library(library, "cuFFT", "AOTIRT_CUFFT_LIBRARY"));
  std::unique_ptr<CufftApi> api(new CufftApi());
  api->library = handle;
  api->name = library;
  Status st;
#define AOTIRT_CUFFT_FN(fn) \
  if (st.ok()) st = resolve(handle, #fn, library, &api->fn);
#include "backends/cuda/runtime/cuda_symbols.inc"
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  int major = -1;
  if (api->cufftGetProperty(MAJOR_VERSION, &major) != 0) major = -1;
  AOTIRT_RETURN_IF_ERROR(check_major(handle, library, "cuFFT", major, CUFFT_VER_MAJOR));
  return api;
}

Result<std::unique_ptr<CusolverApi>> load_cusolver(const std::string& library) {
  AOTIRT_ASSIGN_OR_RETURN(void* handle, open_library(library, "cuSOLVER", "AOTIRT_CUSOLVER_LIBRARY"));
  std::unique_ptr<CusolverApi> api(new CusolverApi());
  api->library = handle;
  api->name = library;
  Status st;
#define AOTIRT_CUSOLVER_FN(fn) \
  if (st.ok()) st = resolve(handle, #fn, library, &api->fn);
#include "backends/cuda/runtime/cuda_symbols.inc"
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  int major = -1;
  if (api->cusolverGetProperty(MAJOR_VERSION, &major) != 0) major = -1;
  AOTIRT_RETURN_IF_ERROR(check_major(handle, library, "cuSOLVER", major, CUSOLVER_VER_MAJOR));
  return api;
}

Result<std::unique_ptr<CublasApi>> load_cublas(const std::string& library) {
  AOTIRT_ASSIGN_OR_RETURN(void* handle, open_library(library, "cuBLAS", "AOTIRT_CUBLAS_LIBRARY"));
  std::unique_ptr<CublasApi> api(new CublasApi());
  api->library = handle;
  api->name = library;
  Status st;
#define AOTIRT_CUBLAS_FN(fn) \
  if (st.ok()) st = resolve(handle, #fn, library, &api->fn);
#include "backends/cuda/runtime/cuda_symbols.inc"
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  int major = -1;
  if (api->cublasGetProperty(MAJOR_VERSION, &major) != 0) major = -1;
  AOTIRT_RETURN_IF_ERROR(check_major(handle, library, "cuBLAS", major, CUBLAS_VER_MAJOR));
  return api;
}

Result<const CublasLtApi*> cublaslt_api() {
  return cublaslt_slot().get(&load_cublaslt, cuda_options().cublaslt_library, kCublasLtLibrary);
}

Result<const CudnnApi*> cudnn_api() {
  return cudnn_slot().get(&load_cudnn, cuda_options().cudnn_library, kCudnnLibrary);
}

Result<const CufftApi*> cufft_api() {
  return cufft_slot().get(&load_cufft, cuda_options().cufft_library, kCufftLibrary);
}

Result<const CusolverApi*> cusolver_api() {
  return cusolver_slot().get(&load_cusolver, cuda_options().cusolver_library, kCusolverLibrary);
}

Result<const CublasApi*> cublas_api() {
  return cublas_slot().get(&load_cublas, cuda_options().cublas_library, kCublasLibrary);
}

const CublasLtApi* cublaslt_api_if_loaded() { return cublaslt_slot().ready.load(std::memory_order_acquire); }
const CudnnApi* cudnn_api_if_loaded() { return cudnn_slot().ready.load(std::memory_order_acquire); }

}  // namespace aotirt
