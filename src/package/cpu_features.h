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

// The kernel set torch's ATen picks on this machine ("CPU capability"). A few
// ops' data formats depend on it, not only their speed: the int4 weights
// written by _convert_weight_to_int4pack_for_cpu are laid out for the vector
// width of the kernels that will read them. A package's weights are packed
// by torch on the machine that loads them (or by aotirt itself mirroring
// torch), so aotirt has to read them the way torch on this CPU would.
enum class AtenCpuCapability { kDefault, kAvx2, kAvx512, kSve256 };

// torch's rule, given the ATEN_CPU_CAPABILITY value (|requested|, empty
// when unset; the CPU backend reads it once, in cpu_options): a recognised
// value wins ("default", and "avx2" / "avx512" on x86, "sve256" on AArch64;
// torch takes it even where the CPU lacks the ISA); otherwise x86 gets
// AVX512 when the CPU has AVX512VL, AVX512BW, AVX512DQ and FMA, AVX2 when it
// has AVX2 and FMA, and DEFAULT below that; AArch64 gets SVE256 when its SVE
// vectors are 256 bits long, DEFAULT otherwise.
AtenCpuCapability aten_cpu_capability(const std::string& requested);
// Its name as torch.backends.cpu.get_cpu_capability() spells it.
const char* aten_cpu_capability_name(AtenCpuCapability c);

// The vector ISA aotirt's own CPU kernels (few-row GEMMs, weight-only
// products) are compiled for and picked at run time.
enum class CpuKernelIsa { kPortable, kAvx2, kAvx512 };
// The set they run on: the best this CPU has, capped by torch's capability
// rule for |requested| (ATEN_CPU_CAPABILITY), so that one setting limits
// torch's kernels and aotirt's alike and tests can run every variant on one
// machine. Never above what the CPU has: "avx512" on an AVX2 CPU gives AVX2.
CpuKernelIsa cpu_kernel_isa(const std::string& requested);
const char* cpu_kernel_isa_name(CpuKernelIsa isa);

}  // namespace aotirt
