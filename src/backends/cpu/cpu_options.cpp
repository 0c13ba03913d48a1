#include "backends/cpu/cpu_options.h"

#include <cstdlib>

namespace aotirt {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

CpuOptions& options_slot() {
  static CpuOptions options = [] {
    CpuOptions o;
    o.blas_library = env_or("AOTIRT_BLAS_LIBRARY", AOTIRT_BLAS_SONAME);
    o.onednn_library = env_or("AOTIRT_ONEDNN_LIBRARY", "libdnnl.so.3");
    o.random_seed = env_or("AOTIRT_SEED", "");
    o.aten_cpu_capability = env_or("ATEN_CPU_CAPABILITY", "");
    return o;
  }();
  return options;
}

}  // namespace

const CpuOptions& cpu_options() { return options_slot(); }

void set_cpu_options_for_testing(const CpuOptions& options) { options_slot() = options; }

}  // namespace aotirt
