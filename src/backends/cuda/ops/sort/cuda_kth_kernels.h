// Launchers for the CUDA order statistics (cuda_kth.cu): kthvalue and mode
// along a dimension, median and nanmedian of every element. They read lines
// already ordered by the stable sort (cuda_sort_kernels.h: NaN
// above every number, -0.0 with 0.0, equal values in index order) and pick
// one element of each. Plain C++ types only, so the .cu file needs none of
// aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

enum class CudaPickOp : int { kKth = 0, kMode = 1, kMedian = 2, kNanMedian = 3 };

// |sorted| ([lines, n], c10 |dtype|, contiguous) holds every line in
// ascending order and |positions| each element's index in its line. Writes
// one value per line to |values| ([lines], bit for bit from the element
// picked) and, for kKth and kMode, its index to |indices|:
//  - kKth: the k-th smallest (1-based |k|); among equal values (NaN equal
//    to NaN) the smallest index;
//  - kMode: the most frequent value (each NaN counts once) and an index
//    holding it, chosen among ties as torch's CUDA kernels choose: its
//    one-block kernel when |mode_fused| (lines up to 2048 elements, 32-bit
//    indexable), its sort and count path otherwise (see cuda_kth.cu);
//  - kMedian: the lower middle element, NaN when the line holds one
//    (|lines| 1);
//  - kNanMedian: the lower middle of the non-NaN elements, NaN when there
//    are none (|lines| 1).
cudaError_t cuda_pick_sorted(CudaPickOp op, int dtype, const void* sorted, const int64_t* positions, int64_t lines,
                             int64_t n, int64_t k, bool mode_fused, void* values, int64_t* indices,
                             cudaStream_t stream);

}  // namespace aotirt
