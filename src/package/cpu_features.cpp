#include "package/cpu_features.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#include "base/status.h"

namespace aotirt {
namespace {

struct IsaRequirement {
  const char* token;
  bool (*supported)();
};

#if defined(__x86_64__) || defined(__i386__)
bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
bool has_avx512_vnni() { return __builtin_cpu_supports("avx512vnni"); }
bool has_amx() {
  // GCC 12's builtin does not know AMX; read cpuid leaf 7 EDX bit 24 (AMX-TILE).
  unsigned a, b, c, d;
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
  return (d >> 24) & 1u;
}
bool has_asimd() { return false; }
#else
bool has_avx2() { return false; }
bool has_avx512() { return false; }
bool has_avx512_vnni() { return false; }
bool has_amx() { return false; }
// Advanced SIMD is part of every AArch64 CPU. Inductor names both its NEON
// and its SVE256 kernels "ASIMD", so SVE cannot be told apart here.
#if defined(__aarch64__)
bool has_asimd() { return true; }
#else
bool has_asimd() { return false; }
#endif
#endif

const IsaRequirement kRequirements[] = {
    {"AVX2", has_avx2},
    {"AVX512", has_avx512},
    {"AVX512_VNNI", has_avx512_vnni},
    {"AMX_TILE", has_amx},
    {"ASIMD", has_asimd},
    {"NEON", has_asimd},
};

std::vector<std::string> split_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '|' || c == ',' || c == ';') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

std::string host_cpu_isa() {
  std::string out;
  for (const auto& r : kRequirements)
    if (r.supported()) out += (out.empty() ? "" : " ") + std::string(r.token);
  return out.empty() ? "scalar" : out;
}

std::string host_machine() {
  struct utsname u;
  if (uname(&u) != 0) return "unknown";
  return u.machine;
}

std::string scalar_package_warning(const std::string& device_key, const std::string& isa) {
  if (device_key != "cpu") return std::string();
  for (const std::string& token : split_tokens(isa))
    if (token != "INVALID_VEC_ISA" && token != "NONE" && token != "DEFAULT") return std::string();
  const std::string host = host_cpu_isa();
  if (host == "scalar") return std::string();
  return fmt::format(
      "the package's CPU kernels were compiled without vector instructions (ISA {}), but this CPU has {}: "
      "they run several times slower than they could. Inductor's vector-ISA probe was probably cached by a "
      "lean export; export again after aotirt.prepare_vec_isa() (docs/exporting.md)",
      isa.empty() ? "none" : isa, host);
}

Status check_cpu_isa(const std::string& isa) {
  for (const std::string& token : split_tokens(isa)) {
    if (token == "INVALID_VEC_ISA" || token == "NONE" || token == "DEFAULT") continue;
    bool known = false;
    for (const auto& r : kRequirements) {
      if (token != r.token) continue;
      known = true;
      if (!r.supported())
        return AOTIRT_STATUS(kIncompatible,
                             "the package's CPU kernels were compiled for {} but this CPU lacks it (it has: "
                             "{}); export the model again on a machine like this one",
                             token, host_cpu_isa());
    }
    // Inductor's other ISAs (VSX, ZVECTOR) belong to other machines.
    if (!known)
      return AOTIRT_STATUS(kIncompatible, "the package's CPU kernels use the {} ISA, which this {} CPU lacks",
                           token, host_machine());
  }
  return Status();
}

namespace {

#if defined(__x86_64__) || defined(__i386__)
AtenCpuCapability detect_aten_capability() {
  // torch asks cpuinfo for AVX512VL, BW, DQ and FMA3 (F is implied by VL).
  if (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
    return AtenCpuCapability::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return AtenCpuCapability::kAvx2;
  return AtenCpuCapability::kDefault;
}
#elif defined(__aarch64__) && defined(__linux__)
// SVE with 256-bit vectors and BF16: what torch needs for its SVE256 kernels.
bool has_sve256_bf16() {
  constexpr unsigned long kHwcapSve = 1ul << 22, kHwcap2Bf16 = 1ul << 14;
  if (!(getauxval(AT_HWCAP) & kHwcapSve) || !(getauxval(AT_HWCAP2) & kHwcap2Bf16)) return false;
#if defined(PR_SVE_GET_VL)
  const int vl = prctl(PR_SVE_GET_VL);  // bytes, in the low bits
  return vl >= 0 && (vl & PR_SVE_VL_LEN_MASK) * 8 == 256;
#else
  return false;
#endif
}
AtenCpuCapability detect_aten_capability() {
  return has_sve256_bf16() ? AtenCpuCapability::kSve256 : AtenCpuCapability::kDefault;
}
#else
AtenCpuCapability detect_aten_capability() { return AtenCpuCapability::kDefault; }
#endif

}  // namespace

AtenCpuCapability aten_cpu_capability(const std::string& requested) {
  if (requested == "default") return AtenCpuCapability::kDefault;
#if defined(__x86_64__) || defined(__i386__)
  // Taken as asked, without asking the CPU.
  if (requested == "avx512") return AtenCpuCapability::kAvx512;
  if (requested == "avx2") return AtenCpuCapability::kAvx2;
#elif defined(__aarch64__) && defined(__linux__)
  // Granted only where the CPU has it; DEFAULT otherwise.
  if (requested == "sve256") return has_sve256_bf16() ? AtenCpuCapability::kSve256 : AtenCpuCapability::kDefault;
#endif
  // torch warns about any other value and detects as if it were unset.
  return detect_aten_capability();
}

CpuKernelIsa cpu_kernel_isa(const std::string& requested) {
#if defined(__x86_64__)
  CpuKernelIsa host = CpuKernelIsa::kPortable;
  if (has_avx512() && __builtin_cpu_supports("fma"))
    host = CpuKernelIsa::kAvx512;
  else if (has_avx2())
    host = CpuKernelIsa::kAvx2;
  CpuKernelIsa cap = CpuKernelIsa::kPortable;
  switch (aten_cpu_capability(requested)) {
    case AtenCpuCapability::kAvx512:
      cap = CpuKernelIsa::kAvx512;
      break;
    case AtenCpuCapability::kAvx2:
      cap = CpuKernelIsa::kAvx2;
      break;
    default:
      break;
  }
  return std::min(host, cap);
#else
  (void)requested;
  return CpuKernelIsa::kPortable;
#endif
}

const char* cpu_kernel_isa_name(CpuKernelIsa isa) {
  switch (isa) {
    case CpuKernelIsa::kAvx2:
      return "AVX2";
    case CpuKernelIsa::kAvx512:
      return "AVX512";
    case CpuKernelIsa::kPortable:
      break;
  }
  return "portable";
}

const char* aten_cpu_capability_name(AtenCpuCapability c) {
  switch (c) {
    case AtenCpuCapability::kAvx2:
      return "AVX2";
    case AtenCpuCapability::kAvx512:
      return "AVX512";
    case AtenCpuCapability::kSve256:
      return "SVE256";
    case AtenCpuCapability::kDefault:
      break;
  }
  return "DEFAULT";
}

}  // namespace aotirt
