// CUDA sort and topk. Each value becomes an unsigned key of its width whose
// unsigned order is the order wanted: integers flip their sign bit, floats
// flip every bit when negative and only the sign bit otherwise (after NaN
// is made one positive NaN, above +inf, and -0.0 becomes 0.0, which torch
// treats as equal), and a descending sort inverts the key. One stable
// segmented radix sort (CUB) then orders every line ascending, carrying each
// element's position, so four key widths cover every dtype. The values are
// gathered from the input by position, bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>

#include "backends/cuda/ops/sort/cuda_sort_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? b : 65535 * 16);
}

// Element width in bytes of c10 dtype |dtype| (the sortable ones), 0 else.
int width_of(int dtype) {
  switch (dtype) {
    case 0: case 1: case 11: return 1;   // uint8, int8, bool
    case 2: case 5: case 15: return 2;   // int16, float16, bfloat16
    case 3: case 6: return 4;            // int32, float32
    case 4: case 7: return 8;            // int64, float64
    default: return 0;
  }
}

enum class KeyKind { kUnsigned, kSigned, kFloat };

KeyKind kind_of(int dtype) {
  switch (dtype) {
    case 0: case 11: return KeyKind::kUnsigned;
    case 5: case 15: case 6: case 7: return KeyKind::kFloat;
    default: return KeyKind::kSigned;
  }
}

// Float layouts by width: exponent and mantissa masks of float16/bfloat16
// (2 bytes; told apart by |bf16|), float32 and float64.
template <class U>
__device__ __forceinline__ U order_key(U bits, KeyKind kind, bool bf16, bool descending) {
  constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
  U key = bits;
  if (kind == KeyKind::kSigned) {
    key = bits ^ sign;
  } else if (kind == KeyKind::kFloat) {
    U exp_mask, man_mask;
    if constexpr (sizeof(U) == 2) {
      exp_mask = bf16 ? U(0x7f80) : U(0x7c00);
      man_mask = bf16 ? U(0x007f) : U(0x03ff);
    } else if constexpr (sizeof(U) == 4) {
      exp_mask = U(0x7f800000u);
      man_mask = U(0x007fffffu);
    } else {
      exp_mask = U(0x7ff0000000000000ull);
      man_mask = U(0x000fffffffffffffull);
    }
    if ((bits & exp_mask) == exp_mask && (bits & man_mask) != 0) {
      key = U(~U(0));  // every NaN: above the largest key a number makes
    } else {
      if (bits == sign) bits = 0;  // -0.0 sorts with 0.0
      key = (bits & sign) ? U(~bits) : U(bits | sign);
    }
  }
  return descending ? U(~key) : key;
}

template <class U>
__global__ void make_keys_kernel(const U* in, U* keys, int64_t* order, int64_t total, int64_t n, KeyKind kind,
                                 bool bf16, bool descending) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    keys[i] = order_key<U>(in[i], kind, bf16, descending);
    order[i] = i % n;
  }
}

// values[l, j] = in[l, order[l, j]] and indices[l, j] = order[l, j], j < k.
template <class U>
__global__ void gather_kernel(const U* in, const int64_t* order, U* values, int64_t* indices, int64_t lines,
                              int64_t n, int64_t k) {
  const int64_t total = lines * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t l = i / k, j = i % k;
    const int64_t at = order[l * n + j];
    values[i] = in[l * n + at];
    indices[i] = at;
  }
}

struct LineStart {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t l) const { return l * n; }
};

template <class U>
cudaError_t sort_typed(const CudaSortShape& s, const void* in_v, void* values, int64_t* indices, void* keys_v,
                       int64_t* order, void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  const int64_t total = s.lines * s.n;
  U* keys = static_cast<U*>(keys_v);
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineStart{s.n});
  auto ends = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(1), LineStart{s.n});
  if (query)
    return cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys, keys, order, order, total, s.lines,
                                                     begins, ends, stream);
  const U* in = static_cast<const U*>(in_v);
  make_keys_kernel<U><<<blocks_for(total), kThreads, 0, stream>>>(in, keys, order, total, s.n, kind_of(s.dtype),
                                                                  s.dtype == 15, s.descending);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  U* keys_out = keys + total;
  int64_t* order_out = order + total;
  err = cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, keys, keys_out, order, order_out, total, s.lines,
                                                  begins, ends, stream);
  if (err != cudaSuccess) return err;
  gather_kernel<U><<<blocks_for(s.lines * s.k), kThreads, 0, stream>>>(in, order_out, static_cast<U*>(values),
                                                                       indices, s.lines, s.n, s.k);
  return cudaGetLastError();
}

cudaError_t dispatch(const CudaSortShape& s, const void* in, void* values, int64_t* indices, void* keys,
                     int64_t* order, void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  switch (width_of(s.dtype)) {
    case 1: return sort_typed<uint8_t>(s, in, values, indices, keys, order, temp, bytes, query, stream);
    case 2: return sort_typed<uint16_t>(s, in, values, indices, keys, order, temp, bytes, query, stream);
    case 4: return sort_typed<uint32_t>(s, in, values, indices, keys, order, temp, bytes, query, stream);
    case 8: return sort_typed<uint64_t>(s, in, values, indices, keys, order, temp, bytes, query, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t cuda_sort_temp_bytes(const CudaSortShape& s, size_t* bytes) {
  *bytes = 0;
  return dispatch(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, *bytes, true, nullptr);
}

cudaError_t cuda_launch_sort(const CudaSortShape& s, const void* in, void* values, int64_t* indices, void* keys,
                             int64_t* order, void* temp, size_t temp_bytes, cudaStream_t stream) {
  size_t bytes = temp_bytes;
  return dispatch(s, in, values, indices, keys, order, temp, bytes, false, stream);
}

}  // namespace aotirt
