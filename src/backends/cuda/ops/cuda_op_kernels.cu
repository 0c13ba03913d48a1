// Small elementwise kernels the CUDA ops need around cuBLASLt and cuDNN.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/cuda_op_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ float to_f(T v) { return static_cast<float>(v); }
template <>
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __half from_f(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }

template <class T>
__global__ void add_channel_bias_kernel(T* x, const T* bias, int64_t total, int64_t channels, int64_t inner,
                                        bool channels_last) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = channels_last ? i % channels : (i / inner) % channels;
    x[i] = from_f<T>(to_f(x[i]) + to_f(bias[c]));
  }
}

__global__ void add_channel_bias_kernel_f64(double* x, const double* bias, int64_t total, int64_t channels,
                                            int64_t inner, bool channels_last) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = channels_last ? i % channels : (i / inner) % channels;
    x[i] += bias[c];
  }
}

template <class T>
__global__ void scale_kernel(T* x, int64_t n, float alpha) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = from_f<T>(to_f(x[i]) * alpha);
}

__global__ void scale_kernel_f64(double* x, int64_t n, double alpha) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] *= alpha;
}

// One thread per element of the output, which it writes in order: the
// reads along v are as contiguous as x's last dim.
__global__ void patches_kernel(const uint32_t* x, int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t total,
                               int64_t c, int64_t oh, int64_t ow, int64_t kh, int64_t kw, uint32_t* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = i;
    const int64_t v = r % kw;
    r /= kw;
    const int64_t u = r % kh;
    r /= kh;
    const int64_t ch = r % c;
    r /= c;
    const int64_t pj = r % ow;
    r /= ow;
    const int64_t pi = r % oh;
    const int64_t b = r / oh;
    out[i] = x[b * s0 + ch * s1 + (pi * kh + u) * s2 + (pj * kw + v) * s3];
  }
}

__global__ void pad_channels_kernel(const uint32_t* x, int64_t total, int c, int c_to, uint32_t* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / c_to;
    const int j = static_cast<int>(i - row * c_to);
    out[i] = j < c ? x[row * c + j] : 0u;
  }
}

// The same, a thread per row, for rows widened to 4 (16-byte stores).
__global__ void pad_channels4_kernel(const uint32_t* x, int64_t rows, int c, uint4* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t* src = x + i * c;
    uint4 v = make_uint4(src[0], 0u, 0u, 0u);
    if (c > 1) v.y = src[1];
    if (c > 2) v.z = src[2];
    if (c > 3) v.w = src[3];
    out[i] = v;
  }
}

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>((n + kThreads - 1) / kThreads, 1), 1 << 16));
}

}  // namespace

cudaError_t cuda_launch_add_channel_bias(void* x, const void* bias, int dtype, int64_t outer, int64_t channels,
                                         int64_t inner, bool channels_last, cudaStream_t stream) {
  const int64_t total = outer * channels * inner;
  if (total == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(total);
  switch (dtype) {
    case kCudaOpFloat32:
      add_channel_bias_kernel<float><<<blocks, kThreads, 0, stream>>>(
          static_cast<float*>(x), static_cast<const float*>(bias), total, channels, inner, channels_last);
      break;
    case kCudaOpFloat16:
      add_channel_bias_kernel<__half><<<blocks, kThreads, 0, stream>>>(
          static_cast<__half*>(x), static_cast<const __half*>(bias), total, channels, inner, channels_last);
      break;
    case kCudaOpBFloat16:
      add_channel_bias_kernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(
          static_cast<__nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(bias), total, channels, inner,
          channels_last);
      break;
    case kCudaOpFloat64:
      add_channel_bias_kernel_f64<<<blocks, kThreads, 0, stream>>>(
          static_cast<double*>(x), static_cast<const double*>(bias), total, channels, inner, channels_last);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t cuda_launch_patches(const void* x, const int64_t xs[4], int64_t n, int64_t c, int64_t oh, int64_t ow,
                                int64_t kh, int64_t kw, void* out, cudaStream_t stream) {
  const int64_t total = n * c * oh * ow * kh * kw;
  if (total == 0) return cudaSuccess;
  if (total < 0 || kh <= 0 || kw <= 0) return cudaErrorInvalidValue;
  patches_kernel<<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const uint32_t*>(x), xs[0], xs[1], xs[2],
                                                             xs[3], total, c, oh, ow, kh, kw,
                                                             static_cast<uint32_t*>(out));
  return cudaGetLastError();
}

cudaError_t cuda_launch_scale(void* x, int dtype, int64_t n, double alpha, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(n);
  switch (dtype) {
    case kCudaOpFloat32:
      scale_kernel<float><<<blocks, kThreads, 0, stream>>>(static_cast<float*>(x), n, static_cast<float>(alpha));
      break;
    case kCudaOpFloat16:
      scale_kernel<__half><<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(x), n, static_cast<float>(alpha));
      break;
    case kCudaOpBFloat16:
      scale_kernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(x), n,
                                                                   static_cast<float>(alpha));
      break;
    case kCudaOpFloat64:
      scale_kernel_f64<<<blocks, kThreads, 0, stream>>>(static_cast<double*>(x), n, alpha);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t cuda_launch_pad_channels(const void* x, int64_t rows, int c, int c_to, void* out, cudaStream_t stream) {
  if (rows < 0 || c < 1 || c_to < c) return cudaErrorInvalidValue;
  const int64_t total = rows * c_to;
  if (total == 0) return cudaSuccess;
  if (c_to == 4 && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
    pad_channels4_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(static_cast<const uint32_t*>(x), rows, c,
                                                                   static_cast<uint4*>(out));
    return cudaGetLastError();
  }
  pad_channels_kernel<<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const uint32_t*>(x), total, c, c_to,
                                                                  static_cast<uint32_t*>(out));
  return cudaGetLastError();
}


namespace {

constexpr int kLineBytes = 128;
constexpr int kMaxPrefetchBlocks = 264;  // two an SM on an H200: enough requests in flight

// The instruction only asks L2 for the line, so the kernel ends long before
// the last lines arrive and holds no SM.
__global__ void l2_prefetch_kernel(const char* p, size_t bytes) {
  const size_t stride = size_t(gridDim.x) * blockDim.x * kLineBytes;
  for (size_t off = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * kLineBytes; off < bytes; off += stride)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p + off));
}

}  // namespace

cudaError_t cuda_launch_l2_prefetch(const void* p, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  const size_t lines = (bytes + kLineBytes - 1) / kLineBytes;
  const int blocks = static_cast<int>(std::min<size_t>((lines + kThreads - 1) / kThreads, kMaxPrefetchBlocks));
  l2_prefetch_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const char*>(p), bytes);
  return cudaGetLastError();
}

}  // namespace aotirt
