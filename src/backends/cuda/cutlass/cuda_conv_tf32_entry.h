// One compiled kernel of cuda_conv_tf32.h's table: its shape and the two
// calls behind cuda_conv_tf32_check and cuda_conv_tf32_launch. Shared by
// the Ampere kernels' file (cuda_conv_tf32.cu), which owns the table, and
// the Hopper kernels' (cuda_conv_tf32_sm90.cu, cuda_conv_tf32_gemm_sm90.cu),
// which are built for sm_90a alone and hand their entries over.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/ops/conv/cuda_conv_tf32.h"

namespace aotirt {

struct CudaConvKernelEntry {
  CudaConvConfig config;
  const void* kernel;  // for the occupancy query: no image on a GPU that cannot run it
  cudaError_t (*check)(const CudaConvProblem&, int split);
  cudaError_t (*launch)(const CudaConvProblem&, int split, int* semaphores, float* partials, cudaStream_t stream);
};

// A parallel split's second kernel (cuda_conv_tf32.cu): y = the |split|
// parts of |partials| (each n * p * q * k floats, 16-byte aligned) added in
// slice order, plus the bias if any, queued on |stream|.
cudaError_t cuda_conv_tf32_add_slices(const CudaConvProblem& p, int split, const float* partials,
                                      cudaStream_t stream);

// The Hopper kernels (|*count| of them; 0 where the toolkit cannot build
// them). The table is static: borrowed for the life of the process.
const CudaConvKernelEntry* cuda_conv_tf32_sm90_entries(int* count);
// The Hopper GEMM kernels for 1x1 convolutions (cuda_conv_tf32_gemm_sm90.cu),
// likewise.
const CudaConvKernelEntry* cuda_conv_tf32_gemm_sm90_entries(int* count);

}  // namespace aotirt
