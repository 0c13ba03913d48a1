// cuda_gemv_rows_launch (cuda_gemm_f32x3.h): float32 products of one to
// eight rows, D[i, j] = alpha * sum_k A[i, k] * B[k, j] + beta * C[i, j],
// B column-major (k contiguous). Written here rather than taken from
// cuBLASLt: a float32 model whose other GEMMs run on aotirt's kernels would
// otherwise load cuBLASLt for its classifier or its batch-8 layers alone,
// and hold its host memory. A warp per output column j reads
// B's column once, 16 bytes a lane where rows allow, with every row's
// partial sum in registers (plain float32 FMAs, rounded as cuBLAS's float32
// kernels round), then sums its lanes with shuffles.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"

namespace aotirt {
namespace {

constexpr int kWarpsPerBlock = 8;

template <bool kVec>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    gemv_rows_kernel(CudaF32x3Problem p) {
  const int j = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (j >= p.n) return;
  const float* col = p.b + static_cast<int64_t>(j) * p.ldb;
  float acc[kCudaGemvMaxRows];
#pragma unroll
  for (int i = 0; i < kCudaGemvMaxRows; ++i) acc[i] = 0.f;
  if (kVec) {
    // Four float4 loads of B in flight a lane before they are used.
#pragma unroll 4
    for (int kk = lane * 4; kk < p.k; kk += 128) {
      const float4 bv = *reinterpret_cast<const float4*>(col + kk);
#pragma unroll
      for (int i = 0; i < kCudaGemvMaxRows; ++i) {
        if (i >= p.m) break;
        const float4 av = *reinterpret_cast<const float4*>(p.a + i * p.lda + kk);
        acc[i] = fmaf(av.x, bv.x, acc[i]);
        acc[i] = fmaf(av.y, bv.y, acc[i]);
        acc[i] = fmaf(av.z, bv.z, acc[i]);
        acc[i] = fmaf(av.w, bv.w, acc[i]);
      }
    }
  } else {
#pragma unroll 4
    for (int kk = lane; kk < p.k; kk += 32) {
      const float bv = col[kk];
#pragma unroll
      for (int i = 0; i < kCudaGemvMaxRows; ++i) {
        if (i >= p.m) break;
        acc[i] = fmaf(p.a[i * p.lda + kk], bv, acc[i]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kCudaGemvMaxRows; ++i) {
    float v = acc[i];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    acc[i] = v;
  }
  if (lane == 0) {
    for (int i = 0; i < p.m; ++i) {
      float v = p.alpha * acc[i];
      if (p.beta != 0.f) v += p.beta * p.c[i * p.ldc + j];
      p.d[i * p.ldd + j] = v;
    }
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

cudaError_t cuda_gemv_rows_launch(const CudaF32x3Problem& p, cudaStream_t stream) {
  if (p.m < 1 || p.m > kCudaGemvMaxRows || p.n < 1 || p.k < 1 || p.batch != 1 || p.b_row_major ||
      (p.beta != 0.f && !p.c))
    return cudaErrorInvalidValue;
  const bool vec = p.k % 4 == 0 && p.lda % 4 == 0 && p.ldb % 4 == 0 && aligned16(p.a) && aligned16(p.b);
  const dim3 grid((p.n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  if (vec)
    gemv_rows_kernel<true><<<grid, 32 * kWarpsPerBlock, 0, stream>>>(p);
  else
    gemv_rows_kernel<false><<<grid, 32 * kWarpsPerBlock, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace aotirt
