// Puts SLEEF's vector math in global scope for CPU model libraries.
//
// Inductor's AVX2/AVX512 kernels call Sleef_* (exp, log, tanh, erf, ...),
// which libtorch_cpu carries statically. We take them from the system's
// libsleef instead; the model library has no DT_NEEDED on it, so it must be
// global before the model is opened.
#include <dlfcn.h>

#include <mutex>

#include "backends/cpu/cpu_sleef.h"
#include "base/status.h"

namespace aotirt {

Status ensure_sleef_global() {
  static std::once_flag once;
  static Status result;
  std::call_once(once, [] {
    const char* names[] = {"libsleef.so.3", "libsleef.so"};
    for (const char* n : names) {
      if (dlopen(n, RTLD_NOW | RTLD_GLOBAL)) return;
    }
    result = AOTIRT_STATUS(kNotFound,
                           "libsleef (SLEEF vector math) is not installed; vectorised CPU kernels need it "
                           "(Debian/Ubuntu: apt-get install libsleef3): {}",
                           dlerror());
  });
  return result;
}

}  // namespace aotirt
