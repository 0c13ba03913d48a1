// CUDA embedding_bag forward: one thread per (bag, feature), walking the
// bag's indices in order, with torch's CUDA arithmetic so results match bit
// for bit: sums in the accumulation type (float for the 16-bit types,
// double for float64), a per-sample weight fused into the sum as one
// multiply-add (what nvcc makes of torch's `sum += w * v`), mean dividing by
// the bag's non-padding count, and max keeping the first of equal values
// (a later NaN never wins, an earlier one stays until a larger value comes).
// Indices outside the weight are skipped rather than read: torch's kernel
// would stop on a device assertion there.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/ops/selection/cuda_selection_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

template <class S>
struct BagType {
  using A = S;
  __device__ static A to_acc(S v) { return v; }
  __device__ static S from_acc(A v) { return v; }
  __device__ static float cmp(S v) { return static_cast<float>(v); }
};
template <>
struct BagType<double> {
  using A = double;
  __device__ static A to_acc(double v) { return v; }
  __device__ static double from_acc(A v) { return v; }
  __device__ static double cmp(double v) { return v; }
};
template <>
struct BagType<__half> {
  using A = float;
  __device__ static A to_acc(__half v) { return __half2float(v); }
  __device__ static __half from_acc(A v) { return __float2half_rn(v); }
  __device__ static float cmp(__half v) { return __half2float(v); }
};
template <>
struct BagType<__nv_bfloat16> {
  using A = float;
  __device__ static A to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_acc(A v) { return __float2bfloat16_rn(v); }
  __device__ static float cmp(__nv_bfloat16 v) { return __bfloat162float(v); }
};

__device__ __forceinline__ float fused(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fused(double a, double b, double c) { return fma(a, b, c); }

template <class S, class I>
__global__ void bag_kernel(const S* weight, const I* indices, const I* offsets, const S* psw, S* output,
                           I* offset2bag, I* bag_size, I* max_indices, CudaBagShape s) {
  using T = BagType<S>;
  using A = typename T::A;
  const int64_t total = s.num_bags * s.dim;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t bag = t / s.dim, f = t % s.dim;
    // Bag 0 starts at 0 whatever offsets[0] says, as in torch's kernel;
    // the range is kept inside indices.
    int64_t begin = bag == 0 ? 0 : static_cast<int64_t>(offsets[bag]);
    int64_t end = bag + 1 < s.num_bags ? static_cast<int64_t>(offsets[bag + 1]) : s.num_indices;
    begin = begin < 0 ? 0 : (begin > s.num_indices ? s.num_indices : begin);
    end = end < begin ? begin : (end > s.num_indices ? s.num_indices : end);
    const S* column = weight + f * s.weight_stride1;
    int64_t count = 0;
    if (s.mode == 2) {
      S best = T::from_acc(A(0));
      int64_t word = -1;
      for (int64_t e = begin; e < end; ++e) {
        const int64_t row = static_cast<int64_t>(indices[e]);
        if (f == 0) offset2bag[e] = static_cast<I>(bag);
        if (row < 0 || row >= s.rows) continue;
        const bool pad = row == s.padding_idx;
        const S v = column[row * s.weight_stride0];
        if (count == 0 || T::cmp(v) > T::cmp(best)) {
          if (!pad) {
            best = v;
            word = row;
          }
        }
        count += pad ? 0 : 1;
      }
      output[t] = best;
      max_indices[t] = static_cast<I>(word);
    } else {
      A sum = A(0);
      for (int64_t e = begin; e < end; ++e) {
        const int64_t row = static_cast<int64_t>(indices[e]);
        if (f == 0) offset2bag[e] = static_cast<I>(bag);
        if (row < 0 || row >= s.rows) continue;
        const bool pad = row == s.padding_idx;
        const A v = pad ? A(0) : T::to_acc(column[row * s.weight_stride0]);
        if (psw)
          sum = fused(T::to_acc(psw[e * s.psw_stride]), v, sum);
        else
          sum += v;
        count += pad ? 0 : 1;
      }
      if (s.mode == 1 && count != 0) sum = sum / static_cast<A>(count);
      output[t] = T::from_acc(sum);
    }
    if (f == 0) bag_size[bag] = static_cast<I>(count);
  }
}

template <class S, class I>
cudaError_t bag_typed(const void* weight, const void* indices, const void* offsets, const void* psw, void* output,
                      void* offset2bag, void* bag_size, void* max_indices, const CudaBagShape& s,
                      cudaStream_t stream) {
  const int64_t total = s.num_bags * s.dim;
  if (total == 0) return cudaSuccess;
  int64_t blocks = (total + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // the kernel strides past it
  bag_kernel<S, I><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const S*>(weight), static_cast<const I*>(indices), static_cast<const I*>(offsets),
      static_cast<const S*>(psw), static_cast<S*>(output), static_cast<I*>(offset2bag), static_cast<I*>(bag_size),
      static_cast<I*>(max_indices), s);
  return cudaGetLastError();
}

template <class I>
cudaError_t bag_by_weight(int dtype, const void* weight, const void* indices, const void* offsets, const void* psw,
                          void* output, void* offset2bag, void* bag_size, void* max_indices, const CudaBagShape& s,
                          cudaStream_t stream) {
  switch (dtype) {
    case 5: return bag_typed<__half, I>(weight, indices, offsets, psw, output, offset2bag, bag_size, max_indices, s,
                                        stream);
    case 6: return bag_typed<float, I>(weight, indices, offsets, psw, output, offset2bag, bag_size, max_indices, s,
                                       stream);
    case 7: return bag_typed<double, I>(weight, indices, offsets, psw, output, offset2bag, bag_size, max_indices, s,
                                        stream);
    case 15: return bag_typed<__nv_bfloat16, I>(weight, indices, offsets, psw, output, offset2bag, bag_size,
                                                max_indices, s, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t cuda_launch_embedding_bag(int dtype, int index_dtype, const void* weight, const void* indices,
                                      const void* offsets, const void* per_sample_weights, void* output,
                                      void* offset2bag, void* bag_size, void* max_indices, const CudaBagShape& s,
                                      cudaStream_t stream) {
  switch (index_dtype) {
    case 3: return bag_by_weight<int32_t>(dtype, weight, indices, offsets, per_sample_weights, output, offset2bag,
                                          bag_size, max_indices, s, stream);
    case 4: return bag_by_weight<int64_t>(dtype, weight, indices, offsets, per_sample_weights, output, offset2bag,
                                          bag_size, max_indices, s, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotirt
