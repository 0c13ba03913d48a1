// Host CPU checks for packages, compared with the flags the kernel reports in
// /proc/cpuinfo (an independent view of what this CPU can run).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "package/cpu_features.h"

namespace aotirt {
namespace {

std::set<std::string> cpuinfo_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
    std::set<std::string> flags;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::string w;
    while (words >> w) flags.insert(w);
    return flags;
  }
  return {};
}

// The Inductor ISA names this host can run, per /proc/cpuinfo.
std::set<std::string> expected_host_isas() {
  std::set<std::string> f = cpuinfo_flags();
  std::set<std::string> isas;
  if (f.count("avx2") && f.count("fma")) isas.insert("AVX2");
  if (f.count("avx512f") && f.count("avx512bw") && f.count("avx512vl") && f.count("avx512dq")) isas.insert("AVX512");
  if (f.count("avx512_vnni")) isas.insert("AVX512_VNNI");
  if (f.count("amx_tile")) isas.insert("AMX_TILE");
  if (f.count("asimd")) {
    isas.insert("ASIMD");
    isas.insert("NEON");
  }
  return isas;
}

std::set<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::set<std::string> out;
  std::string w;
  while (in >> w) out.insert(w);
  return out;
}

TEST(CpuFeaturesTest, EmptyAndGenericIsasAreAccepted) {
  EXPECT_TRUE(check_cpu_isa("").ok());
  EXPECT_TRUE(check_cpu_isa("   ").ok());
  EXPECT_TRUE(check_cpu_isa("INVALID_VEC_ISA").ok());
}

TEST(CpuFeaturesTest, HostIsaMatchesProcCpuinfo) {
  std::set<std::string> expected = expected_host_isas();
  std::string host = host_cpu_isa();
  if (expected.empty())
    EXPECT_EQ(host, "scalar");
  else
    EXPECT_EQ(words_of(host), expected) << "host_cpu_isa() = " << host;
}

TEST(CpuFeaturesTest, HostIsasAreAccepted) {
  for (const std::string& isa : expected_host_isas()) EXPECT_TRUE(check_cpu_isa(isa).ok()) << isa;
  std::string host = host_cpu_isa();
  if (host != "scalar") {
    EXPECT_TRUE(check_cpu_isa(host).ok()) << host;
    // Inductor's own spelling for the strings it writes, and other separators.
    std::string piped = host;
    for (char& c : piped)
      if (c == ' ') c = '|';
    EXPECT_TRUE(check_cpu_isa(piped).ok()) << piped;
  }
}

TEST(CpuFeaturesTest, OtherArchitecturesAreIncompatible) {
  std::set<std::string> host = expected_host_isas();
  for (const char* isa : {"NEON", "ASIMD", "VSX", "ZVECTOR", "SVE256", "RISCV_V"}) {
    if (host.count(isa)) continue;
    Status s = check_cpu_isa(isa);
    ASSERT_FALSE(s.ok()) << isa;
    EXPECT_EQ(s.code(), StatusCode::kIncompatible);
    EXPECT_NE(s.message().find(isa), std::string::npos) << s.message();
  }
}

TEST(CpuFeaturesTest, MissingX86IsasAreIncompatible) {
  std::set<std::string> host = expected_host_isas();
  int checked = 0;
  for (const char* isa : {"AVX2", "AVX512", "AVX512_VNNI", "AMX_TILE"}) {
    if (host.count(isa)) continue;
    ++checked;
    Status s = check_cpu_isa(isa);
    ASSERT_FALSE(s.ok()) << isa;
    EXPECT_EQ(s.code(), StatusCode::kIncompatible);
    EXPECT_NE(s.message().find(isa), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("this CPU lacks it"), std::string::npos) << s.message();
  }
  if (checked == 0) GTEST_SKIP() << "this host has every x86 ISA aotirt knows";
}

TEST(CpuFeaturesTest, OneMissingIsaAmongSeveralFails) {
  std::string host = host_cpu_isa();
  Status s = check_cpu_isa((host == "scalar" ? std::string() : host) + " VSX");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("VSX"), std::string::npos);
}

TEST(CpuFeaturesTest, HostMachine) {
  std::string m = host_machine();
  EXPECT_FALSE(m.empty());
#if defined(__x86_64__)
  EXPECT_EQ(m, "x86_64");
#elif defined(__aarch64__)
  EXPECT_EQ(m, "aarch64");
#endif
}

TEST(CpuFeaturesTest, ScalarCpuPackagesWarnOnVectorHosts) {
  const bool vector_host = host_cpu_isa() != "scalar";
  for (const char* isa : {"INVALID_VEC_ISA", "", "NONE"}) {
    std::string w = scalar_package_warning("cpu", isa);
    if (vector_host) {
      EXPECT_NE(w.find("without vector instructions"), std::string::npos) << isa;
      EXPECT_NE(w.find(host_cpu_isa()), std::string::npos) << w;
    } else {
      EXPECT_EQ(w, "") << isa;
    }
  }
  // Vectorised CPU packages and other devices' packages get no warning.
  EXPECT_EQ(scalar_package_warning("cpu", "AVX2"), "");
  EXPECT_EQ(scalar_package_warning("cpu", "AVX512 AVX512_VNNI"), "");
  EXPECT_EQ(scalar_package_warning("cuda", ""), "");
  EXPECT_EQ(scalar_package_warning("cuda", "INVALID_VEC_ISA"), "");
}

// torch's choice of kernel set (which fixes its int4 weight packing): the
// ATEN_CPU_CAPABILITY value when it names one, else AVX512 with AVX512VL,
// BW, DQ and FMA, AVX2 with AVX2 and FMA, DEFAULT below (x86).
TEST(CpuFeaturesTest, AtenCapabilityFollowsTorchsRule) {
  EXPECT_EQ(aten_cpu_capability("default"), AtenCpuCapability::kDefault);
  const std::string got = aten_cpu_capability_name(aten_cpu_capability(""));
  EXPECT_EQ(aten_cpu_capability("no-such-capability"), aten_cpu_capability("")) << "unknown values detect";
#if defined(__x86_64__)
  // Taken as asked, whatever the CPU has.
  EXPECT_EQ(aten_cpu_capability("avx2"), AtenCpuCapability::kAvx2);
  EXPECT_EQ(aten_cpu_capability("avx512"), AtenCpuCapability::kAvx512);
  std::set<std::string> f = cpuinfo_flags();
  std::string expected = "DEFAULT";
  if (f.count("avx512vl") && f.count("avx512bw") && f.count("avx512dq") && f.count("fma"))
    expected = "AVX512";
  else if (f.count("avx2") && f.count("fma"))
    expected = "AVX2";
  EXPECT_EQ(got, expected);
#else
  EXPECT_TRUE(got == "DEFAULT" || got == "SVE256") << got;
#endif
}

// aotirt's own kernels: the best set the CPU has, capped by the capability
// asked for, never above the CPU's.
TEST(CpuFeaturesTest, KernelIsaIsCappedByTheCapability) {
  EXPECT_EQ(cpu_kernel_isa("default"), CpuKernelIsa::kPortable);
  EXPECT_STREQ(cpu_kernel_isa_name(CpuKernelIsa::kPortable), "portable");
#if defined(__x86_64__)
  std::set<std::string> f = cpuinfo_flags();
  const bool avx512 = f.count("avx512f") && f.count("avx512vl") && f.count("avx512bw") && f.count("avx512dq") &&
                      f.count("fma");
  const bool avx2 = f.count("avx2") && f.count("fma");
  const CpuKernelIsa host = avx512 ? CpuKernelIsa::kAvx512 : avx2 ? CpuKernelIsa::kAvx2 : CpuKernelIsa::kPortable;
  EXPECT_EQ(cpu_kernel_isa(""), host) << cpu_kernel_isa_name(cpu_kernel_isa(""));
  EXPECT_EQ(cpu_kernel_isa("no-such-capability"), host);
  EXPECT_EQ(cpu_kernel_isa("avx512"), host) << "never above the CPU";
  EXPECT_EQ(cpu_kernel_isa("avx2"), avx2 ? CpuKernelIsa::kAvx2 : CpuKernelIsa::kPortable);
#else
  EXPECT_EQ(cpu_kernel_isa(""), CpuKernelIsa::kPortable);
#endif
}

}  // namespace
}  // namespace aotirt
