// How many blocks of a kernel fit on one multiprocessor, for the choosers of
// aotirt's GEMM kernels (cuda_gemm_f32x3.h, cuda_gemm_bf16.h), how many
// multiprocessors the current GPU has, for CUTLASS's Hopper kernels, and
// raising a kernel's shared-memory limit. Plain
// CUDA runtime calls, so the CUTLASS files include nothing else of aotirt's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace aotirt {

// Blocks of |kernel| (threads a block, dynamic shared memory) that fit on
// one multiprocessor; raises the kernel's shared-memory limit first where it
// needs more than the default 48 KiB. An error (no image for this GPU, say)
// is returned as it is.
inline cudaError_t cuda_kernel_blocks_per_sm(const void* kernel, int threads, int smem_bytes, int* blocks) {
  if (smem_bytes > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (err != cudaSuccess) return err;
  }
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem_bytes);
}

// Lets |kernel| (on the current device) use |bytes| of dynamic shared memory
// above the default 48 KiB; remembers what was set, since the call costs
// microseconds (defined in cuda_attention.cu).
cudaError_t cuda_reserve_dynamic_smem(const void* kernel, size_t bytes);

// The current device's multiprocessors; 0 when the runtime cannot say.
inline int cuda_current_sm_count() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 0;
  return count;
}

}  // namespace aotirt
