// No Hopper bfloat16 GEMM kernels: a CUDA toolkit before 12.0 cannot build
// them (cuda_gemm_bf16_sm90.cu); the Ampere ones stay.
#include "backends/cuda/ops/cutlass/cuda_gemm_bf16_entry.h"

namespace aotirt {

const CudaBf16KernelEntry* cuda_gemm_bf16_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

}  // namespace aotirt
