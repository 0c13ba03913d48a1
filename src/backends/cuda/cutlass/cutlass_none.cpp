// Built instead of the CUTLASS instantiations when the build has none
// (no CUTLASS headers: every kernel below), or has CUTLASS but cannot build
// the Hopper (sm_90a) ones (a CUDA toolkit before 12.0: the sm90 entries
// only, with AOTIRT_CUTLASS_STUB_SM90_ONLY). Without them float32
// convolutions stay on cuDNN and float32 and bfloat16 GEMMs of more than
// eight rows on cuBLASLt; without the Hopper ones the Ampere kernels stay.
#include "backends/cuda/cutlass/cuda_conv_tf32_entry.h"
#include "backends/cuda/cutlass/cuda_gemm_bf16_entry.h"
#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"

namespace aotirt {

const CudaConvKernelEntry* cuda_conv_tf32_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

const CudaConvKernelEntry* cuda_conv_tf32_gemm_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

const CudaBf16KernelEntry* cuda_gemm_bf16_sm90_entries(int* count) {
  *count = 0;
  return nullptr;
}

#if !AOTIRT_CUTLASS_STUB_SM90_ONLY

int cuda_conv_tf32_config_count() { return 0; }
CudaConvConfig cuda_conv_tf32_config(int) { return CudaConvConfig{}; }
cudaError_t cuda_conv_tf32_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_conv_tf32_check(int, const CudaConvProblem&, int) { return cudaErrorNotSupported; }
cudaError_t cuda_conv_tf32_launch(int, const CudaConvProblem&, int, int*, float*, cudaStream_t) {
  return cudaErrorNotSupported;
}

int cuda_bf16_config_count() { return 0; }
CudaBf16Config cuda_bf16_config(int) { return CudaBf16Config{}; }
cudaError_t cuda_bf16_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_bf16_launch(int, const CudaBf16Problem&, int, float*, cudaStream_t) { return cudaErrorNotSupported; }
cudaError_t cuda_bf16_workspace_bytes(int, const CudaBf16Problem&, int, size_t*) { return cudaErrorNotSupported; }

int cuda_f32x3_config_count() { return 0; }
CudaF32x3Config cuda_f32x3_config(int) { return CudaF32x3Config{}; }
cudaError_t cuda_f32x3_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_f32x3_launch(int, const CudaF32x3Problem&, int, int*, cudaStream_t) {
  return cudaErrorNotSupported;
}

#endif

}  // namespace aotirt
