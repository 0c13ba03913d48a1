// Kernels of aotirt's fused decode-step shims (cuda_fused_decode_kernels.h).
// The one-row kernel is the few-row product's one-row form
// (cuda_gemv_bf16.cu: a warp a column of the weights, eight 16-byte loads
// of them in flight a lane, issued before the wait for the kernel ahead)
// with the RMS norm before the product folded into its loads of x, and the
// residual add or the MLP's SiLU-multiply into its store, so that a decode
// step's norms, residual adds and SiLU-multiply launch no kernels of their
// own. With k at most 2048 a warp's single pass loads the whole row, so
// the norm's sum of squares is a shuffle reduction of what the warp holds.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/launch/cuda_dependent_launch.h"
#include "backends/cuda/ops/matmul/cuda_bf16_loads.cuh"
#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"

namespace aotirt {
namespace {

constexpr int kWarps = 8;  // columns a block
constexpr int kDepth = 8;  // 16-byte loads of each operand a lane keeps in flight
constexpr int kPass = kDepth * 256;
static_assert(kPass == kCudaFusedNormMaxK, "the norm's sums come from one pass");

__device__ __forceinline__ float round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

using bf16_loads::load16;
using bf16_loads::unpack8;

template <int kPro>
__global__ void __launch_bounds__(32 * kWarps, 2) fused_row_kernel(CudaFusedRow p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int j = static_cast<int>(blockIdx.x) * kWarps + warp;
  const __nv_bfloat16* x = static_cast<const __nv_bfloat16*>(p.x);
  const __nv_bfloat16* norm = static_cast<const __nv_bfloat16*>(p.norm);
  float acc = 0.f;
  dependents_may_start();
  bool waited = false;
  if (j < p.n) {
    const __nv_bfloat16* col = static_cast<const __nv_bfloat16*>(p.w) + static_cast<int64_t>(j) * p.ldw;
    // A loop bound uniform across the warp: the norm's shuffles need every lane.
    for (int base = 0; base < p.k; base += kPass) {
      uint4 bv[kDepth], av[kDepth], sv[kDepth];
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int e = base + u * 256 + lane * 8;
        bv[u] = e < p.k ? __ldg(reinterpret_cast<const uint4*>(col + e)) : make_uint4(0, 0, 0, 0);
      }
      // The weights never depend on the kernel ahead; x does.
      if (!waited) {
        dependency_wait();
        waited = true;
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int e = base + u * 256 + lane * 8;
        av[u] = e < p.k ? load16(x + e) : make_uint4(0, 0, 0, 0);
        sv[u] = make_uint4(0, 0, 0, 0);
        if (kPro == 1 && e < p.k) sv[u] = __ldg(reinterpret_cast<const uint4*>(norm + e));
      }
      // Every load feeds one branch ahead of the first use (never taken),
      // so the compiler keeps them all in flight at once.
      uint32_t all = 0;
#pragma unroll
      for (int u = 0; u < kDepth; ++u) all |= av[u].x ^ bv[u].x ^ sv[u].x;
      if ((all == 0xffffffffu) & (p.n == 0)) return;
      float inv = 1.f;
      if (kPro == 1) {
        float ss = 0.f;
#pragma unroll
        for (int u = 0; u < kDepth; ++u) {
          float af[8];
          unpack8(av[u], af);
#pragma unroll
          for (int i = 0; i < 8; ++i) ss = fmaf(af[i], af[i], ss);
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
        inv = rsqrtf(ss / static_cast<float>(p.k) + p.eps);
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        float af[8], bf8[8], sf[8];
        unpack8(av[u], af);
        unpack8(bv[u], bf8);
        unpack8(sv[u], sf);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          float a = af[i];
          if (kPro == 1) a = round_bf16(sf[i] * round_bf16(a * inv));
          acc = fmaf(a, bf8[i], acc);
        }
      }
    }
  }
  if (!waited) dependency_wait();  // before any store
#pragma unroll
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0 && j < p.n) {
    float v = acc;
    if (p.bias) v += __bfloat162float(static_cast<const __nv_bfloat16*>(p.bias)[j]);
    if (p.residual) v = __bfloat162float(static_cast<const __nv_bfloat16*>(p.residual)[j]) + round_bf16(v);
    static_cast<__nv_bfloat16*>(p.out)[j] = __float2bfloat16_rn(v);
  }
}

// The same product with the prologue made once a block: the block's
// threads write prologue(x) into shared memory (for the norm, its sum of
// squares through shared memory too), then each warp reads its row of it
// there. Fewer registers and one read of x a block instead of a warp, for
// a barrier before the first product; and no bound on k from one pass.
// With kGlu (SiLU-multiply after the product) a block makes 4 outputs:
// warps 0-3 sum their gate rows, warps 4-7 the up rows of the same outputs,
// and the block multiplies the pairs in its store.
template <int kPro, bool kGlu>
__global__ void __launch_bounds__(32 * kWarps) fused_row_shared_kernel(CudaFusedRow p) {
  extern __shared__ __align__(16) unsigned char a_bytes[];  // the product's input row, k bfloat16
  __nv_bfloat16* a_s = reinterpret_cast<__nv_bfloat16*>(a_bytes);
  __shared__ float red[kWarps];
  constexpr int kOuts = kGlu ? kWarps / 2 : kWarps;  // outputs a block
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int outs = kGlu ? p.n / 2 : p.n;
  const int o = static_cast<int>(blockIdx.x) * kOuts + warp % kOuts;  // this warp's output
  const int j = kGlu && warp >= kOuts ? outs + o : o;                // and its weight row
  const __nv_bfloat16* x = static_cast<const __nv_bfloat16*>(p.x);
  const __nv_bfloat16* col =
      o < outs ? static_cast<const __nv_bfloat16*>(p.w) + static_cast<int64_t>(j) * p.ldw : nullptr;
  dependents_may_start();
  // The first pass's weights go out before the wait for the kernel ahead.
  uint4 bv[kDepth];
#pragma unroll
  for (int u = 0; u < kDepth; ++u) {
    const int e = u * 256 + lane * 8;
    bv[u] = col && e < p.k ? __ldg(reinterpret_cast<const uint4*>(col + e)) : make_uint4(0, 0, 0, 0);
  }
  dependency_wait();
  float inv = 1.f;
  if (kPro == 1) {
    float ss = 0.f;
    for (int e = threadIdx.x * 8; e < p.k; e += 256 * 8) {
      float f[8];
      unpack8(load16(x + e), f);
#pragma unroll
      for (int i = 0; i < 8; ++i) ss = fmaf(f[i], f[i], ss);
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    ss = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) ss += red[w];
    inv = rsqrtf(ss / static_cast<float>(p.k) + p.eps);
  }
  for (int e = threadIdx.x * 8; e < p.k; e += 256 * 8) {
    float f[8], s8[8];
    unpack8(load16(x + e), f);
    if (kPro == 1) unpack8(__ldg(reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(p.norm) + e)), s8);
    __nv_bfloat162 y2[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float v0 = f[2 * i], v1 = f[2 * i + 1];
      if (kPro == 1) {
        v0 = s8[2 * i] * round_bf16(v0 * inv);
        v1 = s8[2 * i + 1] * round_bf16(v1 * inv);
      }
      y2[i] = __floats2bfloat162_rn(v0, v1);
    }
    *reinterpret_cast<uint4*>(a_s + e) = *reinterpret_cast<const uint4*>(y2);
  }
  __syncthreads();
  float acc = 0.f;
  if (col) {
    for (int base = 0; base < p.k; base += kPass) {
      if (base > 0) {
#pragma unroll
        for (int u = 0; u < kDepth; ++u) {
          const int e = base + u * 256 + lane * 8;
          bv[u] = e < p.k ? __ldg(reinterpret_cast<const uint4*>(col + e)) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int u = 0; u < kDepth; ++u) {
        const int e = base + u * 256 + lane * 8;
        if (e >= p.k) break;
        float af[8], bf8[8];
        unpack8(*reinterpret_cast<const uint4*>(a_s + e), af);
        unpack8(bv[u], bf8);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc = fmaf(af[i], bf8[i], acc);
      }
    }
  }
#pragma unroll
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  float v = acc;
  if (col && p.bias) v += __bfloat162float(static_cast<const __nv_bfloat16*>(p.bias)[j]);
  if (kGlu) {
    // Each sum rounded as the product's output is, then silu(gate) rounded,
    // then its product with up.
    if (lane == 0) red[warp] = round_bf16(v);
    __syncthreads();
    const int oo = static_cast<int>(blockIdx.x) * kOuts + static_cast<int>(threadIdx.x);
    if (threadIdx.x < kOuts && oo < outs) {
      const float g = red[threadIdx.x], u = red[threadIdx.x + kOuts];
      static_cast<__nv_bfloat16*>(p.out)[oo] = __float2bfloat16_rn(round_bf16(g / (1.f + expf(-g))) * u);
    }
    return;
  }
  if (lane == 0 && col) {
    if (p.residual) v = __bfloat162float(static_cast<const __nv_bfloat16*>(p.residual)[j]) + round_bf16(v);
    static_cast<__nv_bfloat16*>(p.out)[j] = __float2bfloat16_rn(v);
  }
}

// ---- the general path's pieces ----

template <class T>
__device__ __forceinline__ float ld(const T* p, int64_t i);
template <>
__device__ __forceinline__ float ld<float>(const float* p, int64_t i) { return p[i]; }
template <>
__device__ __forceinline__ float ld<__half>(const __half* p, int64_t i) { return __half2float(p[i]); }
template <>
__device__ __forceinline__ float ld<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
template <class T>
__device__ __forceinline__ T st(float v);
template <>
__device__ __forceinline__ float st<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half st<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 st<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
// |v| rounded through T.
template <class T>
__device__ __forceinline__ float round_as(float v) {
  const T t = st<T>(v);
  return ld<T>(&t, 0);
}

// One block a row.
template <class T, int kPro>
__global__ void __launch_bounds__(256) prologue_kernel(const T* x, const T* norm, float eps, T* y, int64_t k) {
  const int64_t row = blockIdx.x;
  const T* xr = x + row * (kPro == 2 ? 2 * k : k);
  T* yr = y + row * k;
  float inv = 1.f;
  if (kPro == 1) {
    __shared__ float part[8];
    float ss = 0.f;
    for (int64_t i = threadIdx.x; i < k; i += 256) {
      const float v = ld(xr, i);
      ss = fmaf(v, v, ss);
    }
    for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
    __syncthreads();
    ss = 0.f;
#pragma unroll
    for (int w = 0; w < 8; ++w) ss += part[w];
    // An empty row gives NaN (0 / 0), as torch's mean does.
    inv = rsqrtf(ss / static_cast<float>(k) + eps);
  }
  for (int64_t i = threadIdx.x; i < k; i += 256) {
    const float a = ld(xr, i);
    float v;
    if (kPro == 1) {
      v = ld(norm, i) * round_as<T>(a * inv);
    } else {
      v = round_as<T>(a / (1.f + expf(-a))) * ld(xr, k + i);
    }
    yr[i] = st<T>(v);
  }
}

template <class T>
__global__ void residual_kernel(const T* residual, T* out, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = st<T>(ld(residual, i) + ld(out, i));
}

template <class T>
cudaError_t prologue_as(CudaFusedPrologue pro, const void* x, const void* norm, float eps, void* y, int64_t rows,
                        int64_t k, cudaStream_t stream) {
  if (rows <= 0 || k <= 0) return cudaSuccess;
  if (rows > INT32_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(rows));
  if (pro == CudaFusedPrologue::kRmsNorm)
    prologue_kernel<T, 1><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(norm), eps,
                                                    static_cast<T*>(y), k);
  else
    prologue_kernel<T, 2><<<grid, 256, 0, stream>>>(static_cast<const T*>(x), nullptr, eps, static_cast<T*>(y), k);
  return cudaGetLastError();
}

template <class T>
cudaError_t residual_as(const void* residual, void* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const int64_t blocks = (n + 255) / 256;
  residual_kernel<T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
      static_cast<const T*>(residual), static_cast<T*>(out), n);
  return cudaGetLastError();
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool cuda_fused_row_supported(const CudaFusedRow& p, CudaFusedPrologue prologue, CudaFusedRowKernel kernel) {
  if (p.n < 1 || p.k < 8 || p.k % 8 != 0 || p.ldw % 8 != 0 || !aligned16(p.x) || !aligned16(p.w)) return false;
  if (prologue == CudaFusedPrologue::kSiluMul) return false;  // a prologue of the general path alone
  if (prologue == CudaFusedPrologue::kRmsNorm && !aligned16(p.norm)) return false;
  // SiLU-multiply: the shared form alone, gate and up rows in pairs, no residual.
  if (p.silu_mul && (kernel != CudaFusedRowKernel::kShared || p.n % 2 != 0 || p.residual)) return false;
  if (kernel == CudaFusedRowKernel::kShared) return p.k <= kCudaFusedSharedMaxK;
  return prologue != CudaFusedPrologue::kRmsNorm || p.k <= kCudaFusedNormMaxK;
}

cudaError_t cuda_fused_row_launch(const CudaFusedRow& p, CudaFusedPrologue prologue, cudaStream_t stream,
                                  bool dependent_launch, CudaFusedRowKernel which) {
  if (!cuda_fused_row_supported(p, prologue, which)) return cudaErrorInvalidValue;
  const int outs = p.silu_mul ? p.n / 2 : p.n, per_block = p.silu_mul ? kWarps / 2 : kWarps;
  const dim3 grid(static_cast<unsigned>((outs + per_block - 1) / per_block)), block(32 * kWarps);
  const bool shared = which == CudaFusedRowKernel::kShared, norm = prologue == CudaFusedPrologue::kRmsNorm;
  void (*kernel)(CudaFusedRow) = nullptr;
  if (!shared)
    kernel = norm ? fused_row_kernel<1> : fused_row_kernel<0>;
  else if (p.silu_mul)
    kernel = norm ? fused_row_shared_kernel<1, true> : fused_row_shared_kernel<0, true>;
  else
    kernel = norm ? fused_row_shared_kernel<1, false> : fused_row_shared_kernel<0, false>;
  const size_t smem = shared ? static_cast<size_t>(p.k) * 2 : 0;
  if (dependent_launch) return cuda_launch_dependent(kernel, grid, block, smem, stream, p);
  kernel<<<grid, block, smem, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t cuda_fused_prologue_launch(CudaFusedPrologue prologue, int dtype, const void* x, const void* norm,
                                       float eps, void* y, int64_t rows, int64_t k, cudaStream_t stream) {
  if (prologue == CudaFusedPrologue::kNone) return cudaErrorInvalidValue;
  switch (dtype) {
    case 6: return prologue_as<float>(prologue, x, norm, eps, y, rows, k, stream);
    case 5: return prologue_as<__half>(prologue, x, norm, eps, y, rows, k, stream);
    case 15: return prologue_as<__nv_bfloat16>(prologue, x, norm, eps, y, rows, k, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_fused_residual_launch(int dtype, const void* residual, void* out, int64_t numel,
                                       cudaStream_t stream) {
  switch (dtype) {
    case 6: return residual_as<float>(residual, out, numel, stream);
    case 5: return residual_as<__half>(residual, out, numel, stream);
    case 15: return residual_as<__nv_bfloat16>(residual, out, numel, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotirt
