// CUDA scans along one dimension. Three paths:
//  - the dimension is innermost (inner == 1) and the problem small (short
//    lines, as an attention mask's cumsum): one block per line, one launch
//    and no scratch, since there launches and not memory set the time;
//  - the dimension is innermost otherwise: one device-wide scan by key
//    (CUB's decoupled look-back scan, keyed by line), whatever the number and
//    length of the lines, so one long line and many short ones both run at
//    memory speed;
//  - a strided dimension with many lines: one line per thread, neighbouring
//    threads on neighbouring columns, so every step reads and writes whole
//    cache lines.
// cuda_scan.cpp turns the other cases (few lines along a strided dimension)
// into the first by transposing copies, and narrow integer and bool dtypes
// into int64 ones, so the kernels here take five dtypes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/ops/scan/cuda_scan_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

// Storage type S, accumulation type A.
template <class S>
struct Acc {
  using A = S;
  __host__ __device__ static A load(S v) { return v; }
  __host__ __device__ static S store(A v) { return v; }
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
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  return false;
}

// Integer sums and products wrap (through uint64), as torch's do.
template <class A>
struct SumOp {
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else
      return a + b;
  }
};
template <class A>
struct ProdOp {
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else
      return a * b;
  }
};
// log(exp(a) + exp(b)) without overflow; -inf is the empty sum.
template <class A>
struct LogAddExpOp {
  __device__ A operator()(A a, A b) const {
    if (is_nan(a) || is_nan(b)) return a + b;  // NaN
    const A hi = a > b ? a : b, lo = a > b ? b : a;
    if (isinf(hi)) return hi;
    return hi + log1p(exp(lo - hi));
  }
};

// A running extreme and where it was last reached.
template <class A>
struct Extreme {
  A v;
  int64_t i;
};
// Later elements win ties (torch's >= and <=); a NaN wins and stays. This is
// "the latest maximum" under an order with NaN on top, so it is associative.
template <class A, bool kMax>
struct ExtremeOp {
  __device__ Extreme<A> operator()(const Extreme<A>& a, const Extreme<A>& b) const {
    const bool take = is_nan(b.v) || (!is_nan(a.v) && (kMax ? b.v >= a.v : b.v <= a.v));
    return take ? b : a;
  }
};

// ---- per-thread lines ----

template <class S, class Op>
__global__ void scan_lines_kernel(const S* in, S* out, int64_t lines, int64_t length, int64_t inner, Op op) {
  using A = typename Acc<S>::A;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= lines) return;
  const int64_t base = (t / inner) * length * inner + t % inner;
  A acc = Acc<S>::load(in[base]);
  out[base] = Acc<S>::store(acc);
  for (int64_t k = 1; k < length; ++k) {
    const int64_t at = base + k * inner;
    acc = op(acc, Acc<S>::load(in[at]));
    out[at] = Acc<S>::store(acc);
  }
}

template <class S, bool kMax>
__global__ void extreme_lines_kernel(const S* in, S* out, int64_t* indices, int64_t lines, int64_t length,
                                     int64_t inner) {
  using A = typename Acc<S>::A;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= lines) return;
  const int64_t base = (t / inner) * length * inner + t % inner;
  ExtremeOp<A, kMax> op;
  Extreme<A> best{Acc<S>::load(in[base]), 0};
  S best_s = in[base];
  out[base] = best_s;
  indices[base] = 0;
  for (int64_t k = 1; k < length; ++k) {
    const int64_t at = base + k * inner;
    const Extreme<A> next = op(best, Extreme<A>{Acc<S>::load(in[at]), k});
    if (next.i != best.i) best_s = in[at];
    best = next;
    out[at] = best_s;
    indices[at] = best.i;
  }
}

// ---- innermost dimension, small problems: one block per line ----

constexpr int kLineThreads = 256;
constexpr int kLineItems = 8;
constexpr int64_t kLineTile = kLineThreads * kLineItems;

// Lines up to this long, in problems up to this many elements, take a block
// each.
constexpr int64_t kBlockLineMaxLength = 2 * kLineTile;
constexpr int64_t kBlockLineMaxElements = int64_t{1} << 20;

bool block_lines(CudaScanOp op, const CudaScanShape& s) {
  return s.inner == 1 && op != CudaScanOp::kMax && op != CudaScanOp::kMin && s.length <= kBlockLineMaxLength &&
         s.outer * s.length <= kBlockLineMaxElements;
}

// Block b scans line b in tiles of kLineTile: each thread scans its
// kLineItems consecutive elements, the block scans the threads' totals, and
// a carry takes the tile's total to the next. |op| needs no identity: the
// first thread of the first tile takes no prefix, and threads past the end of
// the line only feed threads after them.
template <class S, class Op>
__global__ void __launch_bounds__(kLineThreads) scan_block_lines_kernel(const S* in, S* out, int64_t length, Op op) {
  using A = typename Acc<S>::A;
  using Scan = cub::BlockScan<A, kLineThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ A carry;
  const S* line_in = in + static_cast<int64_t>(blockIdx.x) * length;
  S* line_out = out + static_cast<int64_t>(blockIdx.x) * length;
  for (int64_t tile = 0; tile < length; tile += kLineTile) {
    const int64_t first = tile + static_cast<int64_t>(threadIdx.x) * kLineItems;
    const int64_t left = length - first;
    const int n = left <= 0 ? 0 : (left < kLineItems ? static_cast<int>(left) : kLineItems);
    A v[kLineItems];
    A total{};
#pragma unroll
    for (int j = 0; j < kLineItems; ++j) {
      if (j < n) {
        const A x = Acc<S>::load(line_in[first + j]);
        total = j == 0 ? x : op(total, x);
        v[j] = total;
      }
    }
    A before, tile_total;
    Scan(temp).ExclusiveScan(total, before, op, tile_total);
#pragma unroll
    for (int j = 0; j < kLineItems; ++j) {
      if (j < n) {
        A r = v[j];
        if (threadIdx.x > 0) r = op(before, r);
        if (tile > 0) r = op(carry, r);
        line_out[first + j] = Acc<S>::store(r);
      }
    }
    // A next tile exists only when this one was full, so tile_total is the
    // whole tile's.
    __syncthreads();
    if (threadIdx.x == 0) carry = tile > 0 ? op(carry, tile_total) : tile_total;
    __syncthreads();
  }
}

// ---- innermost dimension: one scan by key ----

struct LineOf {
  int64_t length;
  __host__ __device__ int64_t operator()(int64_t i) const { return i / length; }
};
template <class S>
struct LoadAt {
  const S* in;
  __device__ typename Acc<S>::A operator()(int64_t i) const { return Acc<S>::load(in[i]); }
};
template <class S>
struct LoadExtremeAt {
  const S* in;
  int64_t length;
  __device__ Extreme<typename Acc<S>::A> operator()(int64_t i) const {
    return {Acc<S>::load(in[i]), i % length};
  }
};
template <class S>
struct StoreValue {
  __device__ S operator()(typename Acc<S>::A v) const { return Acc<S>::store(v); }
};
template <class S>
struct StoreExtreme {
  // Values within a line come back exactly: every stored S converts to A
  // and back unchanged.
  __device__ thrust::tuple<S, int64_t> operator()(const Extreme<typename Acc<S>::A>& e) const {
    return thrust::make_tuple(Acc<S>::store(e.v), e.i);
  }
};

template <class S, class Op>
cudaError_t scan_by_key(void* temp, size_t& bytes, const S* in, S* out, const CudaScanShape& s, Op op,
                        cudaStream_t stream) {
  const int64_t n = s.outer * s.length;
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineOf{s.length});
  auto values = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadAt<S>{in});
  auto outputs = thrust::make_transform_output_iterator(out, StoreValue<S>{});
  return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, values, outputs, op, n, cuda::std::equal_to<>{},
                                             stream);
}

template <class S, bool kMax>
cudaError_t extreme_by_key(void* temp, size_t& bytes, const S* in, S* out, int64_t* indices, const CudaScanShape& s,
                           cudaStream_t stream) {
  const int64_t n = s.outer * s.length;
  auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineOf{s.length});
  auto values =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadExtremeAt<S>{in, s.length});
  auto outputs = thrust::make_transform_output_iterator(thrust::make_zip_iterator(thrust::make_tuple(out, indices)),
                                                        StoreExtreme<S>{});
  return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, values, outputs,
                                             ExtremeOp<typename Acc<S>::A, kMax>{}, n, cuda::std::equal_to<>{},
                                             stream);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Runs the scan for storage type S. With |query|, only sets |bytes|.
template <class S>
cudaError_t scan_typed(CudaScanOp op, const void* in_v, void* out_v, int64_t* indices, const CudaScanShape& s,
                       void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  using A = typename Acc<S>::A;
  const S* in = static_cast<const S*>(in_v);
  S* out = static_cast<S*>(out_v);
  if (cuda_scan_per_thread(s)) {
    if (query) {
      bytes = 0;
      return cudaSuccess;
    }
    const int64_t lines = s.outer * s.inner;
    switch (op) {
      case CudaScanOp::kSum:
        scan_lines_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(in, out, lines, s.length, s.inner, SumOp<A>{});
        break;
      case CudaScanOp::kProd:
        scan_lines_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(in, out, lines, s.length, s.inner, ProdOp<A>{});
        break;
      case CudaScanOp::kLogSumExp:
        if constexpr (std::is_floating_point_v<A>)
          scan_lines_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(in, out, lines, s.length, s.inner,
                                                                         LogAddExpOp<A>{});
        else
          return cudaErrorInvalidValue;
        break;
      case CudaScanOp::kMax:
        extreme_lines_kernel<S, true><<<blocks_for(lines), kThreads, 0, stream>>>(in, out, indices, lines, s.length,
                                                                                  s.inner);
        break;
      case CudaScanOp::kMin:
        extreme_lines_kernel<S, false><<<blocks_for(lines), kThreads, 0, stream>>>(in, out, indices, lines,
                                                                                   s.length, s.inner);
        break;
    }
    return cudaGetLastError();
  }
  if (s.inner != 1) return cudaErrorInvalidValue;
  if (block_lines(op, s)) {
    if (query) {
      bytes = 0;
      return cudaSuccess;
    }
    const unsigned lines = static_cast<unsigned>(s.outer);
    switch (op) {
      case CudaScanOp::kSum:
        scan_block_lines_kernel<<<lines, kLineThreads, 0, stream>>>(in, out, s.length, SumOp<A>{});
        break;
      case CudaScanOp::kProd:
        scan_block_lines_kernel<<<lines, kLineThreads, 0, stream>>>(in, out, s.length, ProdOp<A>{});
        break;
      case CudaScanOp::kLogSumExp:
        if constexpr (std::is_floating_point_v<A>)
          scan_block_lines_kernel<<<lines, kLineThreads, 0, stream>>>(in, out, s.length, LogAddExpOp<A>{});
        else
          return cudaErrorInvalidValue;
        break;
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  void* t = query ? nullptr : temp;
  switch (op) {
    case CudaScanOp::kSum: return scan_by_key(t, bytes, in, out, s, SumOp<A>{}, stream);
    case CudaScanOp::kProd: return scan_by_key(t, bytes, in, out, s, ProdOp<A>{}, stream);
    case CudaScanOp::kLogSumExp:
      if constexpr (std::is_floating_point_v<A>) return scan_by_key(t, bytes, in, out, s, LogAddExpOp<A>{}, stream);
      return cudaErrorInvalidValue;
    case CudaScanOp::kMax: return extreme_by_key<S, true>(t, bytes, in, out, indices, s, stream);
    case CudaScanOp::kMin: return extreme_by_key<S, false>(t, bytes, in, out, indices, s, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t dispatch(CudaScanOp op, int dtype, const void* in, void* out, int64_t* indices, const CudaScanShape& s,
                     void* temp, size_t& bytes, bool query, cudaStream_t stream) {
  switch (dtype) {
    case 5: return scan_typed<__half>(op, in, out, indices, s, temp, bytes, query, stream);
    case 6: return scan_typed<float>(op, in, out, indices, s, temp, bytes, query, stream);
    case 7: return scan_typed<double>(op, in, out, indices, s, temp, bytes, query, stream);
    case 15: return scan_typed<__nv_bfloat16>(op, in, out, indices, s, temp, bytes, query, stream);
    case 4: return scan_typed<int64_t>(op, in, out, indices, s, temp, bytes, query, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool cuda_scan_per_thread(const CudaScanShape& s) {
  // Enough lines to fill the GPU one per thread, or lines short enough that
  // a serial walk is as fast as anything.
  return s.inner > 1 && (s.outer * s.inner >= 2048 || s.length <= 64);
}

cudaError_t cuda_scan_temp_bytes(CudaScanOp op, int dtype, const CudaScanShape& s, size_t* bytes) {
  *bytes = 0;
  return dispatch(op, dtype, nullptr, nullptr, nullptr, s, nullptr, *bytes, true, nullptr);
}

cudaError_t cuda_launch_scan(CudaScanOp op, int dtype, const void* in, void* out, int64_t* indices,
                             const CudaScanShape& s, void* temp, size_t temp_bytes, cudaStream_t stream) {
  size_t bytes = temp_bytes;
  return dispatch(op, dtype, in, out, indices, s, temp, bytes, false, stream);
}

}  // namespace aotirt
