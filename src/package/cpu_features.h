// Host CPU checks for packages: AOTI compiles CPU kernels for the build
// host's vector ISA (-march=native), and such code faults with SIGILL on a
// CPU without it. We refuse those packages up front instead.
#pragma once

#include <string>

#include "aotirt/status.h"

namespace aotirt {

// OK when this CPU can run kernels built for |isa|, the package's
// AOTI_CPU_ISA value ("AVX512", "AVX2", "AVX512 AVX512_VNNI AMX_TILE", "" ...).
Status check_cpu_isa(const std::string& isa);
// Names of the vector ISAs this CPU has, for messages ("AVX2 AVX512").
std::string host_cpu_isa();
// uname's machine ("x86_64", "aarch64").
std::string host_machine();
// A warning for a CPU package whose kernels were compiled without vector
// instructions (AOTI_CPU_ISA "INVALID_VEC_ISA" or empty) while this CPU has
// them: it runs, but its kernels are scalar and several times slower than a
// package exported for this CPU. Empty when there is nothing to say.
std::string scalar_package_warning(const std::string& device_key, const std::string& isa);

}  // namespace aotirt
