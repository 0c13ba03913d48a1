// CUDA kernels of the selection family. Each follows the arithmetic of
// torch's own CUDA kernel for the op, so results match bit for bit:
//  - searchsorted: a binary search per value, comparisons written as
//    !(b >= v) / !(b > v) so NaN values land past the end;
//  - histc: the bin is (int)((v - lo) * bins / (hi - lo)) in the input's
//    accumulation type (float for float32), counts added with atomics, in
//    shared memory per block when the bins fit;
//  - repeat_interleave: an inclusive scan of the repeats (CUB), then a
//    binary search per output position;
//  - segment_reduce: one thread per output element walking its segment in
//    order for N-d data, and CUB's segmented reduction for 1-D data (which
//    is what torch runs there, so sums associate the same way). The 16-bit
//    types round after every operation, as c10::Half arithmetic does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/ops/selection/cuda_selection_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

// Blocks for |n| threads, capped: the kernels loop grid-stride past it.
unsigned grid_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// ---- searchsorted ----

template <class K>
__global__ void search_kernel(const K* bounds, const K* values, const int64_t* sorter, void* out, CudaSearchShape s) {
  for (int64_t e = thread_index(); e < s.n; e += thread_count()) {
    const int64_t row = s.rows == 1 ? 0 : e / s.values_per_row;
    const K* b = bounds + row * s.length;
    const int64_t* srt = sorter ? sorter + row * s.length : nullptr;
    const K v = values[e];
    int64_t lo = 0, hi = s.length;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      int64_t at = mid;
      if (srt) {
        // Sorter entries are device data nobody checked: keep reads in the row.
        at = srt[mid];
        at = at < 0 ? 0 : (at >= s.length ? s.length - 1 : at);
      }
      const K m = b[at];
      const bool go_right = s.right ? !(m > v) : !(m >= v);
      if (go_right)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (s.out_int32)
      static_cast<int32_t*>(out)[e] = static_cast<int32_t>(lo);
    else
      static_cast<int64_t*>(out)[e] = lo;
  }
}

// ---- histc ----

struct MinMax {
  double lo, hi;
};
// NaN wins both sides, as torch's min() and max() return NaN.
struct MinMaxOp {
  __device__ MinMax operator()(const MinMax& a, const MinMax& b) const {
    MinMax r;
    r.lo = a.lo != a.lo ? a.lo : (b.lo != b.lo ? b.lo : (b.lo < a.lo ? b.lo : a.lo));
    r.hi = a.hi != a.hi ? a.hi : (b.hi != b.hi ? b.hi : (b.hi > a.hi ? b.hi : a.hi));
    return r;
  }
};
template <class T>
struct ToMinMax {
  const T* in;
  __device__ MinMax operator()(int64_t i) const {
    const double v = static_cast<double>(in[i]);
    return MinMax{v, v};
  }
};

template <class T>
cudaError_t minmax_typed(const void* in, int64_t n, double* lo_hi, void* temp, size_t& bytes, cudaStream_t stream) {
  auto it = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                            ToMinMax<T>{static_cast<const T*>(in)});
  const MinMax init{INFINITY, -INFINITY};
  return cub::DeviceReduce::Reduce(temp, bytes, it, reinterpret_cast<MinMax*>(lo_hi), n, MinMaxOp{}, init, stream);
}

// The bin of |v|, or -1 outside [lo, hi] (NaN included).
template <class A>
__device__ __forceinline__ int64_t histc_bin(A v, A lo, A hi, int64_t bins) {
  if (!(v >= lo && v <= hi)) return -1;
  int64_t b = static_cast<int64_t>(static_cast<int>((v - lo) * static_cast<A>(bins) / (hi - lo)));
  // The top edge belongs to the last bin; the clamps only guard memory.
  if (b >= bins) b = bins - 1;
  return b < 0 ? 0 : b;
}

template <class T>
__global__ void histc_shared_kernel(const T* in, int64_t n, int64_t bins, T lo, T hi, T* hist) {
  extern __shared__ unsigned char smem_raw[];
  T* local = reinterpret_cast<T*>(smem_raw);
  for (int64_t i = threadIdx.x; i < bins; i += blockDim.x) local[i] = T(0);
  __syncthreads();
  for (int64_t e = thread_index(); e < n; e += thread_count()) {
    const int64_t b = histc_bin<T>(in[e], lo, hi, bins);
    if (b >= 0) atomicAdd(&local[b], T(1));
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < bins; i += blockDim.x)
    if (local[i] != T(0)) atomicAdd(&hist[i], local[i]);
}

template <class T>
__global__ void histc_global_kernel(const T* in, int64_t n, int64_t bins, T lo, T hi, T* hist) {
  for (int64_t e = thread_index(); e < n; e += thread_count()) {
    const int64_t b = histc_bin<T>(in[e], lo, hi, bins);
    if (b >= 0) atomicAdd(&hist[b], T(1));
  }
}

template <class T>
cudaError_t histc_typed(const void* in_v, int64_t n, int64_t bins, double lo, double hi, void* hist_v,
                        cudaStream_t stream) {
  const T* in = static_cast<const T*>(in_v);
  T* hist = static_cast<T*>(hist_v);
  const unsigned grid = grid_for(n);
  // Per-block counts in shared memory while they fit in 32 KiB (every
  // device has at least 48 KiB per block without opting in).
  const size_t shared = static_cast<size_t>(bins) * sizeof(T);
  if (shared <= 32 * 1024) {
    histc_shared_kernel<T><<<grid, kThreads, shared, stream>>>(in, n, bins, static_cast<T>(lo), static_cast<T>(hi),
                                                               hist);
  } else {
    histc_global_kernel<T><<<grid, kThreads, 0, stream>>>(in, n, bins, static_cast<T>(lo), static_cast<T>(hi), hist);
  }
  return cudaGetLastError();
}

// ---- repeat_interleave ----

template <class R>
struct LoadRepeat {
  const R* p;
  int64_t stride;
  __host__ __device__ int64_t operator()(int64_t i) const { return static_cast<int64_t>(p[i * stride]); }
};

template <class R>
cudaError_t repeat_scan_typed(const void* repeats, int64_t stride, int64_t n, int64_t* cumsum, int64_t* min_out,
                              void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  auto it = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                            LoadRepeat<R>{static_cast<const R*>(repeats), stride});
  size_t scan_bytes = 0, min_bytes = 0;
  cudaError_t err = cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, it, cumsum, n, stream);
  if (err != cudaSuccess) return err;
  err = cub::DeviceReduce::Min(nullptr, min_bytes, it, min_out, n, stream);
  if (err != cudaSuccess) return err;
  if (query) {
    bytes = scan_bytes > min_bytes ? scan_bytes : min_bytes;
    return cudaSuccess;
  }
  err = cub::DeviceScan::InclusiveSum(temp, scan_bytes, it, cumsum, n, stream);
  if (err != cudaSuccess || min_out == nullptr) return err;
  return cub::DeviceReduce::Min(temp, min_bytes, it, min_out, n, stream);
}

template <class O>
__global__ void repeat_expand_kernel(const int64_t* cumsum, int64_t n, O* out, int64_t total) {
  for (int64_t p = thread_index(); p < total; p += thread_count()) {
    // The first i with cumsum[i] > p.
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      if (cumsum[mid] > p)
        hi = mid;
      else
        lo = mid + 1;
    }
    out[p] = static_cast<O>(lo < n ? lo : n - 1);
  }
}

// ---- segment_reduce ----

// Arithmetic in storage type S as torch's scalar_t arithmetic does it: the
// 16-bit types compute in float and round each result.
template <class S>
struct SegMath {
  __host__ __device__ static S add(S a, S b) { return a + b; }
  __host__ __device__ static S mul(S a, S b) { return a * b; }
  __host__ __device__ static S div_count(S a, int64_t c) { return a / static_cast<S>(c); }
  __host__ __device__ static bool is_nan(S a) { return a != a; }
  __host__ __device__ static bool less(S a, S b) { return a < b; }
  __host__ __device__ static S from_double(double v) { return static_cast<S>(v); }
  __host__ __device__ static S nan() { return static_cast<S>(NAN); }
  __host__ __device__ static S inf() { return static_cast<S>(INFINITY); }
};
template <class S, class Conv>
struct SegMath16 {
  __host__ __device__ static float f(S a) { return Conv::to_float(a); }
  __host__ __device__ static S r(float a) { return Conv::from_float(a); }
  __host__ __device__ static S add(S a, S b) { return r(f(a) + f(b)); }
  __host__ __device__ static S mul(S a, S b) { return r(f(a) * f(b)); }
  __host__ __device__ static S div_count(S a, int64_t c) { return r(f(a) / f(r(static_cast<float>(c)))); }
  __host__ __device__ static bool is_nan(S a) { return f(a) != f(a); }
  __host__ __device__ static bool less(S a, S b) { return f(a) < f(b); }
  __host__ __device__ static S from_double(double v) { return r(static_cast<float>(v)); }
  __host__ __device__ static S nan() { return r(NAN); }
  __host__ __device__ static S inf() { return r(INFINITY); }
};
struct HalfConv {
  __host__ __device__ static float to_float(__half a) { return __half2float(a); }
  __host__ __device__ static __half from_float(float a) { return __float2half_rn(a); }
};
struct BFloatConv {
  __host__ __device__ static float to_float(__nv_bfloat16 a) { return __bfloat162float(a); }
  __host__ __device__ static __nv_bfloat16 from_float(float a) { return __float2bfloat16_rn(a); }
};
template <>
struct SegMath<__half> : SegMath16<__half, HalfConv> {};
template <>
struct SegMath<__nv_bfloat16> : SegMath16<__nv_bfloat16, BFloatConv> {};

// One step of the reduction; a NaN wins max and min and stays.
template <class S>
struct SegStep {
  CudaSegmentOp op;
  __host__ __device__ S operator()(S acc, S x) const {
    using M = SegMath<S>;
    switch (op) {
      case CudaSegmentOp::kMax:
        if (M::is_nan(acc)) return acc;
        return M::is_nan(x) ? x : (M::less(acc, x) ? x : acc);
      case CudaSegmentOp::kMin:
        if (M::is_nan(acc)) return acc;
        return M::is_nan(x) ? x : (M::less(x, acc) ? x : acc);
      case CudaSegmentOp::kProd: return M::mul(acc, x);
      default: return M::add(acc, x);
    }
  }
};

template <class S>
__host__ __device__ S seg_init(const CudaSegmentShape& s) {
  using M = SegMath<S>;
  if (s.has_initial) return M::from_double(s.initial);
  switch (s.op) {
    case CudaSegmentOp::kMax: return M::from_double(-INFINITY);
    case CudaSegmentOp::kMin: return M::inf();
    case CudaSegmentOp::kProd: return M::from_double(1.0);
    default: return M::from_double(0.0);
  }
}

// mean's last step: the count's division, NaN (or the initial value) for an
// empty segment.
template <class S>
__host__ __device__ S seg_finish_mean(S acc, int64_t count, const CudaSegmentShape& s) {
  using M = SegMath<S>;
  if (count == 0) return s.has_initial ? M::from_double(s.initial) : M::nan();
  return M::is_nan(acc) ? acc : M::div_count(acc, count);
}

template <class S>
__global__ void segment_reduce_kernel(const S* data, const int64_t* starts, const int64_t* ends, S* out,
                                      CudaSegmentShape s) {
  const int64_t total = s.outer * s.segments * s.inner;
  const SegStep<S> step{s.op};
  for (int64_t idx = thread_index(); idx < total; idx += thread_count()) {
    const int64_t line = idx / s.inner, i = idx % s.inner;
    const int64_t o = line / s.segments;
    const int64_t begin = starts[line], end = ends[line];
    S acc = seg_init<S>(s);
    const S* base = data + o * s.axis_size * s.inner + i;
    for (int64_t j = begin; j < end; ++j) acc = step(acc, base[j * s.inner]);
    if (s.op == CudaSegmentOp::kMean) acc = seg_finish_mean<S>(acc, end - begin, s);
    out[idx] = acc;
  }
}

template <class S>
__global__ void segment_mean_finish_kernel(S* out, const int64_t* starts, const int64_t* ends, CudaSegmentShape s) {
  for (int64_t k = thread_index(); k < s.segments; k += thread_count())
    out[k] = seg_finish_mean<S>(out[k], ends[k] - starts[k], s);
}

template <class S>
cudaError_t segment_reduce_typed(const void* data_v, const int64_t* starts, const int64_t* ends, void* out_v,
                                 const CudaSegmentShape& s, bool one_dim, void* temp, size_t& bytes, bool query,
                                 cudaStream_t stream) {
  const S* data = static_cast<const S*>(data_v);
  S* out = static_cast<S*>(out_v);
  if (!one_dim) {
    if (query) {
      bytes = 0;
      return cudaSuccess;
    }
    segment_reduce_kernel<S><<<grid_for(s.outer * s.segments * s.inner), kThreads, 0, stream>>>(data, starts, ends,
                                                                                                out, s);
    return cudaGetLastError();
  }
  // 1-D data: CUB's segmented reduction with the same operator and initial
  // value torch passes it, then mean's division.
  const S init = seg_init<S>(s);
  const SegStep<S> step{s.op == CudaSegmentOp::kMean ? CudaSegmentOp::kSum : s.op};
  cudaError_t err = cub::DeviceSegmentedReduce::Reduce(query ? nullptr : temp, bytes, data, out, s.segments, starts,
                                                       ends, step, init, stream);
  if (err != cudaSuccess || query || s.op != CudaSegmentOp::kMean) return err;
  segment_mean_finish_kernel<S><<<grid_for(s.segments), kThreads, 0, stream>>>(out, starts, ends, s);
  return cudaGetLastError();
}

template <class Fn>
cudaError_t seg_dispatch(int dtype, Fn&& fn) {
  switch (dtype) {
    case 5: return fn(__half());
    case 6: return fn(float());
    case 7: return fn(double());
    case 15: return fn(__nv_bfloat16());
    default: return cudaErrorInvalidValue;
  }
}

// Starts and ends from lengths: an inclusive scan by row gives the ends.
struct RowOf {
  int64_t segments;
  __host__ __device__ int64_t operator()(int64_t i) const { return i / segments; }
};
template <class I>
struct LoadIndex {
  const I* p;
  __host__ __device__ int64_t operator()(int64_t i) const { return static_cast<int64_t>(p[i]); }
};

template <class I>
cudaError_t lengths_scan(const I* lengths, const CudaSegmentShape& s, int64_t* ends, void* temp, size_t& bytes,
                         cudaStream_t stream) {
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{s.segments});
  auto values = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadIndex<I>{lengths});
  return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, values, ends, ::cuda::std::plus<>{},
                                             s.outer * s.segments, ::cuda::std::equal_to<>{}, stream);
}

// Checks each segment, then clips it to the data so no read leaves it.
template <class I>
__global__ void segment_plan_kernel(const I* seg, CudaSegmentShape s, int64_t* starts, int64_t* ends, int* flags) {
  const int64_t lines = s.outer * s.segments;
  int fault = 0;
  for (int64_t l = thread_index(); l < lines; l += thread_count()) {
    int64_t begin, end;
    if (s.offsets) {
      const int64_t o = l / s.segments, k = l % s.segments;
      begin = static_cast<int64_t>(seg[o * (s.segments + 1) + k]);
      end = static_cast<int64_t>(seg[o * (s.segments + 1) + k + 1]);
      if (end < begin) fault |= kSegDecreasing;
    } else {
      const int64_t len = static_cast<int64_t>(seg[l]);
      end = ends[l];  // the inclusive scan's
      begin = end - len;
      if (len < 0) fault |= kSegNegativeLength;
      if (l % s.segments == s.segments - 1 && end != s.axis_size) fault |= kSegRowSumMismatch;
    }
    if (begin < 0 || end > s.axis_size) fault |= kSegPastEnd;
    begin = begin < 0 ? 0 : (begin > s.axis_size ? s.axis_size : begin);
    end = end < begin ? begin : (end > s.axis_size ? s.axis_size : end);
    starts[l] = begin;
    ends[l] = end;
  }
  if (fault) atomicOr(flags, fault);
}

template <class I>
cudaError_t segment_plan_typed(const void* seg_v, const CudaSegmentShape& s, int64_t* starts, int64_t* ends,
                               int* flags, void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  const I* seg = static_cast<const I*>(seg_v);
  const int64_t lines = s.outer * s.segments;
  if (!s.offsets) {
    cudaError_t err = lengths_scan<I>(seg, s, ends, query ? nullptr : temp, bytes, stream);
    if (err != cudaSuccess || query) return err;
  } else if (query) {
    bytes = 0;
    return cudaSuccess;
  }
  if (lines == 0) return cudaSuccess;
  segment_plan_kernel<I><<<grid_for(lines), kThreads, 0, stream>>>(seg, s, starts, ends, flags);
  return cudaGetLastError();
}

}  // namespace

// ---- searchsorted ----

cudaError_t cuda_launch_search(bool int_keys, const void* bounds, const void* values, const int64_t* sorter,
                               void* out, const CudaSearchShape& s, cudaStream_t stream) {
  if (s.n == 0) return cudaSuccess;
  const unsigned grid = grid_for(s.n);
  if (int_keys)
    search_kernel<int64_t><<<grid, kThreads, 0, stream>>>(static_cast<const int64_t*>(bounds),
                                                           static_cast<const int64_t*>(values), sorter, out, s);
  else
    search_kernel<double><<<grid, kThreads, 0, stream>>>(static_cast<const double*>(bounds),
                                                          static_cast<const double*>(values), sorter, out, s);
  return cudaGetLastError();
}

// ---- histc ----

cudaError_t cuda_minmax_temp_bytes(int dtype, int64_t n, size_t* bytes) {
  *bytes = 0;
  switch (dtype) {
    case 6: return minmax_typed<float>(nullptr, n, nullptr, nullptr, *bytes, nullptr);
    case 7: return minmax_typed<double>(nullptr, n, nullptr, nullptr, *bytes, nullptr);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_launch_minmax(int dtype, const void* in, int64_t n, double* lo_hi, void* temp, size_t bytes,
                               cudaStream_t stream) {
  switch (dtype) {
    case 6: return minmax_typed<float>(in, n, lo_hi, temp, bytes, stream);
    case 7: return minmax_typed<double>(in, n, lo_hi, temp, bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_launch_histc(int dtype, const void* in, int64_t n, int64_t bins, double lo, double hi, void* hist,
                              cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (dtype) {
    case 6: return histc_typed<float>(in, n, bins, lo, hi, hist, stream);
    case 7: return histc_typed<double>(in, n, bins, lo, hi, hist, stream);
    default: return cudaErrorInvalidValue;
  }
}

// ---- repeat_interleave ----

cudaError_t cuda_repeat_temp_bytes(int dtype, int64_t n, size_t* bytes) {
  *bytes = 0;
  int64_t dummy = 0;
  switch (dtype) {
    case 3: return repeat_scan_typed<int32_t>(nullptr, 1, n, &dummy, &dummy, nullptr, *bytes, true, nullptr);
    case 4: return repeat_scan_typed<int64_t>(nullptr, 1, n, &dummy, &dummy, nullptr, *bytes, true, nullptr);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_launch_repeat_scan(int dtype, const void* repeats, int64_t stride, int64_t n, int64_t* cumsum,
                                    int64_t* min_out, void* temp, size_t bytes, cudaStream_t stream) {
  switch (dtype) {
    case 3: return repeat_scan_typed<int32_t>(repeats, stride, n, cumsum, min_out, temp, bytes, false, stream);
    case 4: return repeat_scan_typed<int64_t>(repeats, stride, n, cumsum, min_out, temp, bytes, false, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_launch_repeat_expand(int dtype, const int64_t* cumsum, int64_t n, void* out, int64_t total,
                                      cudaStream_t stream) {
  if (total == 0 || n == 0) return cudaSuccess;
  switch (dtype) {
    case 3:
      repeat_expand_kernel<int32_t><<<grid_for(total), kThreads, 0, stream>>>(cumsum, n, static_cast<int32_t*>(out),
                                                                               total);
      break;
    case 4:
      repeat_expand_kernel<int64_t><<<grid_for(total), kThreads, 0, stream>>>(cumsum, n, static_cast<int64_t*>(out),
                                                                               total);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// ---- segment_reduce ----

cudaError_t cuda_segment_plan_temp_bytes(int seg_dtype, const CudaSegmentShape& s, size_t* bytes) {
  *bytes = 0;
  if (s.outer * s.segments == 0) return cudaSuccess;
  switch (seg_dtype) {
    case 3: return segment_plan_typed<int32_t>(nullptr, s, nullptr, nullptr, nullptr, nullptr, *bytes, true, nullptr);
    case 4: return segment_plan_typed<int64_t>(nullptr, s, nullptr, nullptr, nullptr, nullptr, *bytes, true, nullptr);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_launch_segment_plan(int seg_dtype, const void* seg, const CudaSegmentShape& s, int64_t* starts,
                                     int64_t* ends, int* flags, void* temp, size_t bytes, cudaStream_t stream) {
  if (s.outer * s.segments == 0) return cudaSuccess;
  switch (seg_dtype) {
    case 3: return segment_plan_typed<int32_t>(seg, s, starts, ends, flags, temp, bytes, false, stream);
    case 4: return segment_plan_typed<int64_t>(seg, s, starts, ends, flags, temp, bytes, false, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t cuda_segment_reduce_temp_bytes(int dtype, const CudaSegmentShape& s, bool one_dim, size_t* bytes) {
  *bytes = 0;
  if (s.outer * s.segments * s.inner == 0) return cudaSuccess;
  return seg_dispatch(dtype, [&](auto tag) {
    using S = decltype(tag);
    return segment_reduce_typed<S>(nullptr, nullptr, nullptr, nullptr, s, one_dim, nullptr, *bytes, true, nullptr);
  });
}

cudaError_t cuda_launch_segment_reduce(int dtype, const void* data, const int64_t* starts, const int64_t* ends,
                                       void* out, const CudaSegmentShape& s, bool one_dim, void* temp, size_t bytes,
                                       cudaStream_t stream) {
  if (s.outer * s.segments * s.inner == 0) return cudaSuccess;
  return seg_dispatch(dtype, [&](auto tag) {
    using S = decltype(tag);
    return segment_reduce_typed<S>(data, starts, ends, out, s, one_dim, temp, bytes, false, stream);
  });
}

}  // namespace aotirt
