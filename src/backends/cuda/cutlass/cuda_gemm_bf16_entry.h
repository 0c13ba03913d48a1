// One compiled kernel of cuda_gemm_bf16.h's table: its shape and the calls
// behind cuda_bf16_launch and cuda_bf16_workspace_bytes. Shared by the
// Ampere kernels' file (cuda_gemm_bf16.cu), which owns the table, and the
// Hopper kernels' (cuda_gemm_bf16_sm90.cu), which is built for sm_90a alone
// and hands its entries over.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"

namespace aotirt {

struct CudaBf16KernelEntry {
  CudaBf16Config config;
  const void* kernel;  // for the occupancy query: no image on a GPU that cannot run it
  cudaError_t (*launch)(const CudaBf16Problem&, int split, float* workspace, cudaStream_t stream);
  cudaError_t (*workspace_bytes)(const CudaBf16Problem&, int split, size_t* bytes);
};

// The Hopper kernels (|*count| of them; 0 where the toolkit cannot build
// them). The table is static: borrowed for the life of the process.
const CudaBf16KernelEntry* cuda_gemm_bf16_sm90_entries(int* count);

}  // namespace aotirt
