// Launchers for the CUDA sort and topk (cuda_sort.cu): every line of a
// [lines, n] contiguous tensor is ordered by a stable radix sort of
// order-preserving unsigned keys, or, for topk with k well below n, its k
// first keys are found by a radix select and only those are ordered.
// Plain C++ types only, so the .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

// The longest line the sort takes: positions within a line are 32-bit.
constexpr int64_t kCudaSortMaxLine = 2147483647;

struct CudaSortShape {
  int64_t lines = 1, n = 1, k = 1;
  int dtype = 6;        // c10 number of the values
  bool descending = false;
  // Only the first k of each line are wanted, in order (topk): a radix
  // select may narrow each line to k before anything is sorted, and equal
  // values among the k then come in no promised index order.
  bool select = false;
};

// Device scratch bytes cuda_launch_sort needs for |s|.
cudaError_t cuda_sort_temp_bytes(const CudaSortShape& s, size_t* bytes);

// Orders each line of |in| ([lines, n], contiguous, s.dtype, 1 <= n <=
// kCudaSortMaxLine) and writes the first s.k values of each line to
// |values| and their positions to |indices| (both [lines, k], contiguous;
// k >= 1). |temp| holds cuda_sort_temp_bytes(s) bytes. NaN orders above
// every number, and without s.select equal keys (-0.0 and 0.0 too) keep
// their order, as torch's stable sort does.
cudaError_t cuda_launch_sort(const CudaSortShape& s, const void* in, void* values, int64_t* indices, void* temp,
                             size_t temp_bytes, cudaStream_t stream);

}  // namespace aotirt
