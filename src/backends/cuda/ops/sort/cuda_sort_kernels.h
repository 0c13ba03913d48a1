// Launchers for the CUDA sort and topk (cuda_sort.cu): every line of a
// [lines, n] contiguous tensor is ordered by a stable segmented radix sort
// of order-preserving unsigned keys, and the first k of each line gathered.
// Plain C++ types only, so the .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

struct CudaSortShape {
  int64_t lines = 1, n = 1, k = 1;
  int dtype = 6;        // c10 number of the values
  bool descending = false;
};

// Device scratch bytes cuda_launch_sort needs for |s|, besides the caller's
// buffers.
cudaError_t cuda_sort_temp_bytes(const CudaSortShape& s, size_t* bytes);

// Orders each line of |in| ([lines, n], contiguous, s.dtype) and writes the
// first s.k values of each line to |values| and their positions to
// |indices| (both [lines, k], contiguous). |keys| holds lines * n * 2
// elements of the dtype's width and |order| lines * n * 2 int64 (the sort's
// buffers). NaN orders above every number, and equal keys (-0.0 and 0.0
// too) keep their order, as torch's stable sort does.
cudaError_t cuda_launch_sort(const CudaSortShape& s, const void* in, void* values, int64_t* indices, void* keys,
                             int64_t* order, void* temp, size_t temp_bytes, cudaStream_t stream);

}  // namespace aotirt
