// Launchers for the CUDA selection kernels (cuda_selection.cu): searchsorted
// and bucketize, histc, repeat_interleave and segment_reduce; and of
// embedding_bag (cuda_embedding_bag.cu). Plain C++
// types only, so the .cu file needs none of aotirt's headers. Dtypes are c10
// numbers (3 int32, 4 int64, 5 float16, 6 float32, 7 float64, 15 bfloat16).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

// ---- searchsorted / bucketize ----
// |n| values, each searched in its row of |length| sorted keys (row
// e / values_per_row, or row 0 when rows == 1). Keys and values are both
// double (|int_keys| false) or both int64, already rounded to the dtype torch
// compares in; |sorter| (int64, [rows, length]) may be null. Writes int32 or
// int64 positions into |out|.
struct CudaSearchShape {
  int64_t n = 0, rows = 1, length = 0, values_per_row = 1;
  bool right = false, out_int32 = false;
};
cudaError_t cuda_launch_search(bool int_keys, const void* bounds, const void* values, const int64_t* sorter,
                               void* out, const CudaSearchShape& s, cudaStream_t stream);

// ---- histc ----
// Scratch bytes for cuda_launch_minmax over |n| elements of |dtype| (6 or 7).
cudaError_t cuda_minmax_temp_bytes(int dtype, int64_t n, size_t* bytes);
// The minimum and maximum of contiguous |in| (NaN when any element is NaN,
// as torch's min/max) into lo_hi[0], lo_hi[1] (device memory, 2 doubles).
cudaError_t cuda_launch_minmax(int dtype, const void* in, int64_t n, double* lo_hi, void* temp, size_t bytes,
                               cudaStream_t stream);
// Adds the counts of contiguous |in| (|n| elements) into |hist| (|bins|
// elements of |dtype|, zeroed by the caller) over [lo, hi], both exactly
// representable in |dtype|.
cudaError_t cuda_launch_histc(int dtype, const void* in, int64_t n, int64_t bins, double lo, double hi, void* hist,
                              cudaStream_t stream);

// ---- repeat_interleave ----
// Scratch bytes for cuda_launch_repeat_scan over |n| repeats of |dtype|.
cudaError_t cuda_repeat_temp_bytes(int dtype, int64_t n, size_t* bytes);
// |cumsum| (int64, n) = inclusive sums of repeats (|dtype| 3 or 4, element
// stride |stride|); with |min_out| non-null, also their minimum there.
cudaError_t cuda_launch_repeat_scan(int dtype, const void* repeats, int64_t stride, int64_t n, int64_t* cumsum,
                                    int64_t* min_out, void* temp, size_t bytes, cudaStream_t stream);
// out[p] (|dtype| 3 or 4, |total| elements) = the i whose range
// [cumsum[i-1], cumsum[i]) holds p; positions past cumsum[n-1] get n - 1.
cudaError_t cuda_launch_repeat_expand(int dtype, const int64_t* cumsum, int64_t n, void* out, int64_t total,
                                      cudaStream_t stream);

// ---- segment_reduce ----
enum class CudaSegmentOp : int { kMax = 0, kMin = 1, kSum = 2, kMean = 3, kProd = 4 };
struct CudaSegmentShape {
  int64_t outer = 1, axis_size = 0, inner = 1, segments = 0;
  bool offsets = false;  // |seg| holds offsets [outer, segments + 1], else lengths [outer, segments]
  CudaSegmentOp op = CudaSegmentOp::kSum;
  bool has_initial = false;
  double initial = 0;
};
// Data-dependent faults the plan finds, or'ed into its flag word.
enum : int {
  kSegNegativeLength = 1,   // a length below 0
  kSegRowSumMismatch = 2,   // a row of lengths not summing to axis_size
  kSegPastEnd = 4,          // a segment reaching outside [0, axis_size)
  kSegDecreasing = 8,       // offsets that decrease
};
cudaError_t cuda_segment_plan_temp_bytes(int seg_dtype, const CudaSegmentShape& s, size_t* bytes);
// Each (outer row, segment)'s [starts, ends) along the axis, from contiguous
// |seg| (|seg_dtype| 3 or 4); faults or'ed into *flags (device int, zeroed
// by the caller).
cudaError_t cuda_launch_segment_plan(int seg_dtype, const void* seg, const CudaSegmentShape& s, int64_t* starts,
                                     int64_t* ends, int* flags, void* temp, size_t bytes, cudaStream_t stream);
// Scratch bytes for cuda_launch_segment_reduce (|one_dim| only; else 0).
cudaError_t cuda_segment_reduce_temp_bytes(int dtype, const CudaSegmentShape& s, bool one_dim, size_t* bytes);
// Reduces contiguous |data| ([outer, axis_size, inner], |dtype|) into |out|
// ([outer, segments, inner]) over the planned [starts, ends). |one_dim|
// (1-D data) takes CUB's segmented reduction, as torch does there.
cudaError_t cuda_launch_segment_reduce(int dtype, const void* data, const int64_t* starts, const int64_t* ends,
                                       void* out, const CudaSegmentShape& s, bool one_dim, void* temp, size_t bytes,
                                       cudaStream_t stream);

// ---- embedding_bag (cuda_embedding_bag.cu) ----
// Bag b takes indices [offsets[b], offsets[b + 1]) (bag 0 from 0, the last
// bag to the end of indices), as torch's CUDA kernel. Indices and offsets
// are contiguous of |index_dtype| (3 or 4); weight and per_sample_weights
// are read through their strides. Writes output [num_bags, dim], offset2bag
// (per index), bag_size (per bag) and, for max, max_indices [num_bags, dim].
struct CudaBagShape {
  int mode = 0;  // 0 sum, 1 mean, 2 max
  int64_t num_indices = 0, num_bags = 0, dim = 0, rows = 0;
  int64_t weight_stride0 = 0, weight_stride1 = 1, psw_stride = 0;
  int64_t padding_idx = -1;
};
cudaError_t cuda_launch_embedding_bag(int dtype, int index_dtype, const void* weight, const void* indices,
                                      const void* offsets, const void* per_sample_weights, void* output,
                                      void* offset2bag, void* bag_size, void* max_indices, const CudaBagShape& s,
                                      cudaStream_t stream);

}  // namespace aotirt
