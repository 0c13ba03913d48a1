// Launchers for the CUDA indexing kernels (cuda_indexing.cu): advanced
// indexing (index.Tensor, index_put), scatter and its reductions (which also
// serve index_reduce), and the CUB compactions behind nonzero, masked_select
// and masked_scatter. Plain C++ types only, so the .cu file needs none of
// aotirt's headers. Dtypes are c10 ScalarType numbers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

// Ranks past these are refused by the host code (UNIMPLEMENTED).
constexpr int kCudaIndexMaxDims = 12;
constexpr int kCudaIndexMaxIndices = 8;

// An out-of-range index seen by a kernel: flag[0] becomes 1 and the first
// kernel to see one writes its value to flag[1] and which index (or dim) it
// belonged to to flag[2]. Three int64, zeroed before the launch.
constexpr int kCudaIndexFlagWords = 3;

// ---- advanced indexing ----

// The self offsets of every position of the broadcast index shape B: for each
// B position, sum over k of wrap(index_k) * stride[k], where index_k (int32
// or int64) is read at its strides in B. Values outside [-limit, limit) set
// the flag and give offset -1, which the walks skip (a gather writes zero).
struct CudaIndexOffsets {
  int bdims = 0;
  int64_t bsizes[kCudaIndexMaxDims] = {};
  int nidx = 0;
  const void* index[kCudaIndexMaxIndices] = {};
  bool index64[kCudaIndexMaxIndices] = {};
  int64_t index_strides[kCudaIndexMaxIndices][kCudaIndexMaxDims] = {};
  int64_t limit[kCudaIndexMaxIndices] = {};
  int64_t stride[kCudaIndexMaxIndices] = {};
};
cudaError_t cuda_launch_index_offsets(const CudaIndexOffsets& p, int64_t nb, int64_t* offsets, int64_t* flag,
                                      cudaStream_t stream);

// The walk over index.Tensor's result shape (size-1 dims dropped): for each
// result element, the indexed tensor (self, or index_put's output) is at
// offsets[sum(coord * b_strides)] + sum(coord * indexed_strides) and the
// dense side (the result, or index_put's values) at sum(coord * dense_strides).
struct CudaIndexWalk {
  int ndim = 0;
  int64_t sizes[kCudaIndexMaxDims] = {};
  int64_t b_strides[kCudaIndexMaxDims] = {};
  int64_t indexed_strides[kCudaIndexMaxDims] = {};
  int64_t dense_strides[kCudaIndexMaxDims] = {};
};
enum class CudaIndexMode : int { kGather = 0, kPut = 1, kAccumulate = 2 };
// kGather copies indexed into dense, kPut dense into indexed, kAccumulate
// adds dense into indexed atomically (|dtype| says how; the copies only need
// |element_size|).
cudaError_t cuda_launch_index_walk(CudaIndexMode mode, int dtype, int element_size, void* indexed, void* dense,
                                   const int64_t* offsets, const CudaIndexWalk& w, cudaStream_t stream);

// ---- scatter ----

enum class CudaScatterOp : int { kAssign = 0, kSum = 1, kProd = 2, kAmax = 3, kAmin = 4 };

// A walk over the index tensor's shape: for index element at coord,
// out[coord with coord[dim] = index] op= src[coord] (or the scalar).
struct CudaScatterWalk {
  int ndim = 0;
  int dim = 0;
  int64_t limit = 0;  // out's size along dim
  int64_t sizes[kCudaIndexMaxDims] = {};
  int64_t index_strides[kCudaIndexMaxDims] = {};
  int64_t out_strides[kCudaIndexMaxDims] = {};
  int64_t src_strides[kCudaIndexMaxDims] = {};
};
// |src| null: the scalar whose bits (in |dtype|, low bytes first) are
// |value_bits|. |counts| (int32, indexed by out offset), when given, counts
// the elements each out element receives. Index values outside [0, limit)
// are skipped and set the flag.
cudaError_t cuda_launch_scatter(CudaScatterOp op, int dtype, void* out, const void* src, uint64_t value_bits,
                                const void* index, bool index64, const CudaScatterWalk& w, int32_t* counts,
                                int64_t* flag, cudaStream_t stream);
// Sets every out element an index names to the identity of |op| (0 for
// kSum, 1 for kProd, the lowest value for kAmax, the highest for kAmin):
// include_self=False starts there.
cudaError_t cuda_launch_scatter_identity(CudaScatterOp op, int dtype, void* out, const void* index, bool index64,
                                         const CudaScatterWalk& w, int64_t* flag, cudaStream_t stream);

// mean's last step over out (walk: out's sizes and strides in sizes and
// out_strides): every element with counts[offset] > 0 is divided by
// counts + |extra| (true division for floats, floor division for integers).
cudaError_t cuda_launch_scatter_mean(int dtype, void* out, const int32_t* counts, int extra,
                                     const CudaScatterWalk& w, cudaStream_t stream);

// ---- compaction (CUB) ----

// Device scratch for one of the calls below; |temp| null asks for the size
// in |bytes| and does no work.
// The number of nonzero elements of contiguous |in| (|n| elements of |dtype|;
// NaN is nonzero, -0.0 is not) into |*count| (device).
cudaError_t cuda_count_nonzero(void* temp, size_t& bytes, int dtype, const void* in, int64_t n, int64_t* count,
                               cudaStream_t stream);
// The positions of the nonzero elements of contiguous |in|, ascending, into
// |positions|, and their number into |*count| (device).
cudaError_t cuda_select_nonzero(void* temp, size_t& bytes, int dtype, const void* in, int64_t n, int64_t* positions,
                                int64_t* count, cudaStream_t stream);
// out[k] = in[i] for the i (ascending) where flags[i] != 0, elements of
// |element_size| bytes; their number into |*count| (device).
cudaError_t cuda_select_flagged(void* temp, size_t& bytes, int element_size, const void* in, const bool* flags,
                                int64_t n, void* out, int64_t* count, cudaStream_t stream);

// Turns linear positions into coordinates of |ndim| dims of |sizes|: out is
// column-major [rows, ndim] (element [r, j] at r + j * rows). The positions
// are read from column ndim - 1 (they may be written there), or from
// |positions| when given; rows at or past |*count| (device, when given) take
// |fill|.
struct CudaIndexSizes {
  int ndim = 0;
  int64_t sizes[kCudaIndexMaxDims] = {};
};
cudaError_t cuda_launch_positions_to_coords(int64_t* out, const int64_t* positions, int64_t rows,
                                            const int64_t* count, int64_t fill, const CudaIndexSizes& sizes,
                                            cudaStream_t stream);

// out[positions[k]] = src[k] for k < n, elements of |element_size| bytes.
cudaError_t cuda_launch_scatter_positions(int element_size, void* out, const void* src, const int64_t* positions,
                                          int64_t n, cudaStream_t stream);

}  // namespace aotirt
