// aotirt's own float32 GEMMs, which keep float32 models off cuBLASLt (and
// the host memory it holds once loaded). On tensor cores at
// float32 accuracy ("3xTF32", through CUTLASS): each float32 operand value
// is split into a TF32 head and a TF32 rest, and each product taken as
// three TF32 products (rest * head, head * rest, head * head), so about 22
// significand bits take part where one TF32 pass keeps 11. PyTorch leaves
// TF32 off for float32 matmuls, which puts them on the GPU's plain float32
// units (cuBLAS's SIMT kernels), at a fraction of the tensor cores' rate.
// And a few-row kernel (cuda_gemv_rows_launch) for
// products of one to eight rows, which are bound by reading the weights.
//
// The 3xTF32 kernels are built only where CUTLASS's headers were found at
// configure time (cutlass/); otherwise cuda_f32x3_config_count() is 0.
// Plain C++ types only: cuda_matmul.cpp decides when they apply.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// Row-major D[m, n] = alpha * A[m, k] @ B[k, n] + beta * C, |batch| times.
// A is row-major (k contiguous, row stride lda); B column-major (k
// contiguous: B[kk, j] at b[j * ldb + kk]) or, with b_row_major, row-major
// (B[kk, j] at b[kk * ldb + j]). C is row-major with row stride ldc; ldc 0
// repeats one row (a bias). With beta 0, C is not read and may be null.
// stride_* are the element strides between batches (0 repeats an operand).
// Pointers are borrowed for the launch.
struct CudaF32x3Problem {
  int m = 0, n = 0, k = 0;
  int batch = 1;
  const float* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const float* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  bool b_row_major = false;
  const float* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  float* d = nullptr;
  int64_t ldd = 0, stride_d = 0;
  float alpha = 1.f, beta = 0.f;
};

// A compiled kernel shape: output tile rows and columns, threads per block,
// shared memory per block, and the floats it reads C and writes D by (4:
// C's and D's starts and row strides must be 16-byte aligned; 1: any).
struct CudaF32x3Config {
  int tile_m = 0, tile_n = 0, threads = 0;
  int smem_bytes = 0;
  int out_align = 4;
  bool b_row_major = false;  // the B layout it reads
  bool batched = false;      // batched (no k split) or single (serial k split)
};

// A's and B's starts and row strides must be 16-byte aligned, k a multiple
// of this, and n a multiple of 4 for a row-major B.
constexpr int kCudaF32x3KMultiple = 16;

// The kernel shapes built into this library (0 without CUTLASS).
int cuda_f32x3_config_count();
CudaF32x3Config cuda_f32x3_config(int index);
// How many blocks of config |index| fit on one multiprocessor.
cudaError_t cuda_f32x3_blocks_per_sm(int index, int* blocks);

// Queues |p| with config |index|, its k split into |split| serial slices
// (each slice adds its part to D in float32 after the previous one; batched
// configs take split 1). With |split| > 1, |semaphores| holds at least
// ceil(m / tile_m) * ceil(n / tile_n) zeroed ints; the kernel leaves them
// zero when it ends. Returns cudaErrorInvalidValue for a problem the kernel
// cannot take (layout, batching, alignment).
cudaError_t cuda_f32x3_launch(int index, const CudaF32x3Problem& p, int split, int* semaphores,
                              cudaStream_t stream);

// The choice of kernel shape and k split for |p| on |sm_count|
// multiprocessors, given each config's blocks per multiprocessor (|blocks|,
// |count| entries); |out_align| is the largest access (1 or 4 floats) C and
// D allow. config -1: none takes it.
struct CudaF32x3Choice {
  int config = -1;
  int split = 1;
};
CudaF32x3Choice cuda_f32x3_choose(const CudaF32x3Problem& p, int out_align, int sm_count,
                                  const CudaF32x3Config* configs, const int* blocks, int count);

// Few-row float32 GEMMs (m <= kCudaGemvMaxRows, one batch, B column-major):
// a warp per output column reads its column of B once and keeps a float32
// sum for each row (plain FMAs, as cuBLAS's float32 kernels), so the
// weights stream through at memory speed where a tensor-core tile would be
// mostly empty. Any alignment; k need not be a multiple of 16.
constexpr int kCudaGemvMaxRows = 8;
cudaError_t cuda_gemv_rows_launch(const CudaF32x3Problem& p, cudaStream_t stream);

}  // namespace aotirt
