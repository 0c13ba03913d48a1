// Built instead of cuda_conv_tf32.cu when the build has no CUTLASS: no TF32
// convolution kernels, so float32 convolutions stay on cuDNN.
#include "backends/cuda/ops/cuda_conv_tf32.h"

namespace aotirt {

int cuda_conv_tf32_config_count() { return 0; }
CudaConvConfig cuda_conv_tf32_config(int) { return CudaConvConfig{}; }
cudaError_t cuda_conv_tf32_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_conv_tf32_check(int, const CudaConvProblem&, int) { return cudaErrorNotSupported; }
cudaError_t cuda_conv_tf32_launch(int, const CudaConvProblem&, int, int*, float*, cudaStream_t) {
  return cudaErrorNotSupported;
}

}  // namespace aotirt
