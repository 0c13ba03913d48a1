// cuda_bf16_gemv_rows_launch (cuda_gemm_bf16.h): bfloat16 products of one
// to eight rows, D[i, j] = alpha * sum_k A[i, k] * B[k, j] + beta * C[i, j],
// with float32 sums and one rounding to bfloat16. Written here rather than
// taken from cuBLASLt so that a bfloat16 decode step, whose GEMMs are all of
// one row, loads no cuBLASLt. Both kernels stream B, the weights, once:
// - B column-major (k contiguous): a warp per output column, or per slice
//   of k when the columns are too few to fill the GPU (then the slices'
//   sums meet in shared memory); 16-byte loads along k, eight in flight per
//   lane, the lanes' sums added with shuffles;
// - B row-major ([k, n], GPT-2's Conv1D weights): a block per 32 columns;
//   each thread reads 8 columns of every 64th row of B (16 bytes), and the
//   64 row slices' sums are added in shared memory.
// Launched with programmatic dependent launch (Hopper and later), the
// column-major kernel issues its first loads of B before it waits for the
// kernel ahead; the others wait first.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/launch/cuda_dependent_launch.h"
#include "backends/cuda/ops/matmul/cuda_bf16_loads.cuh"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"

namespace aotirt {
namespace {

constexpr int kRows = kCudaBf16GemvMaxRows;
constexpr int kColWarps = 8;    // column-major: warps (columns) a block
constexpr int kRowGroups = 4;   // row-major: 8-column groups a block
constexpr int kRowSlices = 64;  // row-major: k slices a block
constexpr int kRowCols = kRowGroups * 8;

__device__ __forceinline__ float bf(const void* p, int64_t i) {
  return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
}

using bf16_loads::load16;
using bf16_loads::unpack8;

__device__ __forceinline__ void store(const CudaBf16Problem& p, int i, int j, float acc) {
  float v = p.alpha * acc;
  if (p.beta != 0.f) v += p.beta * bf(p.c, static_cast<int64_t>(i) * p.ldc + j);
  static_cast<__nv_bfloat16*>(p.d)[static_cast<int64_t>(i) * p.ldd + j] = __float2bfloat16_rn(v);
}

template <bool kVec>
__global__ void __launch_bounds__(32 * kColWarps) gemv_col_kernel(CudaBf16Problem p) {
  dependency_wait();
  const int j = blockIdx.x * kColWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (j >= p.n) return;
  const __nv_bfloat16* col = static_cast<const __nv_bfloat16*>(p.b) + static_cast<int64_t>(j) * p.ldb;
  const __nv_bfloat16* a = static_cast<const __nv_bfloat16*>(p.a);
  float acc[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) acc[i] = 0.f;
  if (kVec) {
#pragma unroll 2
    for (int kk = lane * 8; kk < p.k; kk += 256) {
      float bv[8], av[8];
      unpack8(*reinterpret_cast<const uint4*>(col + kk), bv);
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        if (i >= p.m) break;
        unpack8(*reinterpret_cast<const uint4*>(a + i * p.lda + kk), av);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[i] = fmaf(av[e], bv[e], acc[i]);
      }
    }
  } else {
    for (int kk = lane; kk < p.k; kk += 32) {
      const float bv = __bfloat162float(col[kk]);
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        if (i >= p.m) break;
        acc[i] = fmaf(__bfloat162float(a[i * p.lda + kk]), bv, acc[i]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    float v = acc[i];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    acc[i] = v;
  }
  if (lane == 0)
    for (int i = 0; i < p.m; ++i) store(p, i, j, acc[i]);
}

// The column-major kernel with 16-byte loads: KS warps share a column, each
// summing one slice of k (whole multiples of 256 elements, a warp's one load
// a lane), so that a few hundred columns still make enough blocks; each
// lane keeps eight loads of B in flight (a 2048-long column in one go).
constexpr int kColDepth = 8;                 // 16-byte loads a lane keeps in flight
constexpr int kColPass = kColDepth * 32 * 8;  // elements of k a warp's pass loads

template <int KS, bool kOneRow>
__global__ void __launch_bounds__(32 * kColWarps) gemv_col_split_kernel(CudaBf16Problem p) {
  constexpr int kCols = kColWarps / KS;
  constexpr int kDepth = kColDepth;
  __shared__ float part[kColWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = blockIdx.x * kCols + warp / KS;
  const int slice = warp % KS;
  const int64_t per = (p.k + KS * 256 - 1) / (KS * 256) * 256;
  const int64_t k0 = slice * per, k1 = min(static_cast<int64_t>(p.k), k0 + per);
  const __nv_bfloat16* a = static_cast<const __nv_bfloat16*>(p.a);
  float acc[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) acc[i] = 0.f;
  dependents_may_start();
  // The weights never depend on the kernel ahead: the first loads of B go
  // out before the wait for it (under a dependent launch, while it runs),
  // and A, which it may have written, is read after.
  bool waited = false;
  if (j < p.n) {
    const __nv_bfloat16* col = static_cast<const __nv_bfloat16*>(p.b) + static_cast<int64_t>(j) * p.ldb;
    for (int64_t kk = k0 + lane * 8; kk < k1; kk += kDepth * 256) {
      uint4 bv[kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int64_t e = kk + u * 256;
        bv[u] = e < k1 ? __ldg(reinterpret_cast<const uint4*>(col + e)) : make_uint4(0, 0, 0, 0);
      }
      if (!waited) {
        dependency_wait();
        waited = true;
      }
      if (kOneRow) {
        // One row (a decode step): its kDepth loads of A go out together,
        // not one at a time inside the loop over B's, each waited for.
        uint4 av[kDepth];
#pragma unroll
        for (int u = 0; u < kDepth; ++u) {
          const int64_t e = kk + u * 256;
          av[u] = e < k1 ? load16(a + e) : make_uint4(0, 0, 0, 0);
        }
        // Every load's value feeds one branch ahead of the first product,
        // so the compiler cannot sink a load next to its use: all 2 x kDepth
        // are in flight at once. (The branch is never taken: m is 1.)
        uint32_t all = 0;
#pragma unroll
        for (int u = 0; u < kDepth; ++u) all |= av[u].x ^ bv[u].x;
        if ((all == 0xffffffffu) & (p.m == 0)) return;
#pragma unroll
        for (int u = 0; u < kDepth; ++u) {
          float af[8], bf8[8];
          unpack8(av[u], af);
          unpack8(bv[u], bf8);
#pragma unroll
          for (int x = 0; x < 8; ++x) acc[0] = fmaf(af[x], bf8[x], acc[0]);
        }
      } else {
#pragma unroll
        for (int u = 0; u < kDepth; ++u) {
          const int64_t e = kk + u * 256;
          if (e >= k1) break;
          float bf8[8], av[8];
          unpack8(bv[u], bf8);
#pragma unroll
          for (int i = 0; i < kRows; ++i) {
            if (i >= p.m) break;
            unpack8(load16(a + i * p.lda + e), av);
#pragma unroll
            for (int x = 0; x < 8; ++x) acc[i] = fmaf(av[x], bf8[x], acc[i]);
          }
        }
      }
    }
  }
  if (!waited) dependency_wait();  // before any store
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    float v = acc[i];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    acc[i] = v;
  }
  if (KS == 1) {
    if (lane == 0 && j < p.n)
      for (int i = 0; i < p.m; ++i) store(p, i, j, acc[i]);
    return;
  }
  if (lane == 0)
#pragma unroll
    for (int i = 0; i < kRows; ++i) part[warp][i] = acc[i];
  __syncthreads();
  if (lane == 0 && slice == 0 && j < p.n)
    for (int i = 0; i < p.m; ++i) {
      float sum = 0.f;
#pragma unroll
      for (int t = 0; t < KS; ++t) sum += part[warp + t][i];
      store(p, i, j, sum);
    }
}

template <bool kVec>
__global__ void __launch_bounds__(kRowGroups* kRowSlices) gemv_row_kernel(CudaBf16Problem p) {
  dependency_wait();
  __shared__ float part[kRowSlices][kRowCols];
  __shared__ float part2[8][kRowCols];
  const int g = threadIdx.x % kRowGroups, s = threadIdx.x / kRowGroups;
  const int j0 = blockIdx.x * kRowCols + g * 8;
  const __nv_bfloat16* b = static_cast<const __nv_bfloat16*>(p.b);
  const __nv_bfloat16* a = static_cast<const __nv_bfloat16*>(p.a);
  float acc[kRows][8];
#pragma unroll
  for (int i = 0; i < kRows; ++i)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[i][e] = 0.f;
  if (kVec) {
    if (j0 < p.n) {
#pragma unroll 4
      for (int kk = s; kk < p.k; kk += kRowSlices) {
        float bv[8];
        unpack8(*reinterpret_cast<const uint4*>(b + static_cast<int64_t>(kk) * p.ldb + j0), bv);
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
          if (i >= p.m) break;
          const float av = __bfloat162float(a[i * p.lda + kk]);
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[i][e] = fmaf(av, bv[e], acc[i][e]);
        }
      }
    }
  } else {
    for (int kk = s; kk < p.k; kk += kRowSlices) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (j0 + e >= p.n) break;
        const float bv = __bfloat162float(b[static_cast<int64_t>(kk) * p.ldb + j0 + e]);
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
          if (i >= p.m) break;
          acc[i][e] = fmaf(__bfloat162float(a[i * p.lda + kk]), bv, acc[i][e]);
        }
      }
    }
  }
  // The 64 slices' sums of each row: 8 partial sums per column, then one.
  const int col = threadIdx.x % kRowCols, quarter = threadIdx.x / kRowCols;
  for (int i = 0; i < p.m; ++i) {
#pragma unroll
    for (int e = 0; e < 8; ++e) part[s][g * 8 + e] = acc[i][e];
    __syncthreads();
    float v = 0.f;
#pragma unroll
    for (int t = 0; t < kRowSlices / 8; ++t) v += part[quarter * (kRowSlices / 8) + t][col];
    part2[quarter][col] = v;
    __syncthreads();
    if (threadIdx.x < kRowCols) {
      float sum = 0.f;
#pragma unroll
      for (int t = 0; t < 8; ++t) sum += part2[t][threadIdx.x];
      const int j = blockIdx.x * kRowCols + threadIdx.x;
      if (j < p.n) store(p, i, j, sum);
    }
    __syncthreads();
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// Launches |kernel| on |grid| x |threads|, with programmatic dependent
// launch when |dependent|: the kernel may then start before the kernel
// ahead of it on the stream ends, and waits for it (dependency_wait) before
// it reads what that kernel may write.
template <class Kernel>
cudaError_t launch(Kernel kernel, dim3 grid, int threads, cudaStream_t stream, bool dependent,
                   const CudaBf16Problem& p) {
  if (dependent) return cuda_launch_dependent(kernel, grid, dim3(threads), 0, stream, p);
  kernel<<<grid, threads, 0, stream>>>(p);
  return cudaGetLastError();
}

// The column-major kernel with |ks| warps a column.
template <bool kOneRow>
cudaError_t launch_col_split(int ks, dim3 grid, cudaStream_t stream, bool dependent, const CudaBf16Problem& p) {
  switch (ks) {
    case 1: return launch(gemv_col_split_kernel<1, kOneRow>, grid, 32 * kColWarps, stream, dependent, p);
    case 2: return launch(gemv_col_split_kernel<2, kOneRow>, grid, 32 * kColWarps, stream, dependent, p);
    case 4: return launch(gemv_col_split_kernel<4, kOneRow>, grid, 32 * kColWarps, stream, dependent, p);
    default: return launch(gemv_col_split_kernel<8, kOneRow>, grid, 32 * kColWarps, stream, dependent, p);
  }
}

}  // namespace

cudaError_t cuda_bf16_gemv_rows_launch(const CudaBf16Problem& p, cudaStream_t stream, bool dependent_launch,
                                       int column_warps) {
  if (p.m < 1 || p.m > kRows || p.n < 1 || p.k < 1 || !p.a || !p.b || !p.d || (p.beta != 0.f && !p.c))
    return cudaErrorInvalidValue;
  if (column_warps != 0 && column_warps != 1 && column_warps != 2 && column_warps != 4 && column_warps != 8)
    return cudaErrorInvalidValue;
  static_assert(kRowGroups * kRowSlices == 8 * kRowCols, "the row kernel's sums take 8 threads a column");
  const bool dep = dependent_launch;
  if (p.b_row_major) {
    const bool vec = p.n % 8 == 0 && p.ldb % 8 == 0 && aligned16(p.b);
    const dim3 grid((p.n + kRowCols - 1) / kRowCols);
    return vec ? launch(gemv_row_kernel<true>, grid, kRowGroups * kRowSlices, stream, dep, p)
               : launch(gemv_row_kernel<false>, grid, kRowGroups * kRowSlices, stream, dep, p);
  }
  const bool vec = p.k % 8 == 0 && p.lda % 8 == 0 && p.ldb % 8 == 0 && aligned16(p.a) && aligned16(p.b);
  if (!vec)
    return launch(gemv_col_kernel<false>, dim3((p.n + kColWarps - 1) / kColWarps), 32 * kColWarps, stream, dep, p);
  // Warps a column: the fewest that make 256 blocks (two per SM), but no
  // slice under 256 elements of k. Several rows also give each warp one
  // pass of loads (kColPass elements of k), as their kernel waits for each
  // row's loads of A in turn; one row's kernel has a whole pass in flight
  // at once, and timed on Llama's decode shapes (CudaBf16Test.GemvTiming)
  // more warps a column only added each block's sum through shared memory.
  int ks = column_warps;
  if (ks == 0) {
    ks = 1;
    while (ks < kColWarps &&
           (static_cast<int64_t>(p.n) * ks < 256 * kColWarps ||
            (p.m > 1 && static_cast<int64_t>(p.k) > kColPass * ks)) &&
           static_cast<int64_t>(p.k) >= 2 * 256 * ks)
      ks *= 2;
  }
  const dim3 grid(static_cast<unsigned>((static_cast<int64_t>(p.n) * ks + kColWarps - 1) / kColWarps));
  if (p.m == 1) return launch_col_split<true>(ks, grid, stream, dep, p);
  return launch_col_split<false>(ks, grid, stream, dep, p);
}

}  // namespace aotirt
