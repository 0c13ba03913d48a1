// No Hopper convolution kernels: a CUDA toolkit before 12.0 cannot build
// them (cuda_conv_tf32_sm90.cu, cuda_conv_tf32_gemm_sm90.cu); the Ampere
// ones stay.
#include "backends/cuda/ops/cutlass/cuda_conv_tf32_entry.h"

namespace aotirt {

const CudaConvKernelEntry* cuda_conv_tf32_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

const CudaConvKernelEntry* cuda_conv_tf32_gemm_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

}  // namespace aotirt
