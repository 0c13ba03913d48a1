// Built instead of cuda_gemm_bf16.cu when the build has no CUTLASS: no
// bfloat16 tensor-core kernels, so bfloat16 GEMMs of more than eight rows
// stay on cuBLASLt.
#include "backends/cuda/ops/cuda_gemm_bf16.h"

namespace aotirt {

int cuda_bf16_config_count() { return 0; }
CudaBf16Config cuda_bf16_config(int) { return CudaBf16Config{}; }
cudaError_t cuda_bf16_blocks_per_sm(int, int*) { return cudaErrorNotSupported; }
cudaError_t cuda_bf16_launch(int, const CudaBf16Problem&, int, float*, cudaStream_t) { return cudaErrorNotSupported; }
cudaError_t cuda_bf16_workspace_bytes(int, const CudaBf16Problem&, int, size_t*) { return cudaErrorNotSupported; }

}  // namespace aotirt
