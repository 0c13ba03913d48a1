#include "shim/common/shim_symbols.h"

#include <dlfcn.h>

#include <mutex>

#include "base/status.h"
#include "shim/shim_abi.h"

namespace aotirt {

Status ensure_shims_global() {
  static std::once_flag once;
  static Status result;
  std::call_once(once, [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(&aoti_torch_empty_strided), &info) || !info.dli_fname) {
      result = AOTIRT_STATUS(kInternal, "cannot find the library that holds aotirt's shims");
      return;
    }
    // RTLD_NOLOAD: only re-flag the copy already loaded; never load a second one.
    void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    if (!self) {
      // Statically linked into the executable: its exports are global already.
      self = dlopen(nullptr, RTLD_NOW);
    }
    if (!self) result = AOTIRT_STATUS(kInternal, "cannot promote aotirt's shims to global scope: {}", dlerror());
    // The handle stays open for the process lifetime on purpose.
  });
  return result;
}

bool symbol_in_global_scope(const std::string& name) {
  dlerror();
  return dlsym(RTLD_DEFAULT, name.c_str()) != nullptr;
}

}  // namespace aotirt
