// Bad input to the linear-algebra fallback ops (tests/ops/test_linalg_ops.py
// checks their values against torch): each refusal names the problem with
// the right code (INVALID_ARGUMENT for arguments torch rejects too,
// UNIMPLEMENTED for dtypes aotirt does not compute), and nothing is returned.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shim/abi/cpu_linalg.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kUInt8 = 0, kInt8 = 1, kInt32 = 3, kInt64 = 4, kFloat16 = 5, kFloat32 = 6, kFloat64 = 7,
                  kBFloat16 = 15;

// A contiguous tensor of |sizes| and |dtype| (c10 code) over |data|.
void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, sizes.size(), sizes.data(), strides.data(), 0, dtype, 0, 0,
                                               t->out()),
            0);
}

// A [rows, cols] tensor with swapped (column-major) strides.
void make_transposed(void* data, int64_t rows, int64_t cols, int32_t dtype, Handle* t) {
  const int64_t sizes[] = {rows, cols}, strides[] = {1, rows};
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, 2, sizes, strides, 0, dtype, 0, 0, t->out()), 0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code); }

TEST(ShimLinalgTest, AddmvChecksShapesAndDtypes) {
  std::vector<double> buf(64, 1.0);
  Handle self, mat, vec, vec5, vec_d, ints, out;
  make(buf.data(), {3}, kFloat32, &self);
  make(buf.data(), {3, 4}, kFloat32, &mat);
  make(buf.data(), {4}, kFloat32, &vec);
  make(buf.data(), {5}, kFloat32, &vec5);
  make(buf.data(), {4}, kFloat64, &vec_d);
  expect_failure(aoti_torch_cpu_addmv(self, mat, vec5, 1, 1, out.out()), "size mismatch");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_addmv(self, mat, mat, 1, 1, out.out()), "vector + matrix @ vector expected");
  expect_failure(aoti_torch_cpu_addmv(self, mat, vec_d, 1, 1, out.out()), "same dtype");
  expect_code(StatusCode::kInvalidArgument);
  make(buf.data(), {3, 4}, kInt32, &ints);
  Handle iself, ivec;
  make(buf.data(), {3}, kInt32, &iself);
  make(buf.data(), {4}, kInt32, &ivec);
  expect_failure(aoti_torch_cpu_addmv(iself, ints, ivec, 1, 1, out.out()), "int32");
  expect_code(StatusCode::kUnimplemented);
  Handle self2;
  make(buf.data(), {2}, kFloat32, &self2);
  expect_failure(aoti_torch_cpu_addmv(self2, mat, vec, 1, 1, out.out()), "does not broadcast");
  expect_failure(aoti_torch_cpu_addmv(nullptr, mat, vec, 1, 1, out.out()), "null tensor handle");
  expect_failure(aoti_torch_cpu_addmv(self, mat, vec, 1, 1, nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, AddbmmAndAddmmActivationCheckShapes) {
  std::vector<float> buf(256, 1.0f);
  Handle self, b1, b2, b2_batches, b2_inner, m1, m2, out;
  make(buf.data(), {3, 5}, kFloat32, &self);
  make(buf.data(), {2, 3, 4}, kFloat32, &b1);
  make(buf.data(), {2, 4, 5}, kFloat32, &b2);
  make(buf.data(), {3, 4, 5}, kFloat32, &b2_batches);
  make(buf.data(), {2, 6, 5}, kFloat32, &b2_inner);
  expect_failure(aoti_torch_cpu_addbmm(self, b1, b2_batches, 1, 1, out.out()), "same number of batches, got 2 and 3");
  expect_failure(aoti_torch_cpu_addbmm(self, b1, b2_inner, 1, 1, out.out()), "Incompatible matrix sizes for bmm");
  expect_failure(aoti_torch_cpu_addbmm(self, self, b2, 1, 1, out.out()), "batch1 must be a 3D tensor");
  make(buf.data(), {3, 4}, kFloat32, &m1);
  make(buf.data(), {5, 5}, kFloat32, &m2);
  expect_failure(aoti_torch_cpu__addmm_activation(self, m1, m2, 1, 1, 1, out.out()),
                 "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x5)");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__addmm_activation(self, b1, m2, 1, 1, 0, out.out()), "mat1 must be a matrix");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, DistancesCheckArguments) {
  std::vector<double> buf(64, 1.0);
  Handle x1, x2, x2_cols, x1_d, v, half, out;
  make(buf.data(), {3, 4}, kFloat32, &x1);
  make(buf.data(), {5, 4}, kFloat32, &x2);
  make(buf.data(), {5, 3}, kFloat32, &x2_cols);
  make(buf.data(), {3, 4}, kFloat64, &x1_d);
  make(buf.data(), {4}, kFloat32, &v);
  make(buf.data(), {3, 4}, kBFloat16, &half);
  expect_failure(aoti_torch_cpu__cdist_forward(x1, x2_cols, 2.0, nullptr, out.out()),
                 "X1 and X2 must have the same number of columns. X1: 4 X2: 3");
  expect_failure(aoti_torch_cpu__cdist_forward(x1, x2, -1.0, nullptr, out.out()), "non-negative p");
  expect_failure(aoti_torch_cpu__cdist_forward(v, x2, 2.0, nullptr, out.out()), "at least 2D tensors, X1 got: 1D");
  expect_failure(aoti_torch_cpu__cdist_forward(x1_d, x2, 2.0, nullptr, out.out()), "same dtype");
  int64_t mode = 3;
  expect_failure(aoti_torch_cpu__cdist_forward(x1, x2, 2.0, &mode, out.out()), "possible modes: 0, 1, 2, but was: 3");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__cdist_forward(half, half, 2.0, nullptr, out.out()), "bfloat16");
  expect_code(StatusCode::kUnimplemented);
  Handle t;
  make_transposed(buf.data(), 3, 4, kFloat32, &t);
  expect_failure(aoti_torch_cpu__pdist_forward(t, 2.0, out.out()), "requires contiguous input");
  expect_failure(aoti_torch_cpu__pdist_forward(v, 2.0, out.out()), "pdist only supports 2D tensors, got: 1D");
  expect_failure(aoti_torch_cpu__pdist_forward(x1, -0.5, out.out()), "non-negative p");
  expect_failure(aoti_torch_cpu__pdist_forward(half, 2.0, out.out()), "bfloat16");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, TrilinearChecksDimLists) {
  std::vector<float> buf(64, 1.0f);
  Handle a, b, c, out;
  make(buf.data(), {4, 3}, kFloat32, &a);
  make(buf.data(), {4, 3}, kFloat32, &b);
  make(buf.data(), {4, 2}, kFloat32, &c);
  const int64_t one[] = {1}, dup[] = {1, 1}, far[] = {5};
  expect_failure(aoti_torch_cpu__trilinear(a, b, b, nullptr, 0, nullptr, 0, nullptr, 0, one, 1, 5, out.out()),
                 "unroll_dim must be in [0,1]");
  expect_failure(aoti_torch_cpu__trilinear(a, b, b, nullptr, 0, nullptr, 0, nullptr, 0, dup, 2, 0, out.out()),
                 "dim 1 appears multiple times");
  expect_failure(aoti_torch_cpu__trilinear(a, b, b, nullptr, 0, nullptr, 0, nullptr, 0, far, 1, 0, out.out()),
                 "Dimension out of range");
  expect_failure(aoti_torch_cpu__trilinear(a, b, c, nullptr, 0, nullptr, 0, nullptr, 0, one, 1, 0, out.out()),
                 "the inputs' sizes must agree");
  expect_failure(aoti_torch_cpu__trilinear(a, b, b, one, 1, nullptr, 0, nullptr, 0, one, 1, 0, out.out()),
                 "does not have rank 3");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, IntMmOutRefusesWhatTorchRefuses) {
  std::vector<int32_t> buf(64, 1), result(15, -1);
  std::vector<int8_t> ones(20, 1);
  Handle a, b, out, out_long, out_shape, a32, out_t;
  make(ones.data(), {5, 4}, kInt8, &a);
  make(ones.data(), {4, 3}, kInt8, &b);
  make(result.data(), {5, 3}, kInt32, &out);
  make(buf.data(), {5, 3}, kInt64, &out_long);
  make(buf.data(), {5, 4}, kInt32, &out_shape);
  make(buf.data(), {5, 4}, kInt32, &a32);
  make_transposed(buf.data(), 5, 3, kInt32, &out_t);
  expect_failure(aoti_torch_cpu__int_mm_out(out, a32, b), "Expected self dtype to be of type int8");
  expect_failure(aoti_torch_cpu__int_mm_out(out, a, a), "self.size(1) needs to match mat2.size(0) but got 4 and 5");
  expect_failure(aoti_torch_cpu__int_mm_out(out_long, a, b), "Expected result dtype to be of type int32");
  expect_failure(aoti_torch_cpu__int_mm_out(out_shape, a, b), "Expected result.size(1) to be 3 but got 4");
  expect_failure(aoti_torch_cpu__int_mm_out(out_t, a, b), "Expected result to be contiguous");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(aoti_torch_cpu__int_mm_out(out, a, b), 0);
  for (int32_t v : result) EXPECT_EQ(v, 4);  // a row of ones times a column of ones over K = 4
}

TEST(ShimLinalgTest, FusedRmsNormChecksShapes) {
  std::vector<float> buf(64, 1.0f);
  Handle x, w, ints, out, rstd;
  make(buf.data(), {2, 3, 4}, kFloat32, &x);
  make(buf.data(), {3}, kFloat32, &w);
  make(buf.data(), {2, 4}, kInt32, &ints);
  const int64_t four[] = {4}, five[] = {5};
  expect_failure(aoti_torch_cpu__fused_rms_norm(x, five, 1, nullptr, nullptr, out.out(), rstd.out()),
                 "does not end in normalized_shape [5]");
  AtenTensorHandle wh = w;
  expect_failure(aoti_torch_cpu__fused_rms_norm(x, four, 1, &wh, nullptr, out.out(), rstd.out()),
                 "Expected weight to be of same shape as normalized_shape");
  expect_failure(aoti_torch_cpu__fused_rms_norm(x, four, 0, nullptr, nullptr, out.out(), rstd.out()),
                 "at least 1-dimensional");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__fused_rms_norm(ints, four, 1, nullptr, nullptr, out.out(), rstd.out()), "int32");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu__fused_rms_norm(x, four, 1, nullptr, nullptr, out.out(), nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(rstd.h, nullptr);
}

TEST(ShimLinalgTest, WeightOnlyGemmsCheckOperands) {
  std::vector<double> buf(4096, 0.0);
  Handle x, x64, w8, w8_k, s, s_bad, out;
  make(buf.data(), {2, 32}, kFloat32, &x);
  make(buf.data(), {2, 32}, kFloat64, &x64);
  make(buf.data(), {16, 32}, kInt8, &w8);
  make(buf.data(), {16, 31}, kInt8, &w8_k);
  make(buf.data(), {16}, kFloat32, &s);
  make(buf.data(), {15}, kFloat32, &s_bad);
  expect_failure(aoti_torch_cpu__weight_int8pack_mm(x64, w8, s, out.out()), "32-bit or 16-bit float");
  expect_failure(aoti_torch_cpu__weight_int8pack_mm(x, w8, s_bad, out.out()), "1d tensor with size 16");
  expect_failure(aoti_torch_cpu__weight_int8pack_mm(x, w8_k, s, out.out()), "B.size(1) to be 32");
  expect_failure(aoti_torch_cpu__weight_int8pack_mm(x, s, s, out.out()), "expect B to be int8");
  expect_code(StatusCode::kInvalidArgument);
  Handle w4, sz, sz_bf16, group, group32, group_bad;
  make(buf.data(), {16, 16}, kUInt8, &w4);
  make(buf.data(), {1, 16, 2}, kFloat32, &sz);
  make(buf.data(), {1, 16, 2}, kBFloat16, &sz_bf16);
  std::vector<int64_t> g64 = {64};
  std::vector<int32_t> g32 = {32};
  std::vector<int64_t> g16 = {16};
  make(g64.data(), {}, kInt64, &group);
  make(g32.data(), {}, kInt32, &group32);
  make(g16.data(), {}, kInt64, &group_bad);
  expect_failure(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w4, group32, sz, out.out()),
                 "group size must be one int64");
  expect_failure(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w4, group_bad, sz, out.out()),
                 "expect qGroupSize to be 32, 64, 128 or 256, got 16");
  expect_failure(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w4, group, sz, out.out()),
                 "expect K to be divisible by qGroupSize, got K:32, qGroupSize:64");
  expect_failure(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w4, group, sz_bf16, out.out()), "same dtype");
  expect_failure(aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(x, w8, group, sz, out.out()), "expect B to be uint8");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, DynQuant4bitChecksArguments) {
  std::vector<float> buf(4096, 0.0f);
  Handle w, w_i32, s, s_short, x, x_bf16, x_k, packed, packed_u8, out;
  make(buf.data(), {4, 32}, kUInt8, &w);  // N = 4, K = 64
  make(buf.data(), {4, 32}, kInt32, &w_i32);
  make(buf.data(), {4, 2}, kFloat32, &s);
  make(buf.data(), {4, 1}, kFloat32, &s_short);
  make(buf.data(), {3, 64}, kFloat32, &x);
  make(buf.data(), {3, 64}, kBFloat16, &x_bf16);
  make(buf.data(), {3, 32}, kFloat32, &x_k);
  make(buf.data(), {4 * 32 + 8}, kFloat32, &packed);
  make(buf.data(), {4 * 32 + 8}, kUInt8, &packed_u8);
  expect_failure(aoti_torch_cpu__dyn_quant_pack_4bit_weight(w_i32, s, nullptr, 32, 64, 4, out.out()),
                 "expect weight to be kByte");
  expect_failure(aoti_torch_cpu__dyn_quant_pack_4bit_weight(w, s, nullptr, 16, 64, 4, out.out()),
                 "Group size should be multiple of 32");
  expect_failure(aoti_torch_cpu__dyn_quant_pack_4bit_weight(w, s_short, nullptr, 32, 64, 4, out.out()),
                 "must hold out_features * (in_features / block_size) = 8 scales");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__dyn_quant_matmul_4bit(x_k, packed, 32, 64, 4, out.out()), "expect input to be [M, 64]");
  expect_failure(aoti_torch_cpu__dyn_quant_matmul_4bit(x, packed, 32, 64, 5, out.out()), "packed_weights holds 136");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__dyn_quant_matmul_4bit(x_bf16, packed, 32, 64, 4, out.out()),
                 "a bfloat16 input needs block_size == in_features (64), got 32");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__dyn_quant_matmul_4bit(x, packed_u8, 32, 64, 4, out.out()), "reference layout");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(aoti_torch_cpu__dyn_quant_matmul_4bit(x, packed, 32, 64, 4, out.out()), 0);
}

TEST(ShimLinalgTest, LapackOpsCheckArguments) {
  std::vector<double> buf(256, 0.0);
  Handle b, a, a_rect, a_d, v, half, out, out2;
  make(buf.data(), {4, 3}, kFloat32, &b);
  make(buf.data(), {4, 4}, kFloat32, &a);
  make(buf.data(), {4, 5}, kFloat32, &a_rect);
  make(buf.data(), {4, 4}, kFloat64, &a_d);
  make(buf.data(), {4}, kFloat32, &v);
  make(buf.data(), {4, 4}, kFloat16, &half);
  expect_failure(aoti_torch_cpu_cholesky_solve(b, a_rect, 0, out.out()), "square matrices, but they are 4 by 5");
  expect_failure(aoti_torch_cpu_cholesky_solve(b, a_d, 0, out.out()), "same dtype");
  expect_failure(aoti_torch_cpu_cholesky_solve(v, a, 0, out.out()), "at least 2 dimensions");
  expect_failure(aoti_torch_cpu_triangular_solve(a_rect, a_rect, 1, 0, 0, out.out(), out2.out()),
                 "square matrices");
  expect_failure(aoti_torch_cpu_cholesky_inverse(v, 0, out.out()), "at least 2 dimensions");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_cholesky_inverse(half, 0, out.out()), "float16");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_geqrf(v, out.out(), out2.out()), "at least 2 dimensions");
  expect_failure(aoti_torch_cpu_geqrf(half, out.out(), out2.out()), "float16");
  expect_code(StatusCode::kUnimplemented);
  // ormqr: input [4, 3], tau [3], other [5, 2] (rows differ from input's).
  Handle in, tau, tau2, other_bad, other;
  make(buf.data(), {4, 3}, kFloat32, &in);
  make(buf.data(), {3}, kFloat32, &tau);
  make(buf.data(), {2}, kFloat32, &tau2);
  make(buf.data(), {5, 2}, kFloat32, &other_bad);
  make(buf.data(), {4, 2}, kFloat32, &other);
  expect_failure(aoti_torch_cpu_ormqr(in, tau, other_bad, 1, 0, out.out()),
                 "other.shape[-2] must be equal to input.shape[-2]");
  expect_failure(aoti_torch_cpu_ormqr(in, tau2, other, 1, 0, out.out()),
                 "tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])");
  expect_failure(aoti_torch_cpu_ormqr(in, in, other, 1, 0, out.out()), "one dimension less than input");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(out2.h, nullptr);
}

TEST(ShimLinalgTest, CholeskyInverseOfSingularFactorIsRefused) {
  std::vector<float> buf = {1, 0, 0, 0, 0, 0, 0, 0, 1};  // diag(1, 0, 1)
  Handle a, out;
  make(buf.data(), {3, 3}, kFloat32, &a);
  expect_failure(aoti_torch_cpu_cholesky_inverse(a, 0, out.out()), "The diagonal element 2 is zero");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimLinalgTest, LuUnpackChecksPivots) {
  std::vector<double> buf(64, 0.0);
  std::vector<int32_t> piv = {5, 1, 1, 4};
  std::vector<int64_t> piv64 = {1, 2, 3, 4};
  Handle lu, p32, p64, p_short, out0, out1, out2;
  make(buf.data(), {4, 4}, kFloat32, &lu);
  make(piv.data(), {4}, kInt32, &p32);
  make(piv64.data(), {4}, kInt64, &p64);
  make(piv.data(), {3}, kInt32, &p_short);
  expect_failure(aoti_torch_cpu_lu_unpack(lu, p32, 1, 1, out0.out(), out1.out(), out2.out()),
                 "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive, got 5");
  expect_failure(aoti_torch_cpu_lu_unpack(lu, p64, 1, 1, out0.out(), out1.out(), out2.out()), "torch.int32 dtype");
  expect_failure(aoti_torch_cpu_lu_unpack(lu, p_short, 1, 1, out0.out(), out1.out(), out2.out()),
                 "must end in min(m, n) = 4");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out0.h, nullptr);
}

}  // namespace
}  // namespace aotirt
