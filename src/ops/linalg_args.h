// The device-neutral rules of the linear-algebra fallback ops, as torch's
// meta functions and CPU kernels check them: handles, ranks, one dtype for
// every operand, the inner sizes that must agree, batch broadcasting, and
// the output's sizes (every output here is contiguous). Messages follow
// torch's where a model author would search for them.
#pragma once

#include <cstdint>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// addmv, addbmm and _addmm_activation: out = beta * self + alpha * product.
struct AddProductArgs {
  const TensorImpl* self = nullptr;
  const TensorImpl* a = nullptr;  // mat, batch1 or mat1
  const TensorImpl* b = nullptr;  // vec, batch2 or mat2
  double beta = 1.0, alpha = 1.0;
  int64_t batch = 1, m = 0, k = 0, n = 1;  // addmv: n = 1
  DimVector out_sizes;                      // [m] (addmv) or [m, n]
};
Result<AddProductArgs> addmv_args(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec, double beta,
                                  double alpha);
Result<AddProductArgs> addbmm_args(AtenTensorHandle self, AtenTensorHandle batch1, AtenTensorHandle batch2,
                                   double beta, double alpha);
Result<AddProductArgs> addmm_activation_args(AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
                                             double beta, double alpha);

// _cdist_forward: [B..., P, M] x [B..., R, M] -> [B..., P, R] (batch dims
// broadcast); _pdist_forward: [N, M] -> [N * (N - 1) / 2].
struct DistArgs {
  const TensorImpl* x1 = nullptr;
  const TensorImpl* x2 = nullptr;  // cdist only
  double p = 2.0;
  bool use_mm = false;  // cdist's matrix-product path for p = 2
  DimVector batch_sizes;  // broadcast batch dims (cdist)
  int64_t batch = 1, rows1 = 0, rows2 = 0, cols = 0;
  DimVector out_sizes;
};
Result<DistArgs> cdist_args(AtenTensorHandle x1, AtenTensorHandle x2, double p, const int64_t* compute_mode);
Result<DistArgs> pdist_args(AtenTensorHandle self, double p);

// _trilinear: the three inputs, each unsqueezed at its expand dims, give
// tensors of one rank; the product is summed over |sumdim|, which leaves
// the output. |sizes| are the common sizes of that rank, |own_dim| maps each
// of its dims to the input's own dim (-1 where the input was expanded).
struct TrilinearArgs {
  const TensorImpl* in[3] = {nullptr, nullptr, nullptr};
  DimVector sizes;
  std::vector<int64_t> own_dim[3];
  std::vector<bool> summed;
  DimVector out_sizes;
};
Result<TrilinearArgs> trilinear_args(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                     const int64_t* expand1, int64_t expand1_len, const int64_t* expand2,
                                     int64_t expand2_len, const int64_t* expand3, int64_t expand3_len,
                                     const int64_t* sumdim, int64_t sumdim_len, int64_t unroll_dim);

// _int_mm.out: int8 [M, K] x int8 [K, N] into a contiguous int32 [M, N].
struct IntMmArgs {
  const TensorImpl* out = nullptr;
  const TensorImpl* a = nullptr;
  const TensorImpl* b = nullptr;
  int64_t m = 0, k = 0, n = 0;
};
Result<IntMmArgs> int_mm_out_args(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2);
// The shapes torch's CUDA _int_mm takes on top of those (its cuBLAS int8
// GEMM's): more than 16 rows, K and N positive multiples of 8.
Status check_int_mm_cuda_shape(const IntMmArgs& a);

// _fused_rms_norm: rows of |inner| elements (the normalized dims), weight
// optional; eps defaults to the compute dtype's machine epsilon.
struct RmsNormArgs {
  const TensorImpl* input = nullptr;
  const TensorImpl* weight = nullptr;
  int64_t rows = 1, inner = 1;
  double eps = 0.0;
  DType rstd_dtype = DType::kFloat32;
  DimVector rstd_sizes;
};
Result<RmsNormArgs> fused_rms_norm_args(AtenTensorHandle input, const int64_t* normalized_shape,
                                        int64_t normalized_shape_len, AtenTensorHandle* weight, const double* eps);

// _weight_int8pack_mm: A [M, K] float32/bfloat16/float16 (rows contiguous),
// B int8 [N, K] contiguous, scales [N] of A's dtype -> [M, N].
// _weight_int4pack_mm_cpu_tensor: A [M, K] contiguous, B uint8 [N, K / 2]
// in torch's CPU int4 packing, group size 32/64/128/256 (an int64 tensor),
// scales and zeros [K / group, N, 2] of A's dtype -> [M, N].
struct WeightOnlyArgs {
  const TensorImpl* a = nullptr;
  const TensorImpl* b = nullptr;
  const TensorImpl* scales = nullptr;
  int64_t m = 0, k = 0, n = 0, group = 0;
  int64_t inner_k_tiles = 0;  // CUDA int4 packing only
};
Result<WeightOnlyArgs> weight_int8pack_mm_args(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scales);
// |group| is read from the qGroupSize tensor by the caller (it lives on the
// device); the other checks are here.
Result<WeightOnlyArgs> weight_int4pack_mm_args(AtenTensorHandle x, AtenTensorHandle w, AtenTensorHandle group_size,
                                               AtenTensorHandle scales_zeros);
// The same without the group size (which the caller holds as an integer).
Result<WeightOnlyArgs> weight_int4pack_mm_cpu_args(AtenTensorHandle x, AtenTensorHandle w,
                                                   AtenTensorHandle scales_zeros);
Status check_int4_group(const WeightOnlyArgs& a, int64_t group);
// _weight_int4pack_mm on CUDA: A [M, K] bfloat16 contiguous, B int32
// [N / 8, K / (inner_k_tiles * 16), 32, inner_k_tiles / 2] contiguous in
// torch's CUDA (tensor-core) packing, inner_k_tiles 2, 4 or 8, group size
// 32/64/128/256 dividing K, scales and zeros [K / group, N, 2] bfloat16
// contiguous -> [M, N] bfloat16.
Result<WeightOnlyArgs> weight_int4pack_mm_cuda_args(AtenTensorHandle a, AtenTensorHandle b, int64_t group,
                                                    AtenTensorHandle scales_zeros);

// _dyn_quant_pack_4bit_weight and _dyn_quant_matmul_4bit as torch's CPU build
// without KleidiAI runs them (the reference path): the pack is one float32
// vector [weights as N * K / 2 bytes, N * K / block_size scales, optional N
// biases]; block_size is K (per channel) or a multiple of 32 dividing K.
struct DynQuantArgs {
  const TensorImpl* input = nullptr;    // matmul: [M, K] float32 (bfloat16 per channel)
  const TensorImpl* packed = nullptr;   // matmul
  const TensorImpl* weights = nullptr;  // pack: uint8, N * K / 2 bytes
  const TensorImpl* scales = nullptr;   // pack
  const TensorImpl* bias = nullptr;     // pack, optional
  int64_t m = 0, k = 0, n = 0, block = 0;
  bool has_bias = false;  // matmul: the pack holds N biases
};
Result<DynQuantArgs> dyn_quant_pack_args(AtenTensorHandle weights, AtenTensorHandle scales_zeros,
                                         AtenTensorHandle* bias, int64_t block_size, int64_t in_features,
                                         int64_t out_features);
Result<DynQuantArgs> dyn_quant_matmul_args(AtenTensorHandle inp, AtenTensorHandle packed_weights, int64_t block_size,
                                           int64_t in_features, int64_t out_features);

}  // namespace ops
}  // namespace aotirt

namespace aotirt {
namespace ops {

// The layout torch's LAPACK-backed ops give their matrix outputs: each
// matrix column-major, the batch dims outside them row-major (sizes of 0
// count as 1, as in contiguous strides).
DimVector batched_fortran_strides(const DimVector& sizes);

// cholesky_solve, triangular_solve and cholesky_inverse: B [*, m, k] and
// A [*, m, m], their batch dims broadcast to |batch|.
struct SolveArgs {
  const TensorImpl* b = nullptr;  // null for cholesky_inverse
  const TensorImpl* a = nullptr;
  DimVector batch;
  int64_t m = 0, k = 0;
  bool upper = false, transpose = false, unitriangular = false;
  DimVector b_sizes, a_sizes;  // batch + [m, k], batch + [m, m]
};
Result<SolveArgs> cholesky_solve_args(AtenTensorHandle self, AtenTensorHandle input2, bool upper);
Result<SolveArgs> triangular_solve_args(AtenTensorHandle self, AtenTensorHandle a, bool upper, bool transpose,
                                        bool unitriangular);
Result<SolveArgs> cholesky_inverse_args(AtenTensorHandle self, bool upper);

// geqrf: A [*, m, n] -> (A's factored form, tau [*, min(m, n)]).
// ormqr: the Householder product Q of (input [*, nq, kk], tau [*, k])
// applied to other [*, m, n] from the left (nq = m) or right (nq = n).
struct QrArgs {
  const TensorImpl* a = nullptr;
  const TensorImpl* tau = nullptr;
  const TensorImpl* other = nullptr;
  DimVector batch;
  int64_t m = 0, n = 0, k = 0;  // geqrf: A's sizes; ormqr: other's, tau's
  bool left = true, transpose = false;
};
Result<QrArgs> geqrf_args(AtenTensorHandle self);
Result<QrArgs> ormqr_args(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3, bool left,
                          bool transpose);

// lu_unpack: LU [*, m, n] and int32 pivots [*, min(m, n)] (the same batch
// dims) -> P [*, m, m], L [*, m, k], U [*, k, n].
struct LuUnpackArgs {
  const TensorImpl* lu = nullptr;
  const TensorImpl* pivots = nullptr;
  DimVector batch;
  int64_t m = 0, n = 0, k = 0;
  bool unpack_data = true, unpack_pivots = true;
};
Result<LuUnpackArgs> lu_unpack_args(AtenTensorHandle lu_data, AtenTensorHandle lu_pivots, bool unpack_data,
                                    bool unpack_pivots);

}  // namespace ops
}  // namespace aotirt
