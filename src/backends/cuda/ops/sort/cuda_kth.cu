// CUDA picks from sorted lines: kthvalue, mode, median and nanmedian. After
// the stable sort, equal values sit in one run in index order, so each
// answer is a run found by binary search: kthvalue's run is the one holding
// position k - 1 (one thread per line), median's the middle of the non-NaN
// prefix (one thread), and mode's a longest run, found by a block per line
// in which every run's last element measures its run and the block reduces
// the runs in the order torch's kernels break ties.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/ops/sort/cuda_kth_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? b : 65535 * 16);
}

// The value compared: float for the half types, int64 for the integers.
template <class T>
__device__ __forceinline__ auto key(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else if constexpr (std::is_floating_point_v<T>)
    return v;
  else
    return static_cast<int64_t>(v);
}

template <class K>
__device__ __forceinline__ bool nan_of(K v) {
  if constexpr (std::is_floating_point_v<K>) return v != v;
  return false;
}

// The sort's order: NaN above every number.
template <class K>
__device__ __forceinline__ bool less(K a, K b) {
  return nan_of(b) ? !nan_of(a) : a < b;
}

// kthvalue's equality: NaN equals NaN, as torch's search for the k-th value.
template <class K>
__device__ __forceinline__ bool same_kth(K a, K b) {
  return a == b || (nan_of(a) && nan_of(b));
}

// The first position in [lo, hi) where |pred| turns true (|pred| is false
// then true along the sorted line); hi when it never does.
template <class Pred>
__device__ int64_t first_true(int64_t lo, int64_t hi, Pred pred) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// torch's kthvalue lets every thread that meets the k-th value store its
// position, a race it leaves open; on lines within one warp the smallest
// position has been seen to land, so the first element of the run is taken.
template <class T>
__global__ void kth_kernel(const T* sorted, const int64_t* positions, int64_t lines, int64_t n, int64_t k, T* values,
                           int64_t* indices) {
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* s = sorted + l * n;
    const auto v = key(s[k - 1]);
    // The start of the run of values equal to the k-th one (stable sort:
    // its smallest index).
    const int64_t start = first_true(0, k - 1, [&](int64_t j) { return same_kth(key(s[j]), v); });
    values[l] = s[start];
    indices[l] = positions[l * n + start];
  }
}

template <class T>
__global__ void median_kernel(const T* sorted, int64_t n, bool ignore_nan, T* value) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const int64_t numbers = first_true(0, n, [&](int64_t j) { return nan_of(key(sorted[j])); });
  int64_t at;
  if (ignore_nan)
    at = numbers == 0 ? 0 : (numbers - 1) / 2;  // all NaN: a NaN
  else
    at = numbers < n ? n - 1 : (n - 1) / 2;  // any NaN: a NaN
  *value = sorted[at];
}

// torch's fused mode kernel (lines up to 2048 elements) runs 64, 512 or
// 1024 threads (a line up to 128, 1024 or 2048 long) and reduces, over
// sorted positions j < 2 * threads, each position's count of equal values
// so far; a position past the line enters as position 0 with count 1. Of
// equal counts, a thread keeps its even position, a warp's shuffle tree
// keeps the lane whose 5-bit reversal is smallest, and the second tree over
// the warps' results does the same with warp numbers. This is that order as
// one number: lower wins.
__device__ __forceinline__ int64_t fused_rank(int64_t j) {
  const unsigned t = static_cast<unsigned>(j >> 1);
  const unsigned warp = __brev(t >> 5) >> 27;  // 5-bit reversals
  const unsigned lane = __brev(t & 31) >> 27;
  return static_cast<int64_t>((warp << 6) | (lane << 1) | static_cast<unsigned>(j & 1));
}

// The positions torch's fused kernel reduces over for a line of |n|.
__device__ __forceinline__ int64_t fused_span(int64_t n) {
  const int64_t threads = n <= 128 ? 64 : n <= 1024 ? 512 : 1024;
  return 2 * threads;
}

// A run of equal values in a sorted line: its length, where it starts and
// ends, and its rank among runs of the same length (lower wins).
struct Run {
  int64_t length;
  int64_t start;
  int64_t end;
  int64_t rank;
};

struct LongerRun {
  __device__ Run operator()(const Run& a, const Run& b) const {
    if (a.length != b.length) return a.length > b.length ? a : b;
    return a.rank <= b.rank ? a : b;
  }
};

// The mode of each sorted line, as torch's CUDA kernels choose:
//  - |fused| (torch's one-block kernel): of the longest runs, the one whose
//    end comes first in fused_rank's order, and the largest index holding
//    its value (that kernel's final max-reduction over indices), which the
//    stable sort leaves at the run's end;
//  - otherwise (torch sorts, counts runs and takes the first largest count,
//    then the value's first place in the stable order): the smallest value
//    among the longest runs and its smallest index.
// NaN never equals itself, so each NaN is a run of its own.
template <class T>
__global__ void mode_kernel(const T* sorted, const int64_t* positions, int64_t lines, int64_t n, bool fused,
                            T* values, int64_t* indices) {
  using ReduceRun = cub::BlockReduce<Run, kThreads>;
  __shared__ typename ReduceRun::TempStorage temp;
  const int64_t span = fused ? fused_span(n) : 0;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    const T* s = sorted + l * n;
    const int64_t* pos = positions + l * n;
    Run best{0, 0, 0, 0};
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const auto v = key(s[j]);
      const bool last = j + 1 == n || !(key(s[j + 1]) == v);
      if (!last) continue;
      const int64_t start = nan_of(v) ? j : first_true(0, j, [&](int64_t i) { return !less(key(s[i]), v); });
      best = LongerRun()(best, Run{j - start + 1, start, j, fused ? fused_rank(j) : start});
    }
    // The fused kernel's positions past the line: position 0, counted once,
    // which matters only when every value occurs once.
    for (int64_t j = n + threadIdx.x; j < span; j += kThreads) best = LongerRun()(best, Run{1, 0, 0, fused_rank(j)});
    const Run r = ReduceRun(temp).Reduce(best, LongerRun());
    if (threadIdx.x == 0) {
      const int64_t at = fused ? r.end : r.start;
      values[l] = s[at];
      indices[l] = pos[at];
    }
    __syncthreads();  // temp is reused by the next line
  }
}

template <class T>
cudaError_t pick_typed(CudaPickOp op, const void* sorted_v, const int64_t* positions, int64_t lines, int64_t n,
                       int64_t k, bool mode_fused, void* values_v, int64_t* indices, cudaStream_t stream) {
  const T* sorted = static_cast<const T*>(sorted_v);
  T* values = static_cast<T*>(values_v);
  switch (op) {
    case CudaPickOp::kKth:
      kth_kernel<T><<<blocks_for(lines), kThreads, 0, stream>>>(sorted, positions, lines, n, k, values, indices);
      break;
    case CudaPickOp::kMode: {
      const int64_t grid = lines < 65535 * 16 ? lines : 65535 * 16;
      mode_kernel<T><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(sorted, positions, lines, n, mode_fused,
                                                                          values, indices);
      break;
    }
    case CudaPickOp::kMedian:
    case CudaPickOp::kNanMedian:
      median_kernel<T><<<1, 32, 0, stream>>>(sorted, n, op == CudaPickOp::kNanMedian, values);
      break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_pick_sorted(CudaPickOp op, int dtype, const void* sorted, const int64_t* positions, int64_t lines,
                             int64_t n, int64_t k, bool mode_fused, void* values, int64_t* indices,
                             cudaStream_t stream) {
  if (lines <= 0 || n <= 0) return cudaSuccess;
  switch (dtype) {
    case 0: return pick_typed<uint8_t>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 1: return pick_typed<int8_t>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 2: return pick_typed<int16_t>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 3: return pick_typed<int32_t>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 4: return pick_typed<int64_t>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 5: return pick_typed<__half>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 6: return pick_typed<float>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 7: return pick_typed<double>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 11: return pick_typed<bool>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    case 15: return pick_typed<__nv_bfloat16>(op, sorted, positions, lines, n, k, mode_fused, values, indices, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotirt
