// Built instead of cuda_gemm_f32x3.cu when the build has no CUTLASS: no
// 3xTF32 kernels, so float32 GEMMs of more than eight rows stay on cuBLASLt.
#include "backends/cuda/ops/cuda_gemm_f32x3.h"

namespace aotirt {

int cuda_f32x3_config_count() { return 0; }
CudaF32x3Config cuda_f32x3_config(int) { return CudaF32x3Config{}; }
cudaError_t cuda_f32x3_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_f32x3_launch(int, const CudaF32x3Problem&, int, int*, cudaStream_t) {
  return cudaErrorNotSupported;
}

}  // namespace aotirt
