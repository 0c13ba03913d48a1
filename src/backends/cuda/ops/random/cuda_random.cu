// CUDA random kernels. Each thread walks groups of elements (grid-stride);
// group g sets up a Philox4x32-10 state at subsequence g and the call's
// counter offset (curand_init is O(1) for Philox: it only places the
// counter) and takes one 4-word block from it. Uniform draws keep the top
// mantissa-width bits of a word, as the CPU backend does, so rand's [0, 1)
// holds in every dtype; normal values come from Box-Muller over a (0, 1]
// and a [0, 1) uniform, so the logarithm stays finite.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <curand_kernel.h>

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "backends/cuda/ops/random/cuda_random_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t groups) {
  const int64_t b = (groups + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? b : 65535 * 16);
}

__device__ __forceinline__ uint4 group_block(const CudaPhilox& ph, uint64_t g) {
  curandStatePhilox4_32_10_t st;
  curand_init(ph.seed, g, ph.offset, &st);
  return curand4(&st);
}

__device__ __forceinline__ uint32_t word(const uint4& b, int k) {
  return k == 0 ? b.x : k == 1 ? b.y : k == 2 ? b.z : b.w;
}

__device__ __forceinline__ uint64_t join(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// 53 random bits as a double in [0, 1).
__device__ __forceinline__ double unit53(uint32_t lo, uint32_t hi) {
  return static_cast<double>(join(lo, hi) >> 11) * (1.0 / 9007199254740992.0);
}
// The top |digits| (<= 24) bits of |w| in [0, 1).
__device__ __forceinline__ float unit_bits(uint32_t w, int digits) {
  return static_cast<float>(w >> (32 - digits)) * __int_as_float((127 - digits) << 23);
}

// Stores a computed value into element type T, rounding as a cast.
template <class T>
struct Store {
  __device__ static T from_float(float v) { return static_cast<T>(v); }
  __device__ static T from_double(double v) { return static_cast<T>(v); }
  __device__ static T from_int(int64_t v) { return static_cast<T>(v); }
  __device__ static float to_float(T v) { return static_cast<float>(v); }
};
template <>
struct Store<__half> {
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
  __device__ static __half from_double(double v) { return __double2half(v); }
  __device__ static __half from_int(int64_t v) { return __float2half_rn(static_cast<float>(v)); }
  __device__ static float to_float(__half v) { return __half2float(v); }
};
template <>
struct Store<__nv_bfloat16> {
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  __device__ static __nv_bfloat16 from_double(double v) { return __double2bfloat16(v); }
  __device__ static __nv_bfloat16 from_int(int64_t v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
};
template <>
struct Store<bool> {
  __device__ static bool from_int(int64_t v) { return v != 0; }
};

// Mantissa digits of the 32-bit-or-narrower floating types.
template <class T>
constexpr int digits_of() {
  if constexpr (std::is_same_v<T, __half>) return 11;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return 8;
  return 24;
}

// ---- real distributions ----

// Four elements per group, from one 24-bit-or-narrower word each (or two
// normal pairs).
template <class T>
__global__ void real_narrow_kernel(CudaRealDist dist, T* out, int64_t n, float fa, float fb, double a, double b,
                                   CudaPhilox ph) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    float v[4];
    if (dist == CudaRealDist::kUniform) {
      // In double, as the CPU backend: from + u * range, rounded once.
      for (int k = 0; k < 4; ++k) {
        const int64_t i = g * 4 + k;
        if (i < n) out[i] = Store<T>::from_double(static_cast<double>(unit_bits(word(blk, k), digits_of<T>())) * (b - a) + a);
      }
      continue;
    }
    if (dist == CudaRealDist::kNormal) {
      for (int pair = 0; pair < 2; ++pair) {
        const float u1 = static_cast<float>((word(blk, 2 * pair) >> 8) + 1) * 0x1.0p-24f;  // (0, 1]
        const float u2 = unit_bits(word(blk, 2 * pair + 1), 24);
        const float r = sqrtf(-2.0f * logf(u1));
        float s, c;
        sincospif(2.0f * u2, &s, &c);
        v[2 * pair] = fa + fb * r * c;
        v[2 * pair + 1] = fa + fb * r * s;
      }
    } else {
      for (int k = 0; k < 4; ++k) {
        const float u = 1.0f - unit_bits(word(blk, k), 24);  // (0, 1]
        v[k] = -logf(u) / fa;
      }
    }
    for (int k = 0; k < 4; ++k) {
      const int64_t i = g * 4 + k;
      if (i < n) out[i] = Store<T>::from_float(v[k]);
    }
  }
}

// Two float64 elements per group, 53 bits each (one normal pair).
__global__ void real_double_kernel(CudaRealDist dist, double* out, int64_t n, double a, double b, CudaPhilox ph) {
  const int64_t groups = (n + 1) / 2;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    double v[2];
    if (dist == CudaRealDist::kUniform) {
      v[0] = unit53(blk.x, blk.y) * (b - a) + a;
      v[1] = unit53(blk.z, blk.w) * (b - a) + a;
    } else if (dist == CudaRealDist::kNormal) {
      const double u1 = 1.0 - unit53(blk.x, blk.y);  // (0, 1]
      const double u2 = unit53(blk.z, blk.w);
      const double r = sqrt(-2.0 * log(u1));
      double s, c;
      sincospi(2.0 * u2, &s, &c);
      v[0] = a + b * r * c;
      v[1] = a + b * r * s;
    } else {
      v[0] = -log(1.0 - unit53(blk.x, blk.y)) / a;
      v[1] = -log(1.0 - unit53(blk.z, blk.w)) / a;
    }
    out[g * 2] = v[0];
    if (g * 2 + 1 < n) out[g * 2 + 1] = v[1];
  }
}

// ---- integers ----

template <class T>
__global__ void int_kernel(T* out, int64_t n, int64_t low, uint64_t range, CudaPhilox ph) {
  // range == 0 stands for 2^64; ranges above 2^32 take 64-bit draws.
  const bool wide = range == 0 || range > (uint64_t{1} << 32);
  const int per = wide ? 2 : 4;
  const int64_t groups = (n + per - 1) / per;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    for (int k = 0; k < per; ++k) {
      const int64_t i = g * per + k;
      if (i >= n) break;
      uint64_t x;
      if (wide) {
        x = join(word(blk, 2 * k), word(blk, 2 * k + 1));
        if (range != 0) x %= range;
      } else {
        x = word(blk, k) % range;
      }
      out[i] = Store<T>::from_int(static_cast<int64_t>(static_cast<uint64_t>(low) + x));
    }
  }
}

// ---- bernoulli and dropout ----

template <class T>
__global__ void bernoulli_kernel(T* out, int64_t n, const double* p, double p_scalar, CudaPhilox ph) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    for (int k = 0; k < 4; ++k) {
      const int64_t i = g * 4 + k;
      if (i >= n) break;
      const double prob = p ? p[i] : p_scalar;
      out[i] = Store<T>::from_int(static_cast<double>(unit_bits(word(blk, k), 24)) < prob ? 1 : 0);
    }
  }
}

__global__ void check_probs_kernel(const double* p, int64_t n, int* bad) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double v = p[i];
    if (!(v >= 0.0 && v <= 1.0)) *bad = 1;
  }
}

// C is the type torch computes dropout in: float, double for float64.
template <class T, class C>
__global__ void dropout_kernel(const T* in, T* out, uint8_t* mask, int64_t n, double keep, C scale, CudaPhilox ph) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    for (int k = 0; k < 4; ++k) {
      const int64_t i = g * 4 + k;
      if (i >= n) break;
      const bool kept = static_cast<double>(unit_bits(word(blk, k), 24)) < keep;
      C x;
      if constexpr (std::is_same_v<C, double>)
        x = in[i];
      else
        x = Store<T>::to_float(in[i]);
      // x * mask is exact (x, a signed zero, or NaN for a dropped infinity,
      // as in torch); then the scale multiplies.
      const C masked = x * static_cast<C>(kept ? 1 : 0);
      if constexpr (std::is_same_v<C, double>)
        out[i] = masked * scale;
      else
        out[i] = Store<T>::from_float(masked * scale);
      mask[i] = kept ? 1 : 0;
    }
  }
}

// ---- randperm ----

__global__ void perm_keys_kernel(uint64_t* keys, int64_t* order, int64_t n, CudaPhilox ph) {
  const int64_t groups = (n + 1) / 2;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 blk = group_block(ph, static_cast<uint64_t>(g));
    keys[g * 2] = join(blk.x, blk.y);
    order[g * 2] = g * 2;
    if (g * 2 + 1 < n) {
      keys[g * 2 + 1] = join(blk.z, blk.w);
      order[g * 2 + 1] = g * 2 + 1;
    }
  }
}

template <class T>
cudaError_t launch_narrow(CudaRealDist dist, void* out, int64_t n, double a, double b, const CudaPhilox& ph,
                          cudaStream_t stream) {
  real_narrow_kernel<T><<<blocks_for((n + 3) / 4), kThreads, 0, stream>>>(
      dist, static_cast<T*>(out), n, static_cast<float>(a), static_cast<float>(b), a, b, ph);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_int(void* out, int64_t n, int64_t low, uint64_t range, const CudaPhilox& ph, cudaStream_t stream) {
  int_kernel<T><<<blocks_for((n + 1) / 2), kThreads, 0, stream>>>(static_cast<T*>(out), n, low, range, ph);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_bernoulli(void* out, int64_t n, const double* p, double p_scalar, const CudaPhilox& ph,
                             cudaStream_t stream) {
  bernoulli_kernel<T><<<blocks_for((n + 3) / 4), kThreads, 0, stream>>>(static_cast<T*>(out), n, p, p_scalar, ph);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_dropout(const void* in, void* out, uint8_t* mask, int64_t n, double keep, double scale,
                           const CudaPhilox& ph, cudaStream_t stream) {
  dropout_kernel<T, C><<<blocks_for((n + 3) / 4), kThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), mask, n, keep, static_cast<C>(scale), ph);
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_random_real(CudaRealDist dist, int dtype, void* out, int64_t n, double a, double b,
                             const CudaPhilox& ph, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (dtype) {
    case 5: return launch_narrow<__half>(dist, out, n, a, b, ph, stream);
    case 15: return launch_narrow<__nv_bfloat16>(dist, out, n, a, b, ph, stream);
    case 6: return launch_narrow<float>(dist, out, n, a, b, ph, stream);
    case 7:
      real_double_kernel<<<blocks_for((n + 1) / 2), kThreads, 0, stream>>>(dist, static_cast<double*>(out), n, a, b,
                                                                          ph);
      return cudaGetLastError();
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_random_int(int dtype, void* out, int64_t n, int64_t low, uint64_t range, const CudaPhilox& ph,
                            cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (dtype) {
    case 0: return launch_int<uint8_t>(out, n, low, range, ph, stream);
    case 1: return launch_int<int8_t>(out, n, low, range, ph, stream);
    case 2: return launch_int<int16_t>(out, n, low, range, ph, stream);
    case 3: return launch_int<int32_t>(out, n, low, range, ph, stream);
    case 4: return launch_int<int64_t>(out, n, low, range, ph, stream);
    case 5: return launch_int<__half>(out, n, low, range, ph, stream);
    case 6: return launch_int<float>(out, n, low, range, ph, stream);
    case 7: return launch_int<double>(out, n, low, range, ph, stream);
    case 11: return launch_int<bool>(out, n, low, range, ph, stream);
    case 15: return launch_int<__nv_bfloat16>(out, n, low, range, ph, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_random_bernoulli(int dtype, void* out, int64_t n, const double* p, double p_scalar,
                                  const CudaPhilox& ph, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (dtype) {
    case 0: return launch_bernoulli<uint8_t>(out, n, p, p_scalar, ph, stream);
    case 1: return launch_bernoulli<int8_t>(out, n, p, p_scalar, ph, stream);
    case 2: return launch_bernoulli<int16_t>(out, n, p, p_scalar, ph, stream);
    case 3: return launch_bernoulli<int32_t>(out, n, p, p_scalar, ph, stream);
    case 4: return launch_bernoulli<int64_t>(out, n, p, p_scalar, ph, stream);
    case 5: return launch_bernoulli<__half>(out, n, p, p_scalar, ph, stream);
    case 6: return launch_bernoulli<float>(out, n, p, p_scalar, ph, stream);
    case 7: return launch_bernoulli<double>(out, n, p, p_scalar, ph, stream);
    case 11: return launch_bernoulli<bool>(out, n, p, p_scalar, ph, stream);
    case 15: return launch_bernoulli<__nv_bfloat16>(out, n, p, p_scalar, ph, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_random_check_probs(const double* p, int64_t n, int* bad, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  check_probs_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, n, bad);
  return cudaGetLastError();
}

cudaError_t cuda_random_dropout(int dtype, const void* in, void* out, uint8_t* mask, int64_t n, double keep,
                                double scale, const CudaPhilox& ph, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (dtype) {
    case 5: return launch_dropout<__half, float>(in, out, mask, n, keep, scale, ph, stream);
    case 15: return launch_dropout<__nv_bfloat16, float>(in, out, mask, n, keep, scale, ph, stream);
    case 6: return launch_dropout<float, float>(in, out, mask, n, keep, scale, ph, stream);
    case 7: return launch_dropout<double, double>(in, out, mask, n, keep, scale, ph, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_randperm_temp_bytes(int64_t n, size_t* bytes) {
  *bytes = 0;
  return cub::DeviceRadixSort::SortPairs(nullptr, *bytes, static_cast<const uint64_t*>(nullptr),
                                         static_cast<uint64_t*>(nullptr), static_cast<const int64_t*>(nullptr),
                                         static_cast<int64_t*>(nullptr), n, 0, 64, nullptr);
}

cudaError_t cuda_randperm(int64_t n, uint64_t* keys, int64_t* order, int64_t* out, void* temp, size_t temp_bytes,
                          const CudaPhilox& ph, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  perm_keys_kernel<<<blocks_for((n + 1) / 2), kThreads, 0, stream>>>(keys, order, n, ph);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  // Equal keys (probability below n^2 / 2^65) keep index order: a bias far
  // below anything a test of the distribution can see.
  size_t bytes = temp_bytes;
  return cub::DeviceRadixSort::SortPairs(temp, bytes, keys, keys + n, order, out, n, 0, 64, stream);
}

}  // namespace aotirt
