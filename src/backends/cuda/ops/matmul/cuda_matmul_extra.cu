// Kernels of the CUDA matmul extras (cuda_matmul_extra_kernels.h). The
// GEMMs themselves run on cuBLASLt; these are the pieces around them and the
// products no library takes as such: p-norm distances, _trilinear's sum over
// three strided inputs, int8 x int8 -> int32 and int8 weights times floating
// activations. Every kernel strides over its work so that grid sizes stay
// within the hardware's limits whatever the tensor sizes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/cuda/launch/cuda_dependent_launch.h"
#include "backends/cuda/ops/cuda_op_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 16;

unsigned blocks_for(int64_t work, int64_t per_block = kThreads) {
  int64_t b = (work + per_block - 1) / per_block;
  if (b < 1) b = 1;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return static_cast<unsigned>(b);
}

// Loads and stores through float for the half types; float and double as
// they are.
template <class T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }

template <class T>
__device__ __forceinline__ T from_acc(typename Acc<T>::type v);
template <>
__device__ __forceinline__ __half from_acc<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ float from_acc<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ double from_acc<double>(double v) {
  return v;
}

// ---- activation ----

template <class T>
__global__ void activation_kernel(T* x, int64_t n, bool gelu) {
  using A = typename Acc<T>::type;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const A v = to_acc(x[i]);
    A r;
    if (gelu) {
      // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
      const A k_beta = static_cast<A>(0.7978845608028654);
      const A k_kappa = static_cast<A>(0.044715);
      r = static_cast<A>(0.5) * v * (static_cast<A>(1) + tanh(k_beta * (v + k_kappa * v * v * v)));
    } else {
      // NaN stays NaN, as torch's relu.
      r = v < static_cast<A>(0) ? static_cast<A>(0) : v;
    }
    x[i] = from_acc<T>(r);
  }
}

// ---- distances ----

template <class T>
__device__ T p_distance(const T* x, const T* y, int64_t m, T p) {
  T acc = 0;
  if (p == T(0)) {
    for (int64_t i = 0; i < m; ++i) acc += x[i] != y[i] ? T(1) : T(0);
    return acc;
  }
  if (p == T(1)) {
    for (int64_t i = 0; i < m; ++i) acc += fabs(x[i] - y[i]);
    return acc;
  }
  if (p == T(2)) {
    for (int64_t i = 0; i < m; ++i) {
      const T d = x[i] - y[i];
      acc += d * d;
    }
    return sqrt(acc);
  }
  if (isinf(p)) {
    for (int64_t i = 0; i < m; ++i) acc = fmax(acc, fabs(x[i] - y[i]));
    return acc;
  }
  for (int64_t i = 0; i < m; ++i) acc += pow(fabs(x[i] - y[i]), p);
  return pow(acc, T(1) / p);
}

template <class T>
__global__ void cdist_kernel(const T* x1, const T* x2, T* out, int64_t rows1, int64_t rows2, int64_t cols,
                             int64_t total, T p) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t j = e % rows2;
    const int64_t bi = e / rows2;  // b * rows1 + i
    const int64_t b = bi / rows1;
    out[e] = p_distance<T>(x1 + bi * cols, x2 + (b * rows2 + j) * cols, cols, p);
  }
}

template <class T>
__global__ void row_sq_norms_kernel(const T* x, T* sq, int64_t rows, int64_t cols) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {
    T s = 0;
    const T* row = x + r * cols;
    for (int64_t c = 0; c < cols; ++c) s += row[c] * row[c];
    sq[r] = s;
  }
}

template <class T>
__global__ void euclid_finish_kernel(T* out, const T* n1, const T* n2, int64_t rows1, int64_t rows2, int64_t total) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t j = e % rows2;
    const int64_t bi = e / rows2;
    const int64_t b = bi / rows1;
    const T v = out[e] + n1[bi] + n2[b * rows2 + j];
    out[e] = sqrt(fmax(v, static_cast<T>(1e-30)));
  }
}

template <class T>
__global__ void pdist_kernel(const T* x, T* out, int64_t rows, int64_t cols, T p) {
  // One thread per (i, j) of the square; those with j <= i have no pair.
  const int64_t total = rows * rows;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t i = e / rows, j = e % rows;
    if (j <= i) continue;
    const int64_t at = i * rows - i * (i + 1) / 2 + (j - i - 1);
    out[at] = p_distance<T>(x + i * cols, x + j * cols, cols, p);
  }
}

// ---- _trilinear ----

template <class T>
__global__ void trilinear_kernel(const T* i1, const T* i2, const T* i3, T* out, CudaTrilinearShape s) {
  using A = typename Acc<T>::type;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < s.n_out; e += step) {
    int64_t base[3] = {0, 0, 0};
    int64_t rem = e;
    for (int d = s.keep_dims - 1; d >= 0; --d) {
      const int64_t idx = rem % s.keep_size[d];
      rem /= s.keep_size[d];
      for (int t = 0; t < 3; ++t) base[t] += idx * s.keep_stride[t][d];
    }
    A acc = 0;
    for (int64_t q = 0; q < s.n_sum; ++q) {
      int64_t off[3] = {base[0], base[1], base[2]};
      int64_t r = q;
      for (int d = s.sum_dims - 1; d >= 0; --d) {
        const int64_t idx = r % s.sum_size[d];
        r /= s.sum_size[d];
        for (int t = 0; t < 3; ++t) off[t] += idx * s.sum_stride[t][d];
      }
      acc += to_acc(i1[off[0]]) * to_acc(i2[off[1]]) * to_acc(i3[off[2]]);
    }
    out[e] = from_acc<T>(acc);
  }
}

// ---- int8 GEMMs ----

constexpr int kTile = 16;

__global__ void int8_mm_kernel(const int8_t* a, int64_t as0, int64_t as1, const int8_t* b, int64_t bs0, int64_t bs1,
                               int32_t* out, int64_t m, int64_t k, int64_t n) {
  __shared__ int32_t ta[kTile][kTile + 1];
  __shared__ int32_t tb[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  // Row tiles stride by gridDim.y, which is capped below the hardware limit.
  for (int64_t tile = blockIdx.y; tile * kTile < m; tile += gridDim.y) {
    const int64_t row = tile * kTile + ty;
    // Unsigned sums wrap modulo 2^32, which is int32's wrapping.
    uint32_t acc = 0;
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      const int64_t ka = k0 + tx, kb = k0 + ty;
      ta[ty][tx] = row < m && ka < k ? static_cast<int32_t>(a[row * as0 + ka * as1]) : 0;
      tb[ty][tx] = kb < k && col < n ? static_cast<int32_t>(b[kb * bs0 + col * bs1]) : 0;
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kTile; ++q) acc += static_cast<uint32_t>(ta[ty][q] * tb[q][tx]);
      __syncthreads();
    }
    if (row < m && col < n) out[row * n + col] = static_cast<int32_t>(acc);
  }
}

template <class T>
__global__ void weight_int8_kernel(const T* x, int64_t xrs, const int8_t* w, const T* scales, int64_t ss, T* out,
                                   int64_t m, int64_t k, int64_t n) {
  // One warp per output: its lanes stride along k, so a warp reads a
  // weight row in 32-byte runs and the activation row from cache.
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int64_t total = m * n;
  for (int64_t o = warp; o < total; o += warps) {
    const int64_t r = o / n, c = o % n;
    const T* xr = x + r * xrs;
    const int8_t* wr = w + c * k;
    float acc = 0.f;
    for (int64_t q = lane; q < k; q += 32) acc += static_cast<float>(to_acc(xr[q])) * static_cast<float>(wr[q]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) out[o] = from_acc<T>(static_cast<typename Acc<T>::type>(acc * static_cast<float>(to_acc(scales[c * ss]))));
  }
}

// ---- _scaled_mm epilogue ----

constexpr int kFloat8E5m2 = 23;
constexpr int kFloat8E4m3fn = 24;

__device__ __forceinline__ float load_float(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case kCudaOpFloat16: return __half2float(static_cast<const __half*>(p)[i]);
    case kCudaOpBFloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__global__ void scaled_epilogue_kernel(const float* acc, void* out, int out_dtype, int64_t ors, int64_t ocs,
                                       int64_t m, int64_t n, const float* sa, int64_t sas, const float* sb,
                                       int64_t sbs, const void* bias, int bias_dtype, int64_t bs,
                                       const float* result_scale) {
  const int64_t total = m * n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t i = e / n, j = e % n;
    float v = acc[e] * sa[i * sas] * sb[j * sbs];
    if (bias) v += load_float(bias, bias_dtype, j * bs);
    if (result_scale) v *= *result_scale;
    const int64_t at = i * ors + j * ocs;
    switch (out_dtype) {
      case kCudaOpFloat16: static_cast<__half*>(out)[at] = __float2half_rn(v); break;
      case kCudaOpBFloat16: static_cast<__nv_bfloat16*>(out)[at] = __float2bfloat16_rn(v); break;
      case kFloat8E4m3fn:
        static_cast<__nv_fp8_storage_t*>(out)[at] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
        break;
      case kFloat8E5m2:
        static_cast<__nv_fp8_storage_t*>(out)[at] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
        break;
      default: static_cast<float*>(out)[at] = v; break;
    }
  }
}

// ---- int4 weights in torch's CUDA packing ----

// Word |within| (0 .. 2 * ikt - 1) of weight row |n|'s run in super-tile
// |ko|: its address in the packed tensor and the k of its nibble 0. A row's
// words of one super-tile are contiguous: the four lanes (n % 8) * 4 + r,
// each with ikt / 2 words.
struct Int4Word {
  int64_t index;
  int64_t k_base;  // k of the first byte this word's lane reads in its tile pair
};

__device__ __forceinline__ Int4Word int4_word(int64_t n, int64_t ko, int64_t within, int64_t super_tiles, int ikt) {
  const int half = ikt / 2;
  const int64_t r = within / half, p = within % half;
  Int4Word w;
  w.index = ((n / 8) * super_tiles + ko) * 32 * half + (n % 8) * 4 * half + within;
  // The lane's tile pair starts at k-tile ko * ikt + 2p; in each of its two
  // k-tiles the lane holds bytes r and r + 4 (k = 2 * byte, 2 * byte + 1).
  w.k_base = (ko * ikt + 2 * p) * 16 + 2 * r;
  return w;
}

// The k of nibble |i| of a word whose lane starts at |k_base|: nibbles 0-3
// are the high halves (even k) of the lane's four bytes, 4-7 the low halves;
// byte v is at +8 k within the tile for v odd and in the second tile for
// v >= 2.
__device__ __forceinline__ int64_t int4_nibble_k(int64_t k_base, int i) {
  const int v = i & 3;
  return k_base + (v >> 1) * 16 + (v & 1) * 8 + (i >> 2);
}

__device__ __forceinline__ __nv_bfloat16 int4_dequant(uint32_t word, int i, __nv_bfloat16 scale, __nv_bfloat16 zero) {
  const int q = static_cast<int>((word >> (4 * i)) & 0xFu) - 8;
  return __hfma(__int2bfloat16_rn(q), scale, zero);
}

// Nibbles |v| and |v| + 4 of |word| as the bfloat16 pair 128 + q, exactly:
// OR-ing a nibble into the low mantissa bits of 128.0 (0x4300). The mask
// and the OR are one three-input LOP3; written out, the compiler issues them
// as two, each with its constant inline.
__device__ __forceinline__ uint32_t int4_code_pair(uint32_t word, int v) {
  uint32_t bits = word >> (4 * v);
#if defined(__CUDA_ARCH__)
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(bits) : "r"(bits), "n"(0x000F000F), "n"(0x43004300));
#else
  bits = (bits & 0x000F000Fu) | 0x43004300u;
#endif
  return bits;
}

// Nibbles |v| and |v| + 4 of |word| dequantized as int4_dequant does, as a
// pair: subtracting 136 from the codes leaves q - 8 exactly, so one paired
// multiply-add rounds each weight as torch's kernel does, in fewer
// instructions than a conversion from int per weight.
__device__ __forceinline__ __nv_bfloat162 int4_dequant_pair(uint32_t word, int v, __nv_bfloat162 scale2,
                                                           __nv_bfloat162 zero2) {
  const uint32_t bits = int4_code_pair(word, v);
  __nv_bfloat162 q;
  static_assert(sizeof(q) == sizeof(bits), "bfloat16 pair");
  memcpy(&q, &bits, sizeof(bits));
  q = __hsub2(q, __floats2bfloat162_rn(136.f, 136.f));
  return __hfma2(q, scale2, zero2);
}

__global__ void int4pack_dequant_kernel(const int32_t* packed, const __nv_bfloat16* sz, __nv_bfloat16* w, int64_t n,
                                        int64_t k, int ikt, int64_t group) {
  // One thread per packed word, in storage order.
  const int half = ikt / 2;
  const int64_t super_tiles = k / (ikt * 16);
  const int64_t words = (n / 8) * super_tiles * 32 * half;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < words; e += step) {
    const int64_t p = e % half;
    const int64_t lane = (e / half) % 32;
    const int64_t ko = (e / (half * 32)) % super_tiles;
    const int64_t nt = e / (half * 32 * super_tiles);
    const int64_t row = nt * 8 + lane / 4;
    const int64_t k_base = (ko * ikt + 2 * p) * 16 + 2 * (lane % 4);
    const uint32_t word = static_cast<uint32_t>(packed[e]);
    // The eight values lie in one pair of k-tiles (32 k), so in one group.
    const int64_t g = k_base / group;
    const __nv_bfloat16 scale = sz[(g * n + row) * 2], zero = sz[(g * n + row) * 2 + 1];
#pragma unroll
    for (int i = 0; i < 8; ++i) w[row * k + int4_nibble_k(k_base, i)] = int4_dequant(word, i, scale, zero);
  }
}

__global__ void int4pack_gemv_kernel(const __nv_bfloat16* x, const int32_t* packed, const __nv_bfloat16* sz,
                                     __nv_bfloat16* out, int64_t m, int64_t n, int64_t k, int ikt, int64_t group) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int64_t super_tiles = k / (ikt * 16);
  const int64_t row_words = super_tiles * 2 * ikt;  // k / 8
  for (int64_t col = warp; col < n; col += warps) {
    for (int64_t r = 0; r < m; ++r) {
      const __nv_bfloat16* xr = x + r * k;
      float acc = 0.f;
      for (int64_t w = lane; w < row_words; w += 32) {
        const int64_t ko = w / (2 * ikt), within = w % (2 * ikt);
        const Int4Word iw = int4_word(col, ko, within, super_tiles, ikt);
        const uint32_t word = static_cast<uint32_t>(packed[iw.index]);
        const int64_t g = iw.k_base / group;
        const __nv_bfloat16 scale = sz[(g * n + col) * 2], zero = sz[(g * n + col) * 2 + 1];
#pragma unroll
        for (int i = 0; i < 8; ++i)
          acc += __bfloat162float(int4_dequant(word, i, scale, zero)) *
                 __bfloat162float(xr[int4_nibble_k(iw.k_base, i)]);
      }
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
      if (lane == 0) out[r * n + col] = __float2bfloat16_rn(acc);
    }
  }
}

// mma.sync m16n8k16, bfloat16 in, float32 sums: c += a b for one warp.
__device__ __forceinline__ void mma_bf16_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// silu(gate) * up from the two float32 sums, rounded as a product's
// bfloat16 output, F.silu's and the multiply's are in turn.
__device__ __forceinline__ __nv_bfloat16 silu_mul_bf16(float gate, float up) {
  const float g = __bfloat162float(__float2bfloat16_rn(gate));
  const float u = __bfloat162float(__float2bfloat16_rn(up));
  const float s = __bfloat162float(__float2bfloat16_rn(g / (1.f + expf(-g))));
  return __float2bfloat16_rn(s * u);
}

__device__ __forceinline__ uint32_t bits_of(__nv_bfloat162 v) {
  uint32_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

// cp.async (sm_80 and newer): a copy from global to shared memory that the
// thread issues and later waits for. A plain load whose value is used late
// is moved by the compiler next to its use when registers are short, and
// then a warp waits for each super-tile's words in turn; copies into shared
// memory stay where they are issued. The memory clobbers keep the thread's
// own reads of the shared memory after the wait and before the next copy.
template <int kBytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(s), "l"(gmem), "n"(kBytes) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;");
#endif
}
// Waits until at most |N| of the thread's committed groups are in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// The product of up to 16 rows on the packed words as they lie, on the
// tensor cores. torch's packing is the m16n8k16 B fragment layout: in one
// super-tile lane L holds ikt / 2 words of weight row L / 4, each word the
// two B fragments (k 2r, 2r + 1 and 2r + 8, 2r + 9, r = L % 4) of a pair of
// k-tiles; a warp reads 32 * ikt * 2 bytes in one coalesced copy a lane. So
// a lane dequantizes its words to bfloat16 as torch's kernel does
// (int4_dequant_pair) and hands them to mma.sync, which sums in float32, as
// torch's kernel does. A few-row product is bound by how many bytes are in
// flight and by the instructions a weight: a warp copies the words and
// (scale, zero) pairs of a batch of super-tiles into shared memory at once,
// and those of its next batch before it works on the current one (each
// lane reads back only what it copied, so no barrier). Written here because
// the product must read torch's packing in place, which no library kernel
// takes; one mma takes the place of a conversion and a multiply-add a
// weight.
//
// Two kernels. Up to 8 rows of x (decode steps), the pair kernel: the
// weights are the mma's A, two tiles of 8 weight rows its 16 rows (a lane's
// word of each tile), and the rows of x are B's 8 columns. Every fragment
// then holds values that count, and one mma and one load of x serve twice
// the weights. From 9 to 16 rows, the tile kernel: the rows of x are A, a
// tile's weights B.
constexpr int kInt4TileRows = 16;  // rows of x an mma takes as A
constexpr int kInt4PairRows = 8;   // rows of x an mma takes as B

// A batch's shape for the tile kernel: kAhead super-tiles, their words
// (kHalf a lane each) and (scale, zero) pairs, one a super-tile when a group
// spans it (kOneGroup), else one a word; two batches a warp fit the 48 KB of
// static shared memory. The pair kernel copies two tiles' words a
// super-tile, so half as many super-tiles make its batch: the same bytes.
template <int IKT, bool kOneGroup>
struct Int4Batch {
  static constexpr int kHalf = IKT / 2;
  static constexpr int kAhead = IKT == 8 ? (kOneGroup ? 4 : 2) : IKT == 4 ? 4 : 8;
  static constexpr int kPairAhead = kAhead / 2;
  static constexpr int kScales = kOneGroup ? 1 : kHalf;
};

// Copies into shared memory (cp.async) and what they need to know.
template <int IKT, bool kOneGroup>
struct Int4Copy {
  static constexpr int kHalf = IKT / 2, kScales = Int4Batch<IKT, kOneGroup>::kScales;
  // This lane's words of super-tile |ko| of the tile at |words| into |dst|.
  static __device__ __forceinline__ void words(uint32_t* dst, const int32_t* words, int ko) {
    cp_async<4 * kHalf>(dst, words + static_cast<uint32_t>(ko) * (32 * kHalf));
  }
  // The (scale, zero) pairs of this lane's words of super-tile |ko|, the
  // lane's weight row's pair in group 0 at |sz_row| (32-bit units), |n|
  // weight rows a group.
  static __device__ __forceinline__ void scales(uint32_t* dst, const uint32_t* sz_row, int ko, int n,
                                                int group_shift) {
#pragma unroll
    for (int p = 0; p < kScales; ++p) {
      // The first k of the word's tile pair, all in one group. Unsigned
      // 32-bit offsets (the launch checks they fit) take one multiply-add
      // into the 64-bit address instead of a sign extension and a shift.
      const uint32_t kt = static_cast<uint32_t>((ko * IKT + 2 * p) * 16);
      cp_async<4>(dst + p, sz_row + (kt >> group_shift) * static_cast<uint32_t>(n));
    }
  }
};

__device__ __forceinline__ __nv_bfloat162 as_bf162(uint32_t v) {
  __nv_bfloat162 b;
  static_assert(sizeof(b) == sizeof(v), "bfloat16 pair");
  memcpy(&b, &v, sizeof(v));
  return b;
}

// kTiles tiles a block, each taken by 8 / kTiles warps: where k is short,
// a tile's 8 warps would each have less than a batch of super-tiles, and
// the product then waits on many short blocks one after another instead of
// on full batches.
template <int IKT, bool kOneGroup, int kTiles>
__global__ void __launch_bounds__(256) int4pack_gemv_tile_kernel(const __nv_bfloat16* x, const int32_t* packed,
                                                                 const __nv_bfloat16* sz, __nv_bfloat16* out,
                                                                 int m, int n, int k, int group_shift) {
  static_assert(kTiles == 1 || kTiles == 2 || kTiles == 4, "tiles a block");
  constexpr int kWarps = 8 / kTiles;  // warps a tile
  using Batch = Int4Batch<IKT, kOneGroup>;
  using Copy = Int4Copy<IKT, kOneGroup>;
  constexpr int kHalf = Batch::kHalf, kAhead = Batch::kAhead, kScales = Batch::kScales;
  constexpr int kTileK = IKT * 16;
  __shared__ __align__(16) uint32_t words_s[8][2][kAhead][32][kHalf];
  __shared__ uint32_t scales_s[8][2][kAhead][32][kScales];
  static_assert(sizeof(words_s) + sizeof(scales_s) <= 40 * 1024, "static shared memory");
  __shared__ float part[8][kInt4TileRows][8];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, r = lane & 3;
  const int tiles = n / 8;
  const int nt = min(static_cast<int>(blockIdx.x) * kTiles + warp / kWarps, tiles - 1);
  const int wt = warp % kWarps;  // the warp's turn among its tile's
  // A warp past the last tile (the grid's last block) sums nothing.
  const int super_tiles = static_cast<int>(blockIdx.x) * kTiles + warp / kWarps < tiles ? k / kTileK : 0;
  const int32_t* base = packed + static_cast<int64_t>(nt) * (k / kTileK) * 32 * kHalf + lane * kHalf;
  const uint32_t* sz_row = reinterpret_cast<const uint32_t*>(sz) + nt * 8 + g;
  // Copies the batch of super-tiles ko0, ko0 + kWarps, ... into |stage|; always
  // commits a group (empty past the end), so that the waits below count.
  auto copy_batch = [&](int ko0, int stage) {
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int ko = ko0 + kWarps * u;
      if (ko >= super_tiles) break;
      Copy::words(&words_s[warp][stage][u][lane][0], base, ko);
      Copy::scales(&scales_s[warp][stage][u][lane][0], sz_row, ko, n, group_shift);
    }
    cp_async_commit();
  };
  // This lane's rows of x in the A fragments: g and g + 8. Rows past m
  // repeat row m - 1: an mma's rows are independent, and their sums are
  // never stored, so no lane needs zeros or a branch.
  const __nv_bfloat16* x_lo = x + static_cast<int64_t>(min(g, m - 1)) * k + 2 * r;
  const __nv_bfloat16* x_hi = x + static_cast<int64_t>(min(g + 8, m - 1)) * k + 2 * r;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  // Under a dependent launch the kernel ahead may still run: the packed
  // words and scales never depend on it, so the first two batches' copies go
  // out before the wait for it, and x, which it may have written, is read
  // after.
  dependents_may_start();
  copy_batch(wt, 0);
  copy_batch(wt + kWarps * kAhead, 1);
  dependency_wait();
  // The A fragments of this lane's rows of x for the k of super-tile |ko|,
  // tile pair |p|, k-tile |t|. The kernel ahead may write x, so these are
  // ordered loads, never issued before the wait.
  auto load_a = [&](uint32_t a[4], int ko, int p, int t) {
    const int kk = (ko * IKT + 2 * p) * 16 + 16 * t;
    a[0] = load_after_wait(x_lo + kk);
    a[1] = load_after_wait(x_hi + kk);
    a[2] = load_after_wait(x_lo + kk + 8);
    a[3] = load_after_wait(x_hi + kk + 8);
  };
  int stage = 0;
  for (int ko0 = wt; ko0 < super_tiles; ko0 += kWarps * kAhead) {
    // The first super-tile's rows of x (from L2 at first) load while the
    // words are in flight.
    uint32_t a_first[kHalf][2][4];
#pragma unroll
    for (int p = 0; p < kHalf; ++p)
#pragma unroll
      for (int t = 0; t < 2; ++t) load_a(a_first[p][t], ko0, p, t);
    cp_async_wait<1>();
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int ko = ko0 + kWarps * u;
      if (ko >= super_tiles) break;
#pragma unroll
      for (int p = 0; p < kHalf; ++p) {
        const uint32_t word = words_s[warp][stage][u][lane][p];
        const __nv_bfloat162 s = as_bf162(scales_s[warp][stage][u][lane][kOneGroup ? 0 : p]);
        const __nv_bfloat162 scale2 = __low2bfloat162(s), zero2 = __high2bfloat162(s);
#pragma unroll
        for (int t = 0; t < 2; ++t) {
          uint32_t a[4];
          if (u == 0) {
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = a_first[p][t][i];
          } else {
            load_a(a, ko, p, t);
          }
          mma_bf16_16816(c, a, bits_of(int4_dequant_pair(word, 2 * t, scale2, zero2)),
                         bits_of(int4_dequant_pair(word, 2 * t + 1, scale2, zero2)));
        }
      }
    }
    // This lane has read this stage: the batch after next goes into it.
    copy_batch(ko0 + 2 * kWarps * kAhead, stage);
    stage ^= 1;
  }
  cp_async_wait<0>();  // the last, empty groups
  // c[0], c[1]: row g of x, weight rows 2r and 2r + 1 of the tile; c[2],
  // c[3]: row g + 8. The sums of a tile's warps meet in shared memory.
  part[warp][g][2 * r] = c[0];
  part[warp][g][2 * r + 1] = c[1];
  part[warp][g + 8][2 * r] = c[2];
  part[warp][g + 8][2 * r + 1] = c[3];
  __syncthreads();
  for (int i = threadIdx.x; i < kTiles * kInt4TileRows * 8; i += 256) {
    const int tile = i / (kInt4TileRows * 8), mm = i / 8 % kInt4TileRows, nr = i % 8;
    const int ot = static_cast<int>(blockIdx.x) * kTiles + tile;
    if (mm < m && ot < tiles) {
      float sum = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) sum += part[tile * kWarps + w][mm][nr];
      out[static_cast<int64_t>(mm) * n + ot * 8 + nr] = __float2bfloat16_rn(sum);
    }
  }
}

// kPairs pairs of tiles a block, each taken by 8 / kPairs warps (as
// kTiles above). A warp's lane holds its word of each tile of the pair:
// the A fragment of k-tile t is (row g, k 2r) of the first tile, the same of
// the second tile (A's row g + 8), then both at k 2r + 8: pairs 2t and
// 2t + 1 of each word. With an odd number of tiles the last pair's second
// tile repeats its first, unstored.
//
// kSiluMul (a MLP's stacked gate and up projections, n / 2 rows each): pair
// p is tile p of the gate half and tile p of the up half, so that a lane's
// sums hold a gate row and its up row, and the store writes
// out[m, n / 2] = silu(gate) * up, each rounded as the separate ops round.
// This saves the decode step the kernel that would read the product back.
template <int IKT, bool kOneGroup, int kPairs, bool kSiluMul = false>
__global__ void __launch_bounds__(256) int4pack_gemv_pair_kernel(const __nv_bfloat16* x, const int32_t* packed,
                                                                 const __nv_bfloat16* sz, __nv_bfloat16* out,
                                                                 int m, int n, int k, int group_shift) {
  static_assert(kPairs == 1 || kPairs == 2 || kPairs == 4, "pairs a block");
  constexpr int kWarps = 8 / kPairs;  // warps a pair
  using Batch = Int4Batch<IKT, kOneGroup>;
  using Copy = Int4Copy<IKT, kOneGroup>;
  constexpr int kHalf = Batch::kHalf, kAhead = Batch::kPairAhead, kScales = Batch::kScales;
  constexpr int kTileK = IKT * 16;
  __shared__ __align__(16) uint32_t words_s[8][2][kAhead][2][32][kHalf];
  __shared__ uint32_t scales_s[8][2][kAhead][2][32][kScales];
  static_assert(sizeof(words_s) + sizeof(scales_s) <= 40 * 1024, "static shared memory");
  __shared__ float part[8][16][kInt4PairRows];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, r = lane & 3;
  const int tiles = n / 8, pairs = kSiluMul ? tiles / 2 : (tiles + 1) / 2;
  const int pair = static_cast<int>(blockIdx.x) * kPairs + warp / kWarps;
  const int wt = warp % kWarps;  // the warp's turn among its pair's
  int t0, t1;
  if constexpr (kSiluMul) {
    t0 = min(pair, pairs - 1);
    t1 = t0 + pairs;
  } else {
    t0 = min(2 * pair, tiles - 1);
    t1 = min(2 * pair + 1, tiles - 1);
  }
  // A warp past the last pair (the grid's last block) sums nothing.
  const int super_tiles = pair < pairs ? k / kTileK : 0;
  const int64_t tile_words = static_cast<int64_t>(k / kTileK) * 32 * kHalf;
  const int32_t* base0 = packed + t0 * tile_words + lane * kHalf;
  const int32_t* base1 = packed + t1 * tile_words + lane * kHalf;
  const uint32_t* sz0 = reinterpret_cast<const uint32_t*>(sz) + t0 * 8 + g;
  const uint32_t* sz1 = reinterpret_cast<const uint32_t*>(sz) + t1 * 8 + g;
  auto copy_batch = [&](int ko0, int stage) {
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int ko = ko0 + kWarps * u;
      if (ko >= super_tiles) break;
      Copy::words(&words_s[warp][stage][u][0][lane][0], base0, ko);
      Copy::words(&words_s[warp][stage][u][1][lane][0], base1, ko);
      Copy::scales(&scales_s[warp][stage][u][0][lane][0], sz0, ko, n, group_shift);
      Copy::scales(&scales_s[warp][stage][u][1][lane][0], sz1, ko, n, group_shift);
    }
    cp_async_commit();
  };
  // This lane's row of x in the B fragments: column g. Rows past m repeat
  // row m - 1; their sums are never stored.
  const __nv_bfloat16* x_row = x + static_cast<int64_t>(min(g, m - 1)) * k + 2 * r;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  dependents_may_start();
  copy_batch(wt, 0);
  copy_batch(wt + kWarps * kAhead, 1);
  dependency_wait();
  // The B fragment of this lane's row of x for super-tile |ko|, tile pair
  // |p|, k-tile |t|: ordered loads, after the wait.
  auto load_b = [&](uint32_t b[2], int ko, int p, int t) {
    const int kk = (ko * IKT + 2 * p) * 16 + 16 * t;
    b[0] = load_after_wait(x_row + kk);
    b[1] = load_after_wait(x_row + kk + 8);
  };
  int stage = 0;
  for (int ko0 = wt; ko0 < super_tiles; ko0 += kWarps * kAhead) {
    uint32_t b_first[kHalf][2][2];
#pragma unroll
    for (int p = 0; p < kHalf; ++p)
#pragma unroll
      for (int t = 0; t < 2; ++t) load_b(b_first[p][t], ko0, p, t);
    cp_async_wait<1>();
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int ko = ko0 + kWarps * u;
      if (ko >= super_tiles) break;
#pragma unroll
      for (int p = 0; p < kHalf; ++p) {
        const uint32_t w0 = words_s[warp][stage][u][0][lane][p], w1 = words_s[warp][stage][u][1][lane][p];
        const __nv_bfloat162 s0 = as_bf162(scales_s[warp][stage][u][0][lane][kOneGroup ? 0 : p]);
        const __nv_bfloat162 s1 = as_bf162(scales_s[warp][stage][u][1][lane][kOneGroup ? 0 : p]);
        const __nv_bfloat162 scale0 = __low2bfloat162(s0), zero0 = __high2bfloat162(s0);
        const __nv_bfloat162 scale1 = __low2bfloat162(s1), zero1 = __high2bfloat162(s1);
#pragma unroll
        for (int t = 0; t < 2; ++t) {
          uint32_t b[2];
          if (u == 0) {
            b[0] = b_first[p][t][0];
            b[1] = b_first[p][t][1];
          } else {
            load_b(b, ko, p, t);
          }
          const uint32_t a[4] = {bits_of(int4_dequant_pair(w0, 2 * t, scale0, zero0)),
                                 bits_of(int4_dequant_pair(w1, 2 * t, scale1, zero1)),
                                 bits_of(int4_dequant_pair(w0, 2 * t + 1, scale0, zero0)),
                                 bits_of(int4_dequant_pair(w1, 2 * t + 1, scale1, zero1))};
          mma_bf16_16816(c, a, b[0], b[1]);
        }
      }
    }
    copy_batch(ko0 + 2 * kWarps * kAhead, stage);
    stage ^= 1;
  }
  cp_async_wait<0>();
  // c[0], c[1]: weight row g of the pair's first tile, rows 2r and 2r + 1
  // of x; c[2], c[3]: row g of its second tile.
  part[warp][g][2 * r] = c[0];
  part[warp][g][2 * r + 1] = c[1];
  part[warp][g + 8][2 * r] = c[2];
  part[warp][g + 8][2 * r + 1] = c[3];
  __syncthreads();
  if constexpr (kSiluMul) {
    // Output 8p + g of the n / 2 takes gate row 8p + g (the pair's first
    // tile) and up row 8p + g (its second): the block's pairs are 8 * kPairs
    // consecutive outputs.
    const int half = n / 2;
    for (int i = threadIdx.x; i < kPairs * 8 * kInt4PairRows; i += 256) {
      const int mm = i / (kPairs * 8), col = i % (kPairs * 8);
      const int pr = col / 8, wrow = col % 8;
      const int p = static_cast<int>(blockIdx.x) * kPairs + pr;
      if (mm < m && p < pairs) {
        float gate = 0.f, up = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
          gate += part[pr * kWarps + w][wrow][mm];
          up += part[pr * kWarps + w][wrow + 8][mm];
        }
        out[static_cast<int64_t>(mm) * half + p * 8 + wrow] = silu_mul_bf16(gate, up);
      }
    }
  } else {
    // A row of x at a time, so that neighbouring threads store neighbouring
    // outputs: the block's pairs are 16 * kPairs consecutive columns.
    for (int i = threadIdx.x; i < kPairs * 16 * kInt4PairRows; i += 256) {
      const int mm = i / (kPairs * 16), col = i % (kPairs * 16);
      const int pr = col / 16, wrow = col % 16;
      const int tile = 2 * (static_cast<int>(blockIdx.x) * kPairs + pr) + wrow / 8;
      if (mm < m && tile < tiles) {
        float sum = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) sum += part[pr * kWarps + w][wrow][mm];
        out[static_cast<int64_t>(mm) * n + tile * 8 + wrow % 8] = __float2bfloat16_rn(sum);
      }
    }
  }
}

struct Int4TileArgs {
  const __nv_bfloat16* x;
  const int32_t* packed;
  const __nv_bfloat16* sz;
  __nv_bfloat16* out;
  int m, n, k, group_shift;
};

template <class Kernel>
cudaError_t launch_int4(Kernel kernel, unsigned blocks, const Int4TileArgs& a, cudaStream_t stream, bool dependent) {
  if (dependent)
    return cuda_launch_dependent(kernel, dim3(blocks), dim3(256), 0, stream, a.x, a.packed, a.sz, a.out, a.m, a.n,
                                 a.k, a.group_shift);
  kernel<<<blocks, 256, 0, stream>>>(a.x, a.packed, a.sz, a.out, a.m, a.n, a.k, a.group_shift);
  return cudaGetLastError();
}

// |per_block| tiles (the tile kernel) or pairs of tiles (the pair kernel) a
// block.
template <int IKT, int kPer>
cudaError_t launch_int4_tile(const Int4TileArgs& a, cudaStream_t stream, bool dependent, bool silu_mul) {
  const bool one_group = (1 << a.group_shift) >= IKT * 16;
  if (silu_mul) {
    const unsigned blocks = static_cast<unsigned>((a.n / 16 + kPer - 1) / kPer);
    return one_group ? launch_int4(int4pack_gemv_pair_kernel<IKT, true, kPer, true>, blocks, a, stream, dependent)
                     : launch_int4(int4pack_gemv_pair_kernel<IKT, false, kPer, true>, blocks, a, stream, dependent);
  }
  if (a.m <= kInt4PairRows) {
    const unsigned blocks = static_cast<unsigned>(((a.n / 8 + 1) / 2 + kPer - 1) / kPer);
    return one_group ? launch_int4(int4pack_gemv_pair_kernel<IKT, true, kPer>, blocks, a, stream, dependent)
                     : launch_int4(int4pack_gemv_pair_kernel<IKT, false, kPer>, blocks, a, stream, dependent);
  }
  const unsigned blocks = static_cast<unsigned>((a.n / 8 + kPer - 1) / kPer);
  return one_group ? launch_int4(int4pack_gemv_tile_kernel<IKT, true, kPer>, blocks, a, stream, dependent)
                   : launch_int4(int4pack_gemv_tile_kernel<IKT, false, kPer>, blocks, a, stream, dependent);
}

// Tiles (or pairs) a block: two where each of a tile's 8 warps would have
// less than a batch of super-tiles (a pair's warps at most one: their
// batches are half as deep) and the blocks are many (Llama's MLP gate and
// up projections, k = 2048 in 16 super-tiles), so that blocks stay a few
// waves and a pair's warps each copy a second batch ahead; one elsewhere,
// as fewer blocks than SM slots would leave SMs idle.
template <int IKT>
cudaError_t launch_int4_tile(const Int4TileArgs& a, cudaStream_t stream, bool dependent, int per_block,
                             bool silu_mul = false) {
  const bool pairs = a.m <= kInt4PairRows;
  const int ahead = pairs ? Int4Batch<IKT, true>::kPairAhead : Int4Batch<IKT, true>::kAhead;
  const int units = pairs ? (a.n / 8 + 1) / 2 : a.n / 8;
  const int super_tiles = a.k / (IKT * 16);
  const bool short_k = pairs ? super_tiles <= 8 * ahead : super_tiles < 8 * ahead;
  if (per_block <= 0) per_block = short_k && units >= (pairs ? 512 : 1024) ? 2 : 1;
  if (per_block == 4) return launch_int4_tile<IKT, 4>(a, stream, dependent, silu_mul);
  if (per_block == 2) return launch_int4_tile<IKT, 2>(a, stream, dependent, silu_mul);
  return launch_int4_tile<IKT, 1>(a, stream, dependent, silu_mul);
}

// Whether the mma kernels take the product: up to 16 rows, whole tiles of
// rows and k, a power-of-two group of at least a super-tile pair's 32 k,
// 32-bit offsets and aligned rows of x.
bool int4_tile_fits(const void* x, const int32_t* packed, const void* sz, int64_t m, int64_t n, int64_t k, int ikt,
                    int64_t group) {
  const bool pow2 = group >= 32 && (group & (group - 1)) == 0;
  const bool tiles = n % 8 == 0 && k % (ikt * 16) == 0 && k % 2 == 0;
  const bool small = m * k < (int64_t{1} << 31) && n * k / 8 < (int64_t{1} << 31) && n / 8 < (int64_t{1} << 31);
  return m <= kInt4TileRows && pow2 && tiles && small && reinterpret_cast<uintptr_t>(x) % 4 == 0 &&
         reinterpret_cast<uintptr_t>(sz) % 4 == 0 && reinterpret_cast<uintptr_t>(packed) % 16 == 0;
}

Int4TileArgs int4_tile_args(const void* x, const int32_t* packed, const void* sz, void* out, int64_t m, int64_t n,
                            int64_t k, int64_t group) {
  int shift = 0;
  while ((int64_t{1} << shift) < group) ++shift;
  return Int4TileArgs{static_cast<const __nv_bfloat16*>(x), packed, static_cast<const __nv_bfloat16*>(sz),
                      static_cast<__nv_bfloat16*>(out), static_cast<int>(m), static_cast<int>(n),
                      static_cast<int>(k), shift};
}

}  // namespace

cudaError_t cuda_launch_int4pack_dequant(const int32_t* packed, const void* sz, void* w, int64_t n, int64_t k,
                                         int ikt, int64_t group, cudaStream_t stream) {
  const int64_t words = n * k / 8;
  if (words <= 0) return cudaSuccess;
  if (ikt != 2 && ikt != 4 && ikt != 8) return cudaErrorInvalidValue;
  int4pack_dequant_kernel<<<blocks_for(words), kThreads, 0, stream>>>(
      packed, static_cast<const __nv_bfloat16*>(sz), static_cast<__nv_bfloat16*>(w), n, k, ikt, group);
  return cudaGetLastError();
}

cudaError_t cuda_launch_int4pack_gemv(const void* x, const int32_t* packed, const void* sz, void* out, int64_t m,
                                      int64_t n, int64_t k, int ikt, int64_t group, cudaStream_t stream,
                                      bool dependent_launch, int tiles_per_block) {
  if (m <= 0 || n <= 0) return cudaSuccess;
  if (ikt != 2 && ikt != 4 && ikt != 8) return cudaErrorInvalidValue;
  if (int4_tile_fits(x, packed, sz, m, n, k, ikt, group)) {
    const Int4TileArgs args = int4_tile_args(x, packed, sz, out, m, n, k, group);
    if (ikt == 8) return launch_int4_tile<8>(args, stream, dependent_launch, tiles_per_block);
    if (ikt == 4) return launch_int4_tile<4>(args, stream, dependent_launch, tiles_per_block);
    return launch_int4_tile<2>(args, stream, dependent_launch, tiles_per_block);
  }
  int4pack_gemv_kernel<<<blocks_for(n, kThreads / 32), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x), packed, static_cast<const __nv_bfloat16*>(sz),
      static_cast<__nv_bfloat16*>(out), m, n, k, ikt, group);
  return cudaGetLastError();
}

bool cuda_int4pack_silu_mul_fits(const void* x, const int32_t* packed, const void* sz, int64_t m, int64_t n,
                                 int64_t k, int ikt, int64_t group) {
  return m > 0 && m <= kInt4PairRows && n % 16 == 0 && (ikt == 2 || ikt == 4 || ikt == 8) &&
         int4_tile_fits(x, packed, sz, m, n, k, ikt, group);
}

cudaError_t cuda_launch_int4pack_gemv_silu_mul(const void* x, const int32_t* packed, const void* sz, void* out,
                                               int64_t m, int64_t n, int64_t k, int ikt, int64_t group,
                                               cudaStream_t stream, bool dependent_launch, int pairs_per_block) {
  if (!cuda_int4pack_silu_mul_fits(x, packed, sz, m, n, k, ikt, group)) return cudaErrorInvalidValue;
  if (pairs_per_block != 0 && pairs_per_block != 1 && pairs_per_block != 2 && pairs_per_block != 4)
    return cudaErrorInvalidValue;
  const Int4TileArgs args = int4_tile_args(x, packed, sz, out, m, n, k, group);
  if (ikt == 8) return launch_int4_tile<8>(args, stream, dependent_launch, pairs_per_block, true);
  if (ikt == 4) return launch_int4_tile<4>(args, stream, dependent_launch, pairs_per_block, true);
  return launch_int4_tile<2>(args, stream, dependent_launch, pairs_per_block, true);
}

cudaError_t cuda_launch_scaled_epilogue(const float* acc, void* out, int out_dtype, int64_t ors, int64_t ocs,
                                        int64_t m, int64_t n, const float* sa, int64_t sa_stride, const float* sb,
                                        int64_t sb_stride, const void* bias, int bias_dtype, int64_t bias_stride,
                                        const float* result_scale, cudaStream_t stream) {
  const int64_t total = m * n;
  if (total <= 0) return cudaSuccess;
  switch (out_dtype) {
    case kCudaOpFloat32:
    case kCudaOpFloat16:
    case kCudaOpBFloat16:
    case kFloat8E4m3fn:
    case kFloat8E5m2: break;
    default: return cudaErrorInvalidValue;
  }
  scaled_epilogue_kernel<<<blocks_for(total), kThreads, 0, stream>>>(acc, out, out_dtype, ors, ocs, m, n, sa,
                                                                     sa_stride, sb, sb_stride, bias, bias_dtype,
                                                                     bias_stride, result_scale);
  return cudaGetLastError();
}

cudaError_t cuda_launch_activation(void* x, int dtype, int64_t n, bool gelu, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned g = blocks_for(n);
  switch (dtype) {
    case kCudaOpFloat32: activation_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<float*>(x), n, gelu); break;
    case kCudaOpFloat64: activation_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<double*>(x), n, gelu); break;
    case kCudaOpFloat16: activation_kernel<__half><<<g, kThreads, 0, stream>>>(static_cast<__half*>(x), n, gelu); break;
    case kCudaOpBFloat16:
      activation_kernel<__nv_bfloat16><<<g, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(x), n, gelu);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t cuda_launch_cdist(const void* x1, const void* x2, void* out, int dtype, int64_t batch, int64_t rows1,
                              int64_t rows2, int64_t cols, double p, cudaStream_t stream) {
  const int64_t total = batch * rows1 * rows2;
  if (total <= 0) return cudaSuccess;
  const unsigned g = blocks_for(total);
  if (dtype == kCudaOpFloat32)
    cdist_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<const float*>(x1), static_cast<const float*>(x2),
                                                    static_cast<float*>(out), rows1, rows2, cols, total,
                                                    static_cast<float>(p));
  else if (dtype == kCudaOpFloat64)
    cdist_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<const double*>(x1), static_cast<const double*>(x2),
                                                     static_cast<double*>(out), rows1, rows2, cols, total, p);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t cuda_launch_row_sq_norms(const void* x, void* sq, int dtype, int64_t rows, int64_t cols,
                                     cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  const unsigned g = blocks_for(rows);
  if (dtype == kCudaOpFloat32)
    row_sq_norms_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(sq),
                                                           rows, cols);
  else if (dtype == kCudaOpFloat64)
    row_sq_norms_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<const double*>(x), static_cast<double*>(sq),
                                                            rows, cols);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t cuda_launch_euclid_finish(void* out, const void* n1, const void* n2, int dtype, int64_t batch,
                                      int64_t rows1, int64_t rows2, cudaStream_t stream) {
  const int64_t total = batch * rows1 * rows2;
  if (total <= 0) return cudaSuccess;
  const unsigned g = blocks_for(total);
  if (dtype == kCudaOpFloat32)
    euclid_finish_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<float*>(out), static_cast<const float*>(n1),
                                                            static_cast<const float*>(n2), rows1, rows2, total);
  else if (dtype == kCudaOpFloat64)
    euclid_finish_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<double*>(out),
                                                             static_cast<const double*>(n1),
                                                             static_cast<const double*>(n2), rows1, rows2, total);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t cuda_launch_pdist(const void* x, void* out, int dtype, int64_t rows, int64_t cols, double p,
                              cudaStream_t stream) {
  if (rows <= 1) return cudaSuccess;
  const unsigned g = blocks_for(rows * rows);
  if (dtype == kCudaOpFloat32)
    pdist_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(out), rows,
                                                    cols, static_cast<float>(p));
  else if (dtype == kCudaOpFloat64)
    pdist_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<const double*>(x), static_cast<double*>(out), rows,
                                                     cols, p);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t cuda_launch_trilinear(const void* i1, const void* i2, const void* i3, void* out, int dtype,
                                  const CudaTrilinearShape& s, cudaStream_t stream) {
  if (s.n_out <= 0) return cudaSuccess;
  const unsigned g = blocks_for(s.n_out);
  switch (dtype) {
    case kCudaOpFloat32:
      trilinear_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<const float*>(i1), static_cast<const float*>(i2),
                                                          static_cast<const float*>(i3), static_cast<float*>(out), s);
      break;
    case kCudaOpFloat64:
      trilinear_kernel<double><<<g, kThreads, 0, stream>>>(static_cast<const double*>(i1),
                                                           static_cast<const double*>(i2),
                                                           static_cast<const double*>(i3), static_cast<double*>(out), s);
      break;
    case kCudaOpFloat16:
      trilinear_kernel<__half><<<g, kThreads, 0, stream>>>(static_cast<const __half*>(i1),
                                                           static_cast<const __half*>(i2),
                                                           static_cast<const __half*>(i3), static_cast<__half*>(out), s);
      break;
    case kCudaOpBFloat16:
      trilinear_kernel<__nv_bfloat16><<<g, kThreads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(i1), static_cast<const __nv_bfloat16*>(i2),
          static_cast<const __nv_bfloat16*>(i3), static_cast<__nv_bfloat16*>(out), s);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t cuda_launch_int8_mm(const int8_t* a, int64_t as0, int64_t as1, const int8_t* b, int64_t bs0,
                                int64_t bs1, int32_t* out, int64_t m, int64_t k, int64_t n, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return cudaSuccess;
  const int64_t col_tiles = (n + kTile - 1) / kTile, row_tiles = (m + kTile - 1) / kTile;
  if (col_tiles > INT32_MAX) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535));
  int8_mm_kernel<<<grid, dim3(kTile, kTile), 0, stream>>>(a, as0, as1, b, bs0, bs1, out, m, k, n);
  return cudaGetLastError();
}

cudaError_t cuda_launch_weight_int8_mm(const void* x, int64_t x_row_stride, const int8_t* w, const void* scales,
                                       int64_t scale_stride, void* out, int dtype, int64_t m, int64_t k, int64_t n,
                                       cudaStream_t stream) {
  const int64_t total = m * n;
  if (total <= 0) return cudaSuccess;
  const unsigned g = blocks_for(total, kThreads / 32);
  switch (dtype) {
    case kCudaOpFloat32:
      weight_int8_kernel<float><<<g, kThreads, 0, stream>>>(static_cast<const float*>(x), x_row_stride, w,
                                                            static_cast<const float*>(scales), scale_stride,
                                                            static_cast<float*>(out), m, k, n);
      break;
    case kCudaOpFloat16:
      weight_int8_kernel<__half><<<g, kThreads, 0, stream>>>(static_cast<const __half*>(x), x_row_stride, w,
                                                             static_cast<const __half*>(scales), scale_stride,
                                                             static_cast<__half*>(out), m, k, n);
      break;
    case kCudaOpBFloat16:
      weight_int8_kernel<__nv_bfloat16><<<g, kThreads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(x), x_row_stride, w, static_cast<const __nv_bfloat16*>(scales),
          scale_stride, static_cast<__nv_bfloat16*>(out), m, k, n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace aotirt
