// The CPU backend's configuration, read from the environment once, at first
// use, and nowhere else. Tests replace it with set_cpu_options_for_testing.
#pragma once

#include <string>

namespace aotirt {

struct CpuOptions {
  // The CBLAS library CPU GEMMs and convolutions load (AOTIRT_BLAS_LIBRARY;
  // default: the OpenBLAS build aotirt was configured with).
  std::string blas_library;
  // The oneDNN 3.x library frozen packages' ops load (AOTIRT_ONEDNN_LIBRARY;
  // default libdnnl.so.3, found through libaotirt.so's RUNPATH).
  std::string onednn_library;
  // The seed of the random ops' process-wide generator, as given
  // (AOTIRT_SEED; empty: a random seed). ops::parse_random_seed reads it.
  std::string random_seed;
  // torch's CPU capability as requested (ATEN_CPU_CAPABILITY; empty: torch
  // detects it). It fixes the layout of torch's CPU int4 weight packing,
  // which cpu_quant.cpp reads (package/cpu_features.h).
  std::string aten_cpu_capability;
};

const CpuOptions& cpu_options();
// Replaces the options for the rest of the process (libraries already loaded
// stay loaded). Not for concurrent use with the ops.
void set_cpu_options_for_testing(const CpuOptions& options);

}  // namespace aotirt
