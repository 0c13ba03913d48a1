#include "model/model_library.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "base/elf_import.h"
#include "base/env.h"
#include "base/log.h"
#include "base/status.h"

namespace aotirt {
namespace {

template <class Fn>
Status resolve(void* handle, const char* symbol, bool required, Fn* out) {
  dlerror();
  void* p = dlsym(handle, symbol);
  if (!p && required)
    return AOTIRT_STATUS(kIncompatible,
                         "the model library does not export {}; it was not built by a supported "
                         "AOTInductor (torch 2.9 or newer)",
                         symbol);
  *out = reinterpret_cast<Fn>(p);
  return Status();
}

// Loading and unloading model libraries are serialised. The loader's own lock
// already serialises dlopen and dlclose; this one also covers the rewriting of
// a fresh library's GOT slots and the check for a library left resident.
// Without it, a library mapped where one just unloaded on another thread has
// its slots written with no ordering against the writes to the old mapping,
// which ThreadSanitizer (it cannot see the loader's unmapping) reports as a
// race, and a resident library's fd number could be reused in between.
std::mutex& library_lock() {
  static std::mutex lock;
  return lock;
}

// A model library linked against a static libstdc++ (g++ does that where
// only libstdc++.a is installed, as on some build machines) carries its own
// copy of the C++ runtime, whose constructor mallocs an emergency pool for
// exceptions that nothing frees: every load and unload of such a library
// would leak it. libstdc++ (GCC 13 and newer) exports __gnu_cxx::__freeres to
// free that pool; call the library's own copy, never the process's (whose
// pool is still in use), just before the library is unloaded.
void free_private_cxx_runtime(void* handle) {
  void* freeres = dlsym(handle, "_ZN9__gnu_cxx9__freeresEv");
  void* anchor = dlsym(handle, "AOTInductorModelContainerDelete");
  if (!freeres || !anchor) return;
  Dl_info in_copy{}, in_library{};
  if (!dladdr(freeres, &in_copy) || !dladdr(anchor, &in_library)) return;
  if (in_copy.dli_fbase == nullptr || in_copy.dli_fbase != in_library.dli_fbase) return;
  reinterpret_cast<void (*)()>(freeres)();
}

}  // namespace

Result<std::unique_ptr<ModelLibrary>> ModelLibrary::open(const std::string& bytes, const std::string& name,
                                                        const std::vector<ImportOverride>& imports) {
  std::unique_ptr<ModelLibrary> lib(new ModelLibrary());
  AOTIRT_ASSIGN_OR_RETURN(lib->fd_, create_memfd("aotirt-" + name));
  AOTIRT_RETURN_IF_ERROR(write_all(lib->fd_.get(), bytes.data(), bytes.size(), "the model library"));
  lib->path_ = "/proc/self/fd/" + std::to_string(lib->fd_.get());
  std::lock_guard<std::mutex> hold(library_lock());
  lib->handle_ = dlopen(lib->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = dlerror();
    return AOTIRT_STATUS(kNotFound, "cannot load the model library: {}", err ? err : "unknown dlopen error");
  }
  ContainerApi& a = lib->api_;
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerCreateWithDevice", true, &a.create_with_device));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerDelete", true, &a.destroy));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerRun", true, &a.run));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerRunSingleThreaded", false, &a.run_single_threaded));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumInputs", true, &a.get_num_inputs));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumOutputs", true, &a.get_num_outputs));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetInputName", true, &a.get_input_name));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetOutputName", true, &a.get_output_name));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetCallSpec", true, &a.get_call_spec));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumConstants", false, &a.get_num_constants));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelUpdateConstantsFromBlob", false,
                                 &a.update_constants_from_blob));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetConstantFromFolded", false,
                                 &a.get_constant_from_folded));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantType", false, &a.get_constant_type));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantDataSize", false, &a.get_constant_data_size));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantsBlobSize", false, &a.get_constants_blob_size));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantName", false, &a.get_constant_name));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetConstantOriginalFQN", false,
                                 &a.get_constant_original_fqn));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantDtype", false, &a.get_constant_dtype));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs",
                                 false, &a.update_user_managed_constants));

  // Before anything runs in the library (its constructors ran in dlopen,
  // and they do not run a model).
  Result<int> redirected = redirect_import(lib->handle_, kEnvLookupSymbol, reinterpret_cast<void*>(&env_with_input_checks));
  if (redirected.ok()) {
    lib->input_checks_forced_ = redirected.value() > 0;
    if (!lib->input_checks_forced_)
      AOTIRT_LOG(kDebug, "the model library imports no environment lookup: it has no generated input checks to turn on");
  } else {
    AOTIRT_LOG(kWarning, "the model library's own input checks stay off unless {} is set: {}", kCheckInputsEnv,
               redirected.status().message());
  }
  for (const ImportOverride& o : imports) {
    Result<int> r = redirect_import(lib->handle_, o.symbol, o.replacement);
    if (!r.ok())
      AOTIRT_LOG(kWarning, "what the model library acquires through {} is not released with it: {}", o.symbol,
                 r.status().message());
  }
  return lib;
}

ModelLibrary::~ModelLibrary() {
  if (!handle_) return;
  resources_.release_all();
  std::lock_guard<std::mutex> hold(library_lock());
  free_private_cxx_runtime(handle_);
  dlclose(handle_);
  // Libraries with STB_GNU_UNIQUE symbols (libstdc++ templates emit them)
  // can never be unloaded. glibc finds loaded libraries by path, so if this
  // one stays resident its fd number must never name another library: keep
  // the memfd open for the life of the process (its pages stay mapped anyway).
  if (void* resident = dlopen(path_.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(resident);
    fd_.release();
  }
}

}  // namespace aotirt
