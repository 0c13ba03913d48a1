// Strided copy kernels: one thread per element, offsets from the linear index.
// Same-dtype copies move raw bytes in a type of the element's size; converting
// copies read through double (int64 when both sides are integers), matching
// the CPU path's rounding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "backends/cuda/runtime/cuda_copy_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

// c10 ScalarType numbers.
enum : int {
  kU8 = 0, kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4, kF16 = 5, kF32 = 6, kF64 = 7,
  kBool = 11, kBF16 = 15, kF8E5M2 = 23, kF8E4M3FN = 24, kU16 = 27, kU32 = 28, kU64 = 29,
};

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <class Index>
struct Offsets {
  Index dst, src;
};

template <class Index>
__device__ __forceinline__ Offsets<Index> offsets_of(Index linear, const CudaCopyLayout& l) {
  Offsets<Index> o{0, 0};
  for (int d = l.ndim - 1; d >= 0; --d) {
    Index size = static_cast<Index>(l.sizes[d]);
    Index i = linear % size;
    linear /= size;
    o.dst += i * static_cast<Index>(l.dst_strides[d]);
    o.src += i * static_cast<Index>(l.src_strides[d]);
  }
  return o;
}

template <class T, class Index>
__global__ void copy_strided_kernel(T* __restrict__ dst, const T* __restrict__ src, CudaCopyLayout layout,
                                    Index numel) {
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    Offsets<Index> o = offsets_of(i, layout);
    dst[o.dst] = src[o.src];
  }
}

__device__ __forceinline__ bool is_integral(int dtype) {
  return dtype == kU8 || dtype == kI8 || dtype == kI16 || dtype == kI32 || dtype == kI64 || dtype == kBool ||
         dtype == kU16 || dtype == kU32 || dtype == kU64;
}

__device__ __forceinline__ double load_double(const char* p, int dtype) {
  switch (dtype) {
    case kU8: return *reinterpret_cast<const uint8_t*>(p);
    case kI8: return *reinterpret_cast<const int8_t*>(p);
    case kI16: return *reinterpret_cast<const int16_t*>(p);
    case kI32: return *reinterpret_cast<const int32_t*>(p);
    case kI64: return static_cast<double>(*reinterpret_cast<const long long*>(p));
    case kU16: return *reinterpret_cast<const uint16_t*>(p);
    case kU32: return *reinterpret_cast<const uint32_t*>(p);
    case kU64: return static_cast<double>(*reinterpret_cast<const unsigned long long*>(p));
    case kBool: return *reinterpret_cast<const uint8_t*>(p) ? 1.0 : 0.0;
    case kF16: return __half2float(*reinterpret_cast<const __half*>(p));
    case kBF16: return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p));
    case kF32: return *reinterpret_cast<const float*>(p);
    case kF64: return *reinterpret_cast<const double*>(p);
    case kF8E4M3FN: return static_cast<float>(*reinterpret_cast<const __nv_fp8_e4m3*>(p));
    case kF8E5M2: return static_cast<float>(*reinterpret_cast<const __nv_fp8_e5m2*>(p));
  }
  return 0.0;
}

__device__ __forceinline__ long long load_int(const char* p, int dtype) {
  switch (dtype) {
    case kU8: return *reinterpret_cast<const uint8_t*>(p);
    case kI8: return *reinterpret_cast<const int8_t*>(p);
    case kI16: return *reinterpret_cast<const int16_t*>(p);
    case kI32: return *reinterpret_cast<const int32_t*>(p);
    case kI64: return *reinterpret_cast<const long long*>(p);
    case kU16: return *reinterpret_cast<const uint16_t*>(p);
    case kU32: return *reinterpret_cast<const uint32_t*>(p);
    case kU64: return static_cast<long long>(*reinterpret_cast<const unsigned long long*>(p));
    case kBool: return *reinterpret_cast<const uint8_t*>(p) ? 1 : 0;
  }
  return 0;
}

__device__ __forceinline__ void store_double(char* p, int dtype, double v) {
  switch (dtype) {
    case kU8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(static_cast<long long>(v)); break;
    case kI8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(static_cast<long long>(v)); break;
    case kI16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(static_cast<long long>(v)); break;
    case kI32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(static_cast<long long>(v)); break;
    case kI64: *reinterpret_cast<long long*>(p) = static_cast<long long>(v); break;
    case kU16: *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(static_cast<long long>(v)); break;
    case kU32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(static_cast<long long>(v)); break;
    case kU64: *reinterpret_cast<unsigned long long*>(p) = static_cast<unsigned long long>(v); break;
    case kBool: *reinterpret_cast<uint8_t*>(p) = v != 0.0 ? 1 : 0; break;
    // Through float first, as c10's Half/BFloat16 constructors round.
    case kF16: *reinterpret_cast<__half*>(p) = __float2half_rn(static_cast<float>(v)); break;
    case kBF16: *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16_rn(static_cast<float>(v)); break;
    case kF32: *reinterpret_cast<float*>(p) = static_cast<float>(v); break;
    case kF64: *reinterpret_cast<double*>(p) = v; break;
    case kF8E4M3FN: *reinterpret_cast<__nv_fp8_e4m3*>(p) = __nv_fp8_e4m3(static_cast<float>(v)); break;
    case kF8E5M2: *reinterpret_cast<__nv_fp8_e5m2*>(p) = __nv_fp8_e5m2(static_cast<float>(v)); break;
  }
}

__device__ __forceinline__ void store_int(char* p, int dtype, long long v) {
  switch (dtype) {
    case kU8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v); break;
    case kI8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v); break;
    case kI16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(v); break;
    case kI32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
    case kI64: *reinterpret_cast<long long*>(p) = v; break;
    case kU16: *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(v); break;
    case kU32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(v); break;
    case kU64: *reinterpret_cast<unsigned long long*>(p) = static_cast<unsigned long long>(v); break;
    case kBool: *reinterpret_cast<uint8_t*>(p) = v != 0 ? 1 : 0; break;
  }
}

template <class Index>
__global__ void convert_strided_kernel(char* __restrict__ dst, int dst_dtype, int dst_size,
                                       const char* __restrict__ src, int src_dtype, int src_size,
                                       CudaCopyLayout layout, Index numel) {
  const bool via_int = is_integral(dst_dtype) && is_integral(src_dtype);
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    Offsets<Index> o = offsets_of(i, layout);
    const char* s = src + static_cast<long long>(o.src) * src_size;
    char* d = dst + static_cast<long long>(o.dst) * dst_size;
    if (via_int)
      store_int(d, dst_dtype, load_int(s, src_dtype));
    else
      store_double(d, dst_dtype, load_double(s, src_dtype));
  }
}

int dtype_size(int dtype) {
  switch (dtype) {
    case kU8: case kI8: case kBool: case kF8E4M3FN: case kF8E5M2: return 1;
    case kI16: case kF16: case kBF16: case kU16: return 2;
    case kI32: case kF32: case kU32: return 4;
    case kI64: case kF64: case kU64: return 8;
  }
  return 0;
}

// 32-bit index arithmetic is several times cheaper; use it when every offset fits.
bool fits_int32(const CudaCopyLayout& l, int64_t numel) {
  if (numel >= INT32_MAX) return false;
  int64_t dmax = 0, smax = 0;
  for (int d = 0; d < l.ndim; ++d) {
    dmax += (l.sizes[d] - 1) * l.dst_strides[d];
    smax += (l.sizes[d] - 1) * l.src_strides[d];
  }
  return dmax < INT32_MAX && smax < INT32_MAX;
}

unsigned blocks_for(int64_t numel) {
  int64_t blocks = (numel + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), 1 << 16));
}

template <class T>
cudaError_t launch_copy(void* dst, const void* src, const CudaCopyLayout& layout, int64_t numel,
                        cudaStream_t stream) {
  if (fits_int32(layout, numel))
    copy_strided_kernel<T, int32_t><<<blocks_for(numel), kThreads, 0, stream>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), layout, static_cast<int32_t>(numel));
  else
    copy_strided_kernel<T, int64_t><<<blocks_for(numel), kThreads, 0, stream>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), layout, numel);
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_launch_copy_strided(void* dst, const void* src, int elem_size, const CudaCopyLayout& layout,
                                     int64_t numel, cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch_copy<uint8_t>(dst, src, layout, numel, stream);
    case 2: return launch_copy<uint16_t>(dst, src, layout, numel, stream);
    case 4: return launch_copy<uint32_t>(dst, src, layout, numel, stream);
    case 8: return launch_copy<uint64_t>(dst, src, layout, numel, stream);
    case 16: return launch_copy<Bytes16>(dst, src, layout, numel, stream);
  }
  return cudaErrorInvalidValue;
}

bool cuda_convert_supported(int dtype) { return dtype_size(dtype) != 0; }

cudaError_t cuda_launch_convert_strided(void* dst, int dst_dtype, const void* src, int src_dtype,
                                        const CudaCopyLayout& layout, int64_t numel, cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (!cuda_convert_supported(dst_dtype) || !cuda_convert_supported(src_dtype)) return cudaErrorInvalidValue;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (fits_int32(layout, numel))
    convert_strided_kernel<int32_t><<<blocks_for(numel), kThreads, 0, stream>>>(
        d, dst_dtype, dtype_size(dst_dtype), s, src_dtype, dtype_size(src_dtype), layout,
        static_cast<int32_t>(numel));
  else
    convert_strided_kernel<int64_t><<<blocks_for(numel), kThreads, 0, stream>>>(
        d, dst_dtype, dtype_size(dst_dtype), s, src_dtype, dtype_size(src_dtype), layout, numel);
  return cudaGetLastError();
}

}  // namespace aotirt
