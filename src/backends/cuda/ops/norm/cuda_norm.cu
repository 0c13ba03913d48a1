// CUDA kernels of _fused_rms_norm. Two shapes of work, both striding over
// rows so any number of rows fits the grid:
//  - rows of up to kWarpRowMax elements: one warp per row, eight rows per
//    block, so short rows (a head dimension) keep every lane busy;
//  - longer rows: one block per row, warps combined through shared memory.
// Each row is read twice (sum of squares, then the scaled output); the
// second read mostly hits L2. The 16-bit dtypes and float32 sum in float32,
// float64 in float64, as torch's CUDA kernel does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/norm/cuda_norm_kernels.h"

namespace aotirt {
namespace {

constexpr int kWarpThreads = 256;   // threads of a block of the warp-per-row kernel
constexpr int kBlockThreads = 512;  // threads of the block-per-row kernel
constexpr int64_t kWarpRowMax = 1024;
constexpr int64_t kMaxBlocks = 65535;  // further rows are reached by striding

// Storage type S, accumulation type A.
template <class S>
struct Acc {
  using A = float;
  __device__ static A load(S v) { return v; }
  __device__ static S store(A v) { return v; }
};
template <>
struct Acc<double> {
  using A = double;
  __device__ static A load(double v) { return v; }
  __device__ static double store(A v) { return v; }
};
template <>
struct Acc<__half> {
  using A = float;
  __device__ static A load(__half v) { return __half2float(v); }
  __device__ static __half store(A v) { return __float2half_rn(v); }
};
template <>
struct Acc<__nv_bfloat16> {
  using A = float;
  __device__ static A load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(A v) { return __float2bfloat16_rn(v); }
};

template <class A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float inv_sqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double inv_sqrt(double v) { return rsqrt(v); }

// The row's elements first, first + stride, ...: x * inv (* w), rounded once.
template <class S>
__device__ __forceinline__ void write_row(const S* __restrict__ xr, const S* __restrict__ w, S* __restrict__ yr,
                                          int64_t n, typename Acc<S>::A inv, int64_t first, int64_t stride) {
  using A = typename Acc<S>::A;
  for (int64_t i = first; i < n; i += stride) {
    A v = Acc<S>::load(xr[i]) * inv;
    if (w) v *= Acc<S>::load(w[i]);
    yr[i] = Acc<S>::store(v);
  }
}

template <class S>
__global__ void __launch_bounds__(kWarpThreads)
    rms_warp_rows(const S* __restrict__ x, const S* __restrict__ w, S* __restrict__ y,
                  typename Acc<S>::A* __restrict__ rstd, int64_t rows, int64_t n, typename Acc<S>::A eps) {
  using A = typename Acc<S>::A;
  constexpr int kWarps = kWarpThreads / 32;
  const int lane = threadIdx.x & 31;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kWarps;
  // Every lane of a warp has the same row, so the shuffles see the whole warp.
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < rows; r += step) {
    const S* xr = x + r * n;
    A ss = 0;
    for (int64_t i = lane; i < n; i += 32) {
      const A v = Acc<S>::load(xr[i]);
      ss += v * v;
    }
    ss = warp_sum(ss);
    // n == 0 gives 0 / 0, a NaN rstd, as torch's mean of nothing does.
    const A inv = inv_sqrt(ss / static_cast<A>(n) + eps);
    if (lane == 0) rstd[r] = inv;
    write_row(xr, w, y + r * n, n, inv, lane, 32);
  }
}

template <class S>
__global__ void __launch_bounds__(kBlockThreads)
    rms_block_rows(const S* __restrict__ x, const S* __restrict__ w, S* __restrict__ y,
                   typename Acc<S>::A* __restrict__ rstd, int64_t rows, int64_t n, typename Acc<S>::A eps) {
  using A = typename Acc<S>::A;
  constexpr int kWarps = kBlockThreads / 32;
  __shared__ A partial[kWarps];
  __shared__ A row_inv;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const S* xr = x + r * n;
    A ss = 0;
    for (int64_t i = threadIdx.x; i < n; i += kBlockThreads) {
      const A v = Acc<S>::load(xr[i]);
      ss += v * v;
    }
    ss = warp_sum(ss);
    if (lane == 0) partial[warp] = ss;
    __syncthreads();
    if (warp == 0) {
      A t = lane < kWarps ? partial[lane] : A(0);
      t = warp_sum(t);
      if (lane == 0) {
        const A inv = inv_sqrt(t / static_cast<A>(n) + eps);
        row_inv = inv;
        rstd[r] = inv;
      }
    }
    __syncthreads();
    write_row(xr, w, y + r * n, n, row_inv, threadIdx.x, kBlockThreads);
    // The next row rewrites partial and row_inv.
    __syncthreads();
  }
}

template <class S>
cudaError_t launch(const void* x, const void* w, void* y, void* rstd, int64_t rows, int64_t n, double eps,
                   cudaStream_t stream) {
  using A = typename Acc<S>::A;
  if (rows <= 0) return cudaSuccess;
  const S* px = static_cast<const S*>(x);
  const S* pw = static_cast<const S*>(w);
  S* py = static_cast<S*>(y);
  A* pr = static_cast<A*>(rstd);
  const A e = static_cast<A>(eps);
  if (n <= kWarpRowMax) {
    constexpr int64_t kWarps = kWarpThreads / 32;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((rows + kWarps - 1) / kWarps, kMaxBlocks));
    rms_warp_rows<S><<<blocks, kWarpThreads, 0, stream>>>(px, pw, py, pr, rows, n, e);
  } else {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, kMaxBlocks));
    rms_block_rows<S><<<blocks, kBlockThreads, 0, stream>>>(px, pw, py, pr, rows, n, e);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_launch_rms_norm(int dtype, const void* x, const void* w, void* y, void* rstd, int64_t rows,
                                 int64_t n, double eps, cudaStream_t stream) {
  switch (dtype) {
    case 5: return launch<__half>(x, w, y, rstd, rows, n, eps, stream);
    case 6: return launch<float>(x, w, y, rstd, rows, n, eps, stream);
    case 7: return launch<double>(x, w, y, rstd, rows, n, eps, stream);
    case 15: return launch<__nv_bfloat16>(x, w, y, rstd, rows, n, eps, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotirt
