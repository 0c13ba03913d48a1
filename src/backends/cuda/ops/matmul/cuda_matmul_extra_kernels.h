// Launchers for the kernels of the CUDA matmul extras (cuda_matmul_extra.cu):
// the activation after _addmm_activation's GEMM, the distance kernels of
// _cdist_forward and _pdist_forward, _trilinear's strided sum of products,
// _int_mm's int8 GEMM and _weight_int8pack_mm's weight-only GEMM. Plain C++
// types only, so the .cu file needs none of aotirt's headers. Dtypes are c10
// numbers (kCudaOp* in cuda_op_kernels.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// x[i] = relu(x[i]) or gelu(x[i]) with gelu's tanh approximation (the one
// torch's CUDA _addmm_activation applies), |n| contiguous elements of a
// floating dtype; half types are computed in float32.
cudaError_t cuda_launch_activation(void* x, int dtype, int64_t n, bool gelu, cudaStream_t stream);

// out[b, i, j] = || x1[b, i, :] - x2[b, j, :] ||_p over |cols| coordinates,
// x1 [batch, rows1, cols], x2 [batch, rows2, cols] and out contiguous,
// float32 or float64. p = 0 counts differing coordinates, p = inf takes the
// largest difference.
cudaError_t cuda_launch_cdist(const void* x1, const void* x2, void* out, int dtype, int64_t batch, int64_t rows1,
                              int64_t rows2, int64_t cols, double p, cudaStream_t stream);
// sq[r] = sum over c of x[r, c]^2 for a contiguous [rows, cols] matrix.
cudaError_t cuda_launch_row_sq_norms(const void* x, void* sq, int dtype, int64_t rows, int64_t cols,
                                     cudaStream_t stream);
// out[b, i, j] = sqrt(max(out[b, i, j] + n1[b, i] + n2[b, j], 1e-30)): the
// end of the p = 2 matrix-product path, |out| holding -2 x1 @ x2^T.
cudaError_t cuda_launch_euclid_finish(void* out, const void* n1, const void* n2, int dtype, int64_t batch,
                                      int64_t rows1, int64_t rows2, cudaStream_t stream);
// The upper-triangle distances of contiguous x [rows, cols], in row-major
// order of the pairs (i, j > i).
cudaError_t cuda_launch_pdist(const void* x, void* out, int dtype, int64_t rows, int64_t cols, double p,
                              cudaStream_t stream);

// _trilinear: out[e] = sum over the summed positions s of i1 * i2 * i3, each
// input read at its own element strides (0 along a dim it was expanded in).
constexpr int kCudaTrilinearMaxDims = 16;
struct CudaTrilinearShape {
  int keep_dims = 0, sum_dims = 0;
  int64_t keep_size[kCudaTrilinearMaxDims];
  int64_t keep_stride[3][kCudaTrilinearMaxDims];
  int64_t sum_size[kCudaTrilinearMaxDims];
  int64_t sum_stride[3][kCudaTrilinearMaxDims];
  int64_t n_out = 0, n_sum = 1;
};
cudaError_t cuda_launch_trilinear(const void* i1, const void* i2, const void* i3, void* out, int dtype,
                                  const CudaTrilinearShape& s, cudaStream_t stream);

// out[m, n] (int32, contiguous) = a @ b for int8 a [m, k] and b [k, n] at
// any element strides; the sums wrap as int32 arithmetic does.
cudaError_t cuda_launch_int8_mm(const int8_t* a, int64_t as0, int64_t as1, const int8_t* b, int64_t bs0,
                                int64_t bs1, int32_t* out, int64_t m, int64_t k, int64_t n, cudaStream_t stream);

// out[m, n] (contiguous, |dtype|) = (sum over k of x[m, k] * w[n, k]) *
// scales[n], accumulated in float32 and rounded once: x [m, k] of |dtype|
// with rows |x_row_stride| apart and k contiguous, w int8 [n, k]
// contiguous, scales [n] of |dtype| at |scale_stride|.
cudaError_t cuda_launch_weight_int8_mm(const void* x, int64_t x_row_stride, const int8_t* w, const void* scales,
                                       int64_t scale_stride, void* out, int dtype, int64_t m, int64_t k, int64_t n,
                                       cudaStream_t stream);

// The epilogue of _scaled_mm: out[i, j] (|out_dtype|: float32, bfloat16,
// float16 or a float8, at element strides |ors|, |ocs|) = (acc[i, j] *
// sa[i * sa_stride] * sb[j * sb_stride] + bias[j]) * result_scale, from a
// dense float32 acc [m, n]; stride 0 for one-element scales; |bias| (of
// |bias_dtype|, float32 or a half type) and |result_scale| may be null.
// float8 results saturate to the largest finite value.
cudaError_t cuda_launch_scaled_epilogue(const float* acc, void* out, int out_dtype, int64_t ors, int64_t ocs,
                                        int64_t m, int64_t n, const float* sa, int64_t sa_stride, const float* sb,
                                        int64_t sb_stride, const void* bias, int bias_dtype, int64_t bias_stride,
                                        const float* result_scale, cudaStream_t stream);

// torch's CUDA int4 weight packing (_convert_weight_to_int4pack on CUDA):
// int32 words [n / 8][k / (ikt * 16)][32][ikt / 2], each word eight 4-bit
// values of one weight row, laid out as the m16n8k16 tensor-core B fragments
// of two k-tiles; |sz| [k / group][n][2] bfloat16 holds each group's scale
// and zero, and a weight is the bfloat16 fma (q - 8) * scale + zero.
// Dequantizes the packed weights into w [n, k] bfloat16 (contiguous).
cudaError_t cuda_launch_int4pack_dequant(const int32_t* packed, const void* sz, void* w, int64_t n, int64_t k,
                                         int ikt, int64_t group, cudaStream_t stream);
// out[m, n] (bfloat16, contiguous) = x [m, k] (bfloat16, contiguous) @ the
// packed weights^T, reading the packed words once (up to 16 rows, on
// mma.sync: the pair kernel up to 8 rows, the tile kernel above) or once
// per row of x: for few rows, where the weights' bytes bound the time.
// With |dependent_launch| (Hopper and later) the mma kernels are launched
// with programmatic stream serialization and copy their first weights
// before they wait for the kernel ahead; the per-row kernel is always
// launched plainly. |tiles_per_block| (1, 2 or 4 tiles of eight weight rows
// a block of the tile kernel, or pairs of tiles of the pair kernel)
// overrides the kernel's choice where positive; for the timing case, which
// sweeps it.
cudaError_t cuda_launch_int4pack_gemv(const void* x, const int32_t* packed, const void* sz, void* out, int64_t m,
                                      int64_t n, int64_t k, int ikt, int64_t group, cudaStream_t stream,
                                      bool dependent_launch = false, int tiles_per_block = 0);
// out[m, n / 2] (bfloat16, contiguous) = silu(gate) * up, gate and up the
// first and second halves of the n columns cuda_launch_int4pack_gemv would
// write, each rounded to bfloat16 as that product's output is, then silu
// and the multiply each rounded: one pair kernel that pairs gate tile p
// with up tile p. It takes what _fits says: up to 8 rows, n a multiple of
// 16, and the mma kernels' rules; elsewhere cudaErrorInvalidValue, and
// the caller runs the product and SiLU-multiply apart. |pairs_per_block|
// as |tiles_per_block| above (0: the kernel's choice).
bool cuda_int4pack_silu_mul_fits(const void* x, const int32_t* packed, const void* sz, int64_t m, int64_t n,
                                 int64_t k, int ikt, int64_t group);
cudaError_t cuda_launch_int4pack_gemv_silu_mul(const void* x, const int32_t* packed, const void* sz, void* out,
                                               int64_t m, int64_t n, int64_t k, int ikt, int64_t group,
                                               cudaStream_t stream, bool dependent_launch = false,
                                               int pairs_per_block = 0);

}  // namespace aotirt
