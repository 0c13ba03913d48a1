// Kernels of aotirt's fused decode-step shims on CUDA
// (cuda_fused_decode.cpp): a one-row bfloat16 product with an RMS norm of
// the row before it and the residual add or SiLU-multiply (of its gate and
// up halves) after it, in the same kernel, and the pieces of the general
// path (any dtype and row count): the norm alone, SiLU-multiply alone and
// the residual add alone around the matmul dispatch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// What the product reads: x, or its RMS norm. kSiluMul is the general
// path's SiLU-multiply step alone (cuda_fused_prologue_launch), which the
// one-row kernel makes in its store instead (CudaFusedRow::silu_mul).
enum class CudaFusedPrologue { kNone = 0, kRmsNorm = 1, kSiluMul = 2 };

// out[j] = [residual[j] +] sum_k prologue(x)[k] * w[j, k] [+ bias[j]], all
// bfloat16, rounded where transformers' modules round; with |silu_mul|,
// out[j] = silu(row j's sum) * (row n / 2 + j's sum) for j < n / 2 instead.
struct CudaFusedRow {
  int n = 0, k = 0;
  bool silu_mul = false;
  const void* x = nullptr;         // k elements
  const void* norm = nullptr;      // k elements, kRmsNorm
  float eps = 0.f;
  const void* w = nullptr;         // [n, k], rows ldw apart, k contiguous
  int64_t ldw = 0;
  const void* bias = nullptr;      // n elements or null
  const void* residual = nullptr;  // n elements or null
  void* out = nullptr;             // n elements (n / 2 with silu_mul)
};

// Two forms of the one-row kernel (CudaFusedTest.Timing times them): each
// warp makes the norm of the whole row itself (kWarp; k at most
// kCudaFusedNormMaxK, whose sums one pass of a warp makes), or the block
// makes it once in shared memory (kShared; k at most kCudaFusedSharedMaxK;
// the only form with SiLU-multiply).
enum class CudaFusedRowKernel { kWarp, kShared };
constexpr int kCudaFusedNormMaxK = 2048;
constexpr int kCudaFusedSharedMaxK = 24 * 1024;  // 48 KB of shared memory

// Whether |kernel| takes |p| with |prologue| (kNone or kRmsNorm): k a
// multiple of 8 within its bound, 16-byte aligned rows; with silu_mul, an
// even n and no residual.
bool cuda_fused_row_supported(const CudaFusedRow& p, CudaFusedPrologue prologue,
                              CudaFusedRowKernel kernel = CudaFusedRowKernel::kWarp);
cudaError_t cuda_fused_row_launch(const CudaFusedRow& p, CudaFusedPrologue prologue, cudaStream_t stream,
                                  bool dependent_launch, CudaFusedRowKernel kernel = CudaFusedRowKernel::kWarp);

// The general path's pieces, for float32 (dtype 6), float16 (5) and
// bfloat16 (15), contiguous rows: y[rows, k] = prologue(x) (for kSiluMul,
// x has 2k elements a row: gate, then up); out = residual + out (in
// place), each rounded to the dtype.
cudaError_t cuda_fused_prologue_launch(CudaFusedPrologue prologue, int dtype, const void* x, const void* norm,
                                       float eps, void* y, int64_t rows, int64_t k, cudaStream_t stream);
cudaError_t cuda_fused_residual_launch(int dtype, const void* residual, void* out, int64_t numel,
                                       cudaStream_t stream);

}  // namespace aotirt
