#include "backends/cuda/runtime/cuda_modules.h"

#include <cuda.h>
#include <dlfcn.h>

#include <new>

#include "base/library_resources.h"
#include "base/log.h"

namespace aotirt {
namespace {

// The driver's own entry points, from the libcuda.so.1 the model library
// was bound to.
struct Driver {
  decltype(&cuModuleLoad) module_load = nullptr;
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleUnload) module_unload = nullptr;
  decltype(&cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&cuCtxPushCurrent) ctx_push = nullptr;
  decltype(&cuCtxPopCurrent) ctx_pop = nullptr;
  decltype(&cuCtxSynchronize) ctx_synchronize = nullptr;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return r;
    // The _v2 names are what cuda.h's macros turn the calls into.
    r.module_load = reinterpret_cast<decltype(&cuModuleLoad)>(dlsym(h, "cuModuleLoad"));
    r.module_load_data = reinterpret_cast<decltype(&cuModuleLoadData)>(dlsym(h, "cuModuleLoadData"));
    r.module_unload = reinterpret_cast<decltype(&cuModuleUnload)>(dlsym(h, "cuModuleUnload"));
    r.ctx_get_current = reinterpret_cast<decltype(&cuCtxGetCurrent)>(dlsym(h, "cuCtxGetCurrent"));
    r.ctx_push = reinterpret_cast<decltype(&cuCtxPushCurrent)>(dlsym(h, "cuCtxPushCurrent_v2"));
    r.ctx_pop = reinterpret_cast<decltype(&cuCtxPopCurrent)>(dlsym(h, "cuCtxPopCurrent_v2"));
    r.ctx_synchronize = reinterpret_cast<decltype(&cuCtxSynchronize)>(dlsym(h, "cuCtxSynchronize"));
    return r;
  }();
  return d;
}

// A module and the context it was loaded in, which must be current to
// unload it.
struct LoadedModule {
  CUmodule module;
  CUcontext context;
};

void unload_module(void* p) {
  auto* m = static_cast<LoadedModule*>(p);
  const Driver& d = driver();
  if (d.ctx_push && d.ctx_pop && d.module_unload && d.ctx_push(m->context) == CUDA_SUCCESS) {
    // Runs of the model may still be in flight (their outputs are the
    // caller's): they finish before their kernels go.
    if (d.ctx_synchronize) d.ctx_synchronize();
    const CUresult r = d.module_unload(m->module);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED)
      AOTIRT_LOG(kWarning, "unloading a model's kernel module failed (CUresult {})", static_cast<int>(r));
    CUcontext popped = nullptr;
    d.ctx_pop(&popped);
  }
  delete m;
}

// Hands a module just loaded to the library whose code loaded it.
void keep(CUmodule module) {
  LibraryResources* owner = current_library_resources();
  const Driver& d = driver();
  if (!owner || !d.ctx_get_current) return;  // loaded outside a call aotirt made: left as it was
  CUcontext ctx = nullptr;
  if (d.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) return;
  auto* m = new (std::nothrow) LoadedModule{module, ctx};
  if (m && !owner->add(m, &unload_module)) delete m;
}

CUresult module_load(CUmodule* module, const char* path) {
  const Driver& d = driver();
  if (!d.module_load) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = d.module_load(module, path);
  if (r == CUDA_SUCCESS) keep(*module);
  return r;
}

CUresult module_load_data(CUmodule* module, const void* image) {
  const Driver& d = driver();
  if (!d.module_load_data) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = d.module_load_data(module, image);
  if (r == CUDA_SUCCESS) keep(*module);
  return r;
}

}  // namespace

std::vector<ImportOverride> cuda_library_imports() {
  return {{"cuModuleLoad", reinterpret_cast<void*>(&module_load)},
          {"cuModuleLoadData", reinterpret_cast<void*>(&module_load_data)}};
}

}  // namespace aotirt
