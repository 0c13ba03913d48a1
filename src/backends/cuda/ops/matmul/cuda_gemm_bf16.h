// aotirt's own bfloat16 GEMMs. A few-row kernel (cuda_bf16_gemv_rows_launch)
// takes products of one to eight rows, which are bound by reading the
// weights: a bfloat16 decode step (GPT-2's, say) then loads no cuBLASLt and
// none of the host memory it holds once loaded. Larger products
// run on CUTLASS's Hopper GEMM (TMA loads, ping-pong wgmma warpgroups,
// persistent blocks; sm_90a only) where it takes them, so a bfloat16 package on an H100/H200
// loads no cuBLASLt either; CUTLASS's Ampere tensor-core GEMM (mma.sync
// m16n8k16, float32 accumulators, rounded to bfloat16 once) is there for
// other GPUs and when asked (AOTIRT_CUDA_GEMM=aotirt). cuda_matmul.cpp
// decides which applies.
//
// The tensor-core kernels are built only where CUTLASS's headers were found
// at configure time (cutlass/); otherwise cuda_bf16_config_count() is 0.
// Plain C++ types only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// Row-major D[m, n] = alpha * A[m, k] @ B[k, n] + beta * C in bfloat16
// elements, the same layout as CudaF32x3Problem: A row-major (row stride
// lda); B column-major (B[kk, j] at b[j * ldb + kk]) or, with b_row_major,
// row-major (B[kk, j] at b[kk * ldb + j]); C row-major with row stride ldc
// (0 repeats one row, a bias; with beta 0 it is not read and may be null).
// One product (no batches). Pointers are borrowed for the launch.
struct CudaBf16Problem {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  bool b_row_major = false;
  const void* c = nullptr;
  int64_t ldc = 0;
  void* d = nullptr;
  int64_t ldd = 0;
  float alpha = 1.f, beta = 0.f;
};

// A compiled kernel shape: output tile rows and columns, threads per block,
// shared memory per block, the elements it reads C and writes D by (8: C's
// and D's starts and row strides 16-byte aligned; 1: any) and the B layout.
struct CudaBf16Config {
  int tile_m = 0, tile_n = 0, threads = 0;
  int smem_bytes = 0;
  int out_align = 8;
  bool b_row_major = false;
  bool split_k = false;  // takes k in slices (split >= 2), through a workspace
  // A Hopper kernel: no k split (split 1), no general C (only none or a
  // bias row: ldc 0, beta 1), n a multiple of 8.
  bool sm90 = false;
};

// A's and B's starts must be 16-byte aligned, their row strides and k
// multiples of this (8 elements), and n too for a row-major B.
constexpr int kCudaBf16KMultiple = 8;

// The kernel shapes built into this library (0 without CUTLASS).
int cuda_bf16_config_count();
CudaBf16Config cuda_bf16_config(int index);
// How many blocks of config |index| fit on one multiprocessor.
cudaError_t cuda_bf16_blocks_per_sm(int index, int* blocks);

// Queues |p| with config |index|, with |split| k slices for a split_k
// config (1 otherwise). A split config's slices write float32 sums to
// |workspace|, which must hold cuda_bf16_workspace_floats(p, split), and a
// second kernel adds them into D; a Hopper kernel uses |workspace| as
// cuda_bf16_workspace_bytes says. Returns cudaErrorInvalidValue for a
// problem the kernel cannot take (layout, alignment, split, C).
cudaError_t cuda_bf16_launch(int index, const CudaBf16Problem& p, int split, float* workspace, cudaStream_t stream);
// The scratch memory a launch of config |index| with |split| needs (16-byte
// aligned; 0: none): a split's float32 slices (a Hopper kernel needs
// none, but the launch prepares whatever its scheduler would ask for).
cudaError_t cuda_bf16_workspace_bytes(int index, const CudaBf16Problem& p, int split, size_t* bytes);
// The row stride of a split's float32 slices, and the floats they take.
inline int64_t cuda_bf16_workspace_ld(int n) { return (static_cast<int64_t>(n) + 3) / 4 * 4; }
inline int64_t cuda_bf16_workspace_floats(const CudaBf16Problem& p, int split) {
  return split > 1 ? static_cast<int64_t>(split) * p.m * cuda_bf16_workspace_ld(p.n) : 0;
}

// The config and k split for |p| on |sm_count| multiprocessors, given the
// built configs (|count| of them); |out_align| is the largest access (1 or
// 8 elements) C and D allow. config -1: none takes it.
struct CudaBf16Choice {
  int config = -1;
  int split = 1;
};
CudaBf16Choice cuda_bf16_choose(const CudaBf16Problem& p, int out_align, int sm_count,
                                const CudaBf16Config* configs, int count);

// Few-row bfloat16 GEMMs (m <= kCudaBf16GemvMaxRows): float32 sums, one
// rounding to bfloat16. A column-major B (a tied embedding read as the
// output layer) takes a warp per output column; a row-major B (GPT-2's
// Conv1D weights, [in, out]) a block per 32 columns whose threads split k
// and sum their parts in shared memory. Any alignment; 16-byte loads where
// the strides allow. With |dependent_launch| (Hopper and later) the kernel
// is launched with programmatic dependent launch: it starts reading the
// weights before the kernel ahead of it on the stream ends, and reads A and
// writes D only after that kernel is done. |column_warps| (1, 2, 4 or 8;
// k-contiguous B with 16-byte loads only) fixes how many warps share an
// output column, for timing; 0 lets the kernel choose.
constexpr int kCudaBf16GemvMaxRows = 8;
cudaError_t cuda_bf16_gemv_rows_launch(const CudaBf16Problem& p, cudaStream_t stream, bool dependent_launch = false,
                                       int column_warps = 0);

// bfloat16 products of this many rows or more (a long prompt's prefill) go
// to cuBLASLt by default (AOTIRT_CUDA_GEMM=auto) where it opens: at these
// sizes its Hopper kernels beat the CUTLASS ones built here, while below
// them the CUTLASS kernels are ahead and leave cuBLASLt unloaded.
constexpr int kCudaBf16VendorRows = 1024;

}  // namespace aotirt
