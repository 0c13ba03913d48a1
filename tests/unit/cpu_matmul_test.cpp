// mm / addmm / bmm / baddbmm CPU fallbacks against a naive double reference,
// over contiguous, transposed, padded, offset and broadcast operands.
#include <gtest/gtest.h>

#include <limits>

#include "cpu_ops_test_util.h"

namespace aotirt {
namespace cpu_ops_test {
namespace {

// Reference: out[b] = beta * bias[b] + alpha * a[b] @ b[b]; bias already
// expanded to [B, M, N] (empty when absent or beta == 0).
std::vector<double> ref_bmm(const std::vector<double>& a, const std::vector<double>& b,
                            const std::vector<double>& bias, int64_t batch, int64_t m, int64_t k, int64_t n,
                            double beta, double alpha) {
  std::vector<double> out(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[(z * m + i) * k + p] * b[(z * k + p) * n + j];
        const size_t o = static_cast<size_t>((z * m + i) * n + j);
        out[o] = alpha * acc + (bias.empty() ? 0.0 : beta * bias[o]);
      }
  return out;
}

// Expands |bias| (row-major |sizes|) to [B, M, N] by numpy rules.
std::vector<double> expand(const std::vector<double>& bias, const Dims& sizes, int64_t batch, int64_t m,
                           int64_t n) {
  Dims padded(3, 1);
  for (size_t i = 0; i < sizes.size(); ++i) padded[3 - sizes.size() + i] = sizes[i];
  std::vector<double> out(static_cast<size_t>(batch * m * n));
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t zz = padded[0] == 1 ? 0 : z, ii = padded[1] == 1 ? 0 : i, jj = padded[2] == 1 ? 0 : j;
        out[(z * m + i) * n + j] = bias[(zz * padded[1] + ii) * padded[2] + jj];
      }
  return out;
}

// Layout choices for a [R, C] operand.
enum class Layout { kContiguous, kTransposed, kPadded, kOffset, kStrided };

Handle make_matrix(int64_t r, int64_t c, Layout layout, DType dtype) {
  switch (layout) {
    case Layout::kContiguous: return make_tensor({r, c}, dtype);
    case Layout::kTransposed: return make_permuted({r, c}, {1, 0}, dtype);
    case Layout::kPadded: return make_strided({r, c}, {c + 3, 1}, dtype);
    case Layout::kOffset: return make_strided({r, c}, {1, r + 2}, dtype, 5);
    case Layout::kStrided: return make_strided({r, c}, {2 * c + 1, 2}, dtype);  // no unit stride: copied
  }
  return Handle();
}

const Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kPadded, Layout::kOffset,
                           Layout::kStrided};

TEST(CpuMatmulTest, MmMatchesReferenceOverShapesAndLayouts) {
  std::mt19937 rng(1234);
  const Dims shapes[][1] = {{{1, 1, 1}}, {{3, 5, 4}}, {{7, 1, 9}}, {{17, 33, 6}}, {{64, 70, 31}}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const auto& s : shapes) {
      const int64_t m = s[0][0], k = s[0][1], n = s[0][2];
      for (Layout la : kLayouts) {
        for (Layout lb : kLayouts) {
          Handle a = make_matrix(m, k, la, dtype), b = make_matrix(k, n, lb, dtype);
          Handle out = make_matrix(m, n, la == lb ? Layout::kContiguous : lb, dtype);
          fill_random(a, rng);
          fill_random(b, rng);
          fill_value(out, std::numeric_limits<double>::quiet_NaN());
          ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
          auto want = ref_bmm(values(a), values(b), {}, 1, m, k, n, 0.0, 1.0);
          EXPECT_TRUE(all_close(values(out), want, atol_for(dtype), rtol_for(dtype)))
              << "m=" << m << " k=" << k << " n=" << n << " layouts " << int(la) << "," << int(lb);
        }
      }
    }
  }
}

TEST(CpuMatmulTest, MmWritesNonContiguousOut) {
  std::mt19937 rng(7);
  const int64_t m = 6, k = 5, n = 4;
  for (Layout lo : kLayouts) {
    Handle a = make_tensor({m, k}, DType::kFloat32), b = make_tensor({k, n}, DType::kFloat32);
    Handle out = make_matrix(m, n, lo, DType::kFloat32);
    fill_random(a, rng);
    fill_random(b, rng);
    ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, m, k, n, 0, 1), 1e-5, 1e-5))
        << "out layout " << int(lo);
  }
}

TEST(CpuMatmulTest, MmBroadcastStrideOperandIsCopied) {
  std::mt19937 rng(8);
  // Every row of |a| is the same memory (stride 0), as an expanded tensor.
  Handle a = make_strided({4, 3}, {0, 1}, DType::kFloat32);
  Handle b = make_tensor({3, 5}, DType::kFloat32);
  Handle out = make_tensor({4, 5}, DType::kFloat32);
  fill_random(a, rng);
  fill_random(b, rng);
  ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
  EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, 4, 3, 5, 0, 1), 1e-5, 1e-5));
}

// bfloat16 and float16 products past the few-row kernels run on oneDNN's
// matmul (float32 through OpenBLAS where it is missing or refuses), with
// any operand layout; addmm's scaled bias takes the float32 path.
TEST(CpuMatmulTest, ReducedPrecisionProductsMatchReference) {
  std::mt19937 rng(99);
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    const int64_t m = 9, k = 40, n = 11;
    Handle a = make_matrix(m, k, Layout::kTransposed, dtype), b = make_tensor({k, n}, dtype);
    Handle out = make_tensor({m, n}, dtype);
    fill_random(a, rng);
    fill_random(b, rng);
    ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, m, k, n, 0, 1), atol_for(dtype),
                          rtol_for(dtype)))
        << dtype_name(dtype);

    // addmm with a bias, and a strided output that needs the final copy.
    Handle bias = make_tensor({n}, dtype);
    Handle out2 = make_matrix(m, n, Layout::kStrided, dtype);
    fill_random(bias, rng);
    ASSERT_EQ(aoti_torch_cpu_addmm_out(out2.get(), bias.get(), a.get(), b.get(), 0.5, 2.0), 0)
        << get_last_error().to_string();
    auto want = ref_bmm(values(a), values(b), expand(values(bias), {n}, 1, m, n), 1, m, k, n, 0.5, 2.0);
    EXPECT_TRUE(all_close(values(out2), want, 2 * atol_for(dtype), rtol_for(dtype))) << dtype_name(dtype);
  }
}

// One to eight rows of float32 (up to four) and bfloat16 take the few-row
// kernels (cpu_gemm_rows.h) when B has a unit stride: every tail of their
// vector loops (K and N around the vector widths) and both B layouts, with
// and without a bias, in mm, addmm and bmm.
TEST(CpuMatmulTest, FewRowProductsMatchReference) {
  std::mt19937 rng(4321);
  const int64_t ks[] = {1, 7, 16, 17, 40, 100, 768};
  const int64_t ns[] = {1, 3, 4, 5, 31, 64, 65, 130};
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    const int64_t max_rows = dtype == DType::kFloat32 ? 4 : 8;
    for (int64_t m = 1; m <= max_rows; m += (m < 3 ? 1 : 3)) {
      for (int64_t k : ks) {
        for (int64_t n : ns) {
          for (Layout lb : {Layout::kTransposed, Layout::kContiguous, Layout::kPadded, Layout::kOffset}) {
            Handle a = make_matrix(m, k, Layout::kContiguous, dtype), b = make_matrix(k, n, lb, dtype);
            Handle out = make_tensor({m, n}, dtype);
            fill_random(a, rng);
            fill_random(b, rng);
            fill_value(out, std::numeric_limits<double>::quiet_NaN());
            ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
            const std::string what = std::string(dtype_name(dtype)) + " m=" + std::to_string(m) +
                                     " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                                     " layout " + std::to_string(int(lb));
            ASSERT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, m, k, n, 0, 1),
                                  atol_for(dtype), rtol_for(dtype)))
                << what;

            Handle bias = make_tensor({n}, dtype);
            Handle out2 = make_matrix(m, n, Layout::kStrided, dtype);
            fill_random(bias, rng);
            ASSERT_EQ(aoti_torch_cpu_addmm_out(out2.get(), bias.get(), a.get(), b.get(), 0.5, 2.0), 0)
                << get_last_error().to_string();
            auto want = ref_bmm(values(a), values(b), expand(values(bias), {n}, 1, m, n), 1, m, k, n, 0.5, 2.0);
            ASSERT_TRUE(all_close(values(out2), want, 2 * atol_for(dtype), rtol_for(dtype))) << what << " addmm";
          }
        }
      }
    }
    // A batch of few-row products, B [B, K, N] read as each batch's transpose.
    const int64_t batch = 3, m = 2, k = 70, n = 37;
    Handle a = make_tensor({batch, m, k}, dtype);
    Handle b = make_permuted({batch, k, n}, {0, 2, 1}, dtype);
    Handle out = make_tensor({batch, m, n}, dtype);
    fill_random(a, rng);
    fill_random(b, rng);
    ASSERT_EQ(aoti_torch_cpu_bmm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, batch, m, k, n, 0, 1),
                          atol_for(dtype), rtol_for(dtype)))
        << dtype_name(dtype) << " bmm";
  }
}

TEST(CpuMatmulTest, AddmmBroadcastsBiasShapes) {
  std::mt19937 rng(21);
  const int64_t m = 5, k = 7, n = 6;
  const Dims bias_shapes[] = {{n}, {m, n}, {1, n}, {m, 1}, {}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Dims& bs : bias_shapes) {
      for (double beta : {1.0, 0.25, -2.0}) {
        Handle a = make_tensor({m, k}, dtype), b = make_matrix(k, n, Layout::kTransposed, dtype);
        Handle bias = make_tensor(bs, dtype), out = make_tensor({m, n}, dtype);
        fill_random(a, rng);
        fill_random(b, rng);
        fill_random(bias, rng);
        ASSERT_EQ(aoti_torch_cpu_addmm_out(out.get(), bias.get(), a.get(), b.get(), beta, 1.5), 0)
            << get_last_error().to_string();
        auto want = ref_bmm(values(a), values(b), expand(values(bias), bs, 1, m, n), 1, m, k, n, beta, 1.5);
        EXPECT_TRUE(all_close(values(out), want, atol_for(dtype), rtol_for(dtype)))
            << "bias " << ::testing::PrintToString(bs) << " beta " << beta;
      }
    }
  }
}

TEST(CpuMatmulTest, AddmmBetaZeroIgnoresNaNBiasAndOut) {
  std::mt19937 rng(3);
  const int64_t m = 4, k = 3, n = 5;
  for (Layout lo : {Layout::kContiguous, Layout::kTransposed, Layout::kStrided}) {
    Handle a = make_tensor({m, k}, DType::kFloat32), b = make_tensor({k, n}, DType::kFloat32);
    Handle bias = make_tensor({m, n}, DType::kFloat32), out = make_matrix(m, n, lo, DType::kFloat32);
    fill_random(a, rng);
    fill_random(b, rng);
    fill_value(bias, std::numeric_limits<double>::quiet_NaN());
    fill_value(out, std::numeric_limits<double>::quiet_NaN());
    ASSERT_EQ(aoti_torch_cpu_addmm_out(out.get(), bias.get(), a.get(), b.get(), 0.0, 1.0), 0);
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, m, k, n, 0, 1), 1e-5, 1e-5));
  }
}

TEST(CpuMatmulTest, AddmmInPlaceOnSelf) {
  std::mt19937 rng(4);
  const int64_t m = 3, k = 4, n = 3;
  Handle a = make_tensor({m, k}, DType::kFloat64), b = make_tensor({k, n}, DType::kFloat64);
  Handle acc = make_tensor({m, n}, DType::kFloat64);
  fill_random(a, rng);
  fill_random(b, rng);
  fill_random(acc, rng);
  auto want = ref_bmm(values(a), values(b), values(acc), 1, m, k, n, 0.5, 1.0);
  ASSERT_EQ(aoti_torch_cpu_addmm_out(acc.get(), acc.get(), a.get(), b.get(), 0.5, 1.0), 0);
  EXPECT_TRUE(all_close(values(acc), want, 1e-12, 1e-12));
}

TEST(CpuMatmulTest, EmptyInnerDimensionGivesScaledBias) {
  const int64_t m = 3, n = 4;
  Handle a = make_tensor({m, 0}, DType::kFloat32), b = make_tensor({0, n}, DType::kFloat32);
  Handle out = make_tensor({m, n}, DType::kFloat32);
  fill_value(out, std::numeric_limits<double>::quiet_NaN());
  ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
  EXPECT_TRUE(all_close(values(out), std::vector<double>(m * n, 0.0), 0, 0));

  Handle bias = make_tensor({n}, DType::kFloat32);
  fill_value(bias, 2.0);
  ASSERT_EQ(aoti_torch_cpu_addmm_out(out.get(), bias.get(), a.get(), b.get(), 1.5, 3.0), 0);
  EXPECT_TRUE(all_close(values(out), std::vector<double>(m * n, 3.0), 0, 0));

  Handle none = make_tensor({0, n}, DType::kFloat32), a0 = make_tensor({0, 2}, DType::kFloat32);
  Handle b2 = make_tensor({2, n}, DType::kFloat32);
  EXPECT_EQ(aoti_torch_cpu_mm_out(none.get(), a0.get(), b2.get()), 0) << get_last_error().to_string();
}

TEST(CpuMatmulTest, BmmAndBaddbmmOverBatchLayouts) {
  std::mt19937 rng(55);
  const int64_t batch = 3, m = 6, k = 5, n = 7;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    // a: [B,K,M] transposed per batch; b: batch dim innermost of the outer
    // dims ([K,B,N] memory); out: [M,B,N] memory.
    Handle a = make_permuted({batch, m, k}, {0, 2, 1}, dtype);
    Handle b = make_permuted({batch, k, n}, {1, 0, 2}, dtype);
    Handle out = make_permuted({batch, m, n}, {1, 0, 2}, dtype);
    fill_random(a, rng);
    fill_random(b, rng);
    ASSERT_EQ(aoti_torch_cpu_bmm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, batch, m, k, n, 0, 1),
                          atol_for(dtype), rtol_for(dtype)))
        << dtype_name(dtype);

    const Dims bias_shapes[] = {{batch, m, n}, {n}, {m, n}, {batch, 1, n}};
    for (const Dims& bs : bias_shapes) {
      Handle bias = make_tensor(bs, dtype);
      Handle out2 = make_tensor({batch, m, n}, dtype);
      fill_random(bias, rng);
      ASSERT_EQ(aoti_torch_cpu_baddbmm_out(out2.get(), bias.get(), a.get(), b.get(), 0.75, -1.25), 0)
          << get_last_error().to_string();
      auto want =
          ref_bmm(values(a), values(b), expand(values(bias), bs, batch, m, n), batch, m, k, n, 0.75, -1.25);
      EXPECT_TRUE(all_close(values(out2), want, atol_for(dtype), rtol_for(dtype)))
          << dtype_name(dtype) << " bias " << ::testing::PrintToString(bs);
    }
  }
}

TEST(CpuMatmulTest, BmmWithBroadcastBatchOperand) {
  std::mt19937 rng(56);
  const int64_t batch = 4, m = 3, k = 2, n = 5;
  Handle a = make_strided({batch, m, k}, {0, k, 1}, DType::kFloat32);  // one matrix for every batch
  Handle b = make_tensor({batch, k, n}, DType::kFloat32);
  Handle out = make_tensor({batch, m, n}, DType::kFloat32);
  fill_random(a, rng);
  fill_random(b, rng);
  ASSERT_EQ(aoti_torch_cpu_bmm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
  EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, batch, m, k, n, 0, 1), 1e-5, 1e-5));
}

// Products large enough for oneDNN's blocked kernels, and what is left to
// the float32 path: a batch operand broadcast by a zero stride, a matrix
// with no unit stride.
TEST(CpuMatmulTest, LargerReducedPrecisionProductsMatchReference) {
  std::mt19937 rng(58);
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    const int64_t m = 64, k = 256, n = 96;
    Handle a = make_tensor({m, k}, dtype), b = make_matrix(k, n, Layout::kTransposed, dtype);
    Handle out = make_tensor({m, n}, dtype);
    fill_random(a, rng);
    fill_random(b, rng);
    ASSERT_EQ(aoti_torch_cpu_mm_out(out.get(), a.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(out), ref_bmm(values(a), values(b), {}, 1, m, k, n, 0, 1), 4 * atol_for(dtype),
                          rtol_for(dtype)))
        << dtype_name(dtype);

    const int64_t batch = 3;
    Handle shared = make_strided({batch, m, k}, {0, k, 1}, dtype);
    Handle bb = make_tensor({batch, k, n}, dtype);
    Handle bout = make_tensor({batch, m, n}, dtype);
    fill_random(shared, rng);
    fill_random(bb, rng);
    ASSERT_EQ(aoti_torch_cpu_bmm_out(bout.get(), shared.get(), bb.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(bout), ref_bmm(values(shared), values(bb), {}, batch, m, k, n, 0, 1),
                          4 * atol_for(dtype), rtol_for(dtype)))
        << dtype_name(dtype) << " broadcast batch";

    // A matrix with no unit stride (every other element): the float32 path.
    Handle sparse = make_strided({m, k}, {2 * k, 2}, dtype);
    Handle sout = make_tensor({m, n}, dtype);
    fill_random(sparse, rng);
    ASSERT_EQ(aoti_torch_cpu_mm_out(sout.get(), sparse.get(), b.get()), 0) << get_last_error().to_string();
    EXPECT_TRUE(all_close(values(sout), ref_bmm(values(sparse), values(b), {}, 1, m, k, n, 0, 1),
                          4 * atol_for(dtype), rtol_for(dtype)))
        << dtype_name(dtype) << " no unit stride";
  }
}

TEST(CpuMatmulTest, BaddbmmBetaZeroIgnoresNaN) {
  std::mt19937 rng(57);
  const int64_t batch = 2, m = 3, k = 4, n = 2;
  Handle a = make_tensor({batch, m, k}, DType::kFloat64), b = make_tensor({batch, k, n}, DType::kFloat64);
  Handle bias = make_tensor({batch, m, n}, DType::kFloat64),
         out = make_tensor({batch, m, n}, DType::kFloat64);
  fill_random(a, rng);
  fill_random(b, rng);
  fill_value(bias, std::numeric_limits<double>::quiet_NaN());
  fill_value(out, std::numeric_limits<double>::quiet_NaN());
  ASSERT_EQ(aoti_torch_cpu_baddbmm_out(out.get(), bias.get(), a.get(), b.get(), 0.0, 2.0), 0);
  EXPECT_TRUE(
      all_close(values(out), ref_bmm(values(a), values(b), {}, batch, m, k, n, 0, 2.0), 1e-12, 1e-12));
}

TEST(CpuMatmulTest, ErrorsAreReported) {
  Handle a = make_tensor({3, 4}, DType::kFloat32), b = make_tensor({4, 5}, DType::kFloat32);
  Handle out = make_tensor({3, 5}, DType::kFloat32);
  Handle bad_k = make_tensor({6, 5}, DType::kFloat32);
  Handle out_bad = make_tensor({5, 3}, DType::kFloat32);
  Handle b64 = make_tensor({4, 5}, DType::kFloat64);
  Handle i64a = make_tensor({3, 4}, DType::kInt64), i64b = make_tensor({4, 5}, DType::kInt64);
  Handle i64o = make_tensor({3, 5}, DType::kInt64);
  Handle a3 = make_tensor({2, 3, 4}, DType::kFloat32);

  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(nullptr, a.get(), b.get()), StatusCode::kInvalidArgument,
                          {"aoti_torch_cpu_mm_out", "'out' is a null"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), nullptr, b.get()), StatusCode::kInvalidArgument,
                          {"'self' is a null"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), a.get(), nullptr), StatusCode::kInvalidArgument,
                          {"'mat2' is a null"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), a.get(), bad_k.get()),
                          StatusCode::kInvalidArgument,
                          {"aoti_torch_cpu_mm_out", "[3, 4]", "[6, 5]", "cannot be multiplied"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out_bad.get(), a.get(), b.get()),
                          StatusCode::kInvalidArgument, {"'out' has shape [5, 3], expected [3, 5]"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), a.get(), b64.get()), StatusCode::kInvalidArgument,
                          {"float32", "float64", "same dtype"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(i64o.get(), i64a.get(), i64b.get()),
                          StatusCode::kUnimplemented, {"int64"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), a3.get(), b.get()), StatusCode::kInvalidArgument,
                          {"'self' must be 2-D", "[2, 3, 4]"}));

  // A tensor that claims to live on a GPU.
  float host[20] = {};
  const int64_t sz[2] = {4, 5}, st[2] = {5, 1};
  Handle gpu;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(host, 2, sz, st, 0, 6, 1, 0, gpu.out()), 0);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mm_out(out.get(), a.get(), gpu.get()), StatusCode::kInvalidArgument,
                          {"'mat2' is on cuda:0"}));

  // addmm: bias shape, bias dtype, null bias.
  Handle bias_bad = make_tensor({4}, DType::kFloat32), bias64 = make_tensor({5}, DType::kFloat64);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_addmm_out(out.get(), bias_bad.get(), a.get(), b.get(), 1, 1),
                          StatusCode::kInvalidArgument,
                          {"aoti_torch_cpu_addmm_out", "[4]", "broadcast", "[3, 5]"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_addmm_out(out.get(), bias64.get(), a.get(), b.get(), 1, 1),
                          StatusCode::kInvalidArgument, {"'self' is float64"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_addmm_out(out.get(), nullptr, a.get(), b.get(), 1, 1),
                          StatusCode::kInvalidArgument, {"'self' is a null"}));

  // bmm / baddbmm: rank, batch and inner-size mismatches.
  Handle x = make_tensor({2, 3, 4}, DType::kFloat32), y = make_tensor({3, 4, 5}, DType::kFloat32);
  Handle y_k = make_tensor({2, 5, 5}, DType::kFloat32), o3 = make_tensor({2, 3, 5}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_bmm_out(o3.get(), x.get(), y.get()), StatusCode::kInvalidArgument,
                          {"aoti_torch_cpu_bmm_out", "batch sizes differ", "[2, 3, 4]", "[3, 4, 5]"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_bmm_out(o3.get(), x.get(), y_k.get()), StatusCode::kInvalidArgument,
                          {"cannot be multiplied (4 != 5)"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_bmm_out(o3.get(), a.get(), y_k.get()), StatusCode::kInvalidArgument,
                          {"'self' must be 3-D"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_bmm_out(o3.get(), x.get(), nullptr), StatusCode::kInvalidArgument,
                          {"'mat2' is a null"}));
  Handle y_ok = make_tensor({2, 4, 5}, DType::kFloat32), bias3 = make_tensor({3, 3, 5}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_baddbmm_out(o3.get(), bias3.get(), x.get(), y_ok.get(), 1, 1),
                          StatusCode::kInvalidArgument,
                          {"aoti_torch_cpu_baddbmm_out", "[3, 3, 5]", "[2, 3, 5]"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_baddbmm_out(o3.get(), bias3.get(), nullptr, y_ok.get(), 1, 1),
                          StatusCode::kInvalidArgument, {"'batch1' is a null"}));
  Handle o3_bad = make_tensor({2, 5, 3}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_bmm_out(o3_bad.get(), x.get(), y_ok.get()),
                          StatusCode::kInvalidArgument, {"'out' has shape [2, 5, 3], expected [2, 3, 5]"}));
}

}  // namespace
}  // namespace cpu_ops_test
}  // namespace aotirt
