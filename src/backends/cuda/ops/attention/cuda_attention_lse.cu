// Finishes the memory-efficient attention forward's logsumexp as torch's
// kernel leaves it: +inf in the padding past the last query, and 0 (not
// aotirt's -inf) for a query whose keys were all masked out.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cuda/ops/attention/cuda_attention_kernel.h"

namespace aotirt {
namespace {

__global__ void lse_finish_kernel(float* lse, int64_t rows, int64_t len, int64_t padded_len, bool masked_to_zero) {
  const int64_t n = rows * padded_len;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < n;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t col = idx % padded_len;
    if (col >= len) {
      lse[idx] = INFINITY;
    } else if (masked_to_zero && lse[idx] == -INFINITY) {
      lse[idx] = 0.f;
    }
  }
}

}  // namespace

cudaError_t cuda_launch_attention_lse_finish(float* lse, int64_t rows, int64_t len, int64_t padded_len,
                                             bool masked_to_zero, cudaStream_t stream) {
  const int64_t n = rows * padded_len;
  if (n <= 0) return cudaSuccess;
  constexpr int kThreadsPerBlock = 256;
  // A grid-stride loop keeps the grid small whatever the size.
  const int64_t blocks = std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, 4096);
  lse_finish_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(lse, rows, len, padded_len,
                                                                                   masked_to_zero);
  return cudaGetLastError();
}

}  // namespace aotirt
