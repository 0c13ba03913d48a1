// aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu against a double
// reference: causal (top-left), bool and float masks with broadcasting,
// custom scale, grouped K/V heads, non-contiguous inputs, reduced precision,
// the output strides the compiled model expects, and the error paths.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>

#include "cpu_ops_test_util.h"

namespace aotirt {
namespace cpu_ops_test {
namespace {

struct SdpaShape {
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
};

enum class MaskKind { kNone, kBool, kFloat };

struct Reference {
  std::vector<double> out;  // [B, H, L, E] row-major
  std::vector<double> lse;  // [B, H, L]
};

// |mask| is expanded to [B, H, L, S] (empty when absent).
Reference ref_sdpa(const SdpaShape& s, const std::vector<double>& q, const std::vector<double>& k,
                   const std::vector<double>& v, const std::vector<double>& mask, MaskKind kind, bool causal,
                   double scale) {
  const int64_t L = s.q_len, S = s.kv_len, E = s.head_dim, group = s.heads / s.kv_heads;
  Reference r;
  r.out.assign(static_cast<size_t>(s.batch * s.heads * L * E), 0.0);
  r.lse.assign(static_cast<size_t>(s.batch * s.heads * L), 0.0);
  std::vector<double> w(static_cast<size_t>(S));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < L; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e)
            dot += q[((b * s.heads + h) * L + i) * E + e] * k[((b * s.kv_heads + kh) * S + j) * E + e];
          w[j] = dot * scale;
          if (kind != MaskKind::kNone) {
            const double m = mask[((b * s.heads + h) * L + i) * S + j];
            if (kind == MaskKind::kBool)
              w[j] = m != 0 ? w[j] : -INFINITY;
            else
              w[j] += m;
          }
          if (causal && j > i) w[j] = -INFINITY;
          mx = std::max(mx, w[j]);
        }
        const size_t row = static_cast<size_t>((b * s.heads + h) * L + i);
        if (mx == -INFINITY) continue;  // fully masked: zeros, logsumexp 0
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += std::exp(w[j] - mx);
        r.lse[row] = mx + std::log(sum);
        for (int64_t j = 0; j < S; ++j) {
          const double p = std::exp(w[j] - mx) / sum;
          for (int64_t e = 0; e < E; ++e)
            r.out[row * E + e] += p * v[((b * s.kv_heads + kh) * S + j) * E + e];
        }
      }
    }
  return r;
}

// Expands a row-major tensor of |sizes| (right-aligned) to |full|.
std::vector<double> expand_to(const std::vector<double>& src, const Dims& sizes, const Dims& full) {
  Dims padded(full.size(), 1);
  for (size_t i = 0; i < sizes.size(); ++i) padded[full.size() - sizes.size() + i] = sizes[i];
  Dims pst = contiguous(padded);
  std::vector<double> out(static_cast<size_t>(numel(full)));
  std::vector<int64_t> idx(full.size(), 0);
  for (size_t linear = 0; linear < out.size(); ++linear) {
    int64_t off = 0;
    for (size_t d = 0; d < full.size(); ++d) off += (padded[d] == 1 ? 0 : idx[d]) * pst[d];
    out[linear] = src[off];
    for (int64_t d = static_cast<int64_t>(full.size()) - 1; d >= 0; --d) {
      if (++idx[d] < full[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

struct SdpaRun {
  SdpaShape shape;
  DType dtype = DType::kFloat32;
  bool causal = false;
  MaskKind mask = MaskKind::kNone;
  Dims mask_sizes;
  DType mask_dtype = DType::kFloat32;
  bool has_scale = false;
  double scale = 0;
  Dims q_perm = {0, 1, 2, 3};  // memory order of q (and k, v)
};

void check(const SdpaRun& run, std::mt19937& rng) {
  const SdpaShape& s = run.shape;
  const std::string what = std::string(dtype_name(run.dtype)) + " L=" + std::to_string(s.q_len) +
                           " S=" + std::to_string(s.kv_len) + (run.causal ? " causal" : "") + " mask " +
                           std::to_string(static_cast<int>(run.mask));
  Handle q = make_permuted({s.batch, s.heads, s.q_len, s.head_dim}, run.q_perm, run.dtype);
  Handle k = make_permuted({s.batch, s.kv_heads, s.kv_len, s.head_dim}, run.q_perm, run.dtype);
  Handle v = make_permuted({s.batch, s.kv_heads, s.kv_len, s.head_dim}, run.q_perm, run.dtype);
  fill_random(q, rng, -2, 2);
  fill_random(k, rng, -2, 2);
  fill_random(v, rng);
  Handle mask;
  std::vector<double> mask_full;
  const Dims full{s.batch, s.heads, s.q_len, s.kv_len};
  if (run.mask != MaskKind::kNone) {
    mask = make_tensor(run.mask_sizes, run.mask == MaskKind::kBool ? DType::kBool : run.mask_dtype);
    if (run.mask == MaskKind::kBool) {
      // Keep ~70%, and always key 0 so no row is fully masked.
      std::bernoulli_distribution keep(0.7);
      std::vector<double> bits(static_cast<size_t>(numel(run.mask_sizes)));
      const int64_t S = run.mask_sizes.back();
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = (i % S == 0 || keep(rng)) ? 1.0 : 0.0;
      auto* p = static_cast<uint8_t*>(mask.impl().data_ptr());
      for (size_t i = 0; i < bits.size(); ++i) p[i] = bits[i] != 0;
    } else {
      fill_random(mask, rng, -3, 1);
    }
    mask_full = expand_to(values(mask), run.mask_sizes, full);
  }
  AtenTensorHandle mh = mask.get();
  double scale = run.scale;
  Handle out, lse;
  ASSERT_EQ(
      aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
          q.get(), k.get(), v.get(), 0.0, run.causal ? 1 : 0, run.mask != MaskKind::kNone ? &mh : nullptr,
          run.has_scale ? &scale : nullptr, out.out(), lse.out()),
      0)
      << get_last_error().to_string() << " " << what;

  // Layouts: output like empty_like(query); logsumexp float32 [B, L, H] viewed as [B, H, L].
  EXPECT_EQ(out.sizes(), q.sizes()) << what;
  EXPECT_EQ(out.strides(), q.strides()) << what;
  EXPECT_EQ(out.impl().dtype(), run.dtype);
  EXPECT_EQ(lse.sizes(), (Dims{s.batch, s.heads, s.q_len})) << what;
  EXPECT_EQ(lse.strides(), (Dims{s.q_len * s.heads, 1, s.heads})) << what;
  EXPECT_EQ(lse.impl().dtype(), DType::kFloat32);

  const double sc = run.has_scale ? run.scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  Reference want = ref_sdpa(s, values(q), values(k), values(v), mask_full, run.mask, run.causal, sc);
  EXPECT_TRUE(all_close(values(out), want.out, atol_for(run.dtype), rtol_for(run.dtype))) << what;
  const double lse_tol = run.dtype == DType::kFloat64 ? 1e-6 : 1e-4;
  EXPECT_TRUE(all_close(values(lse), want.lse, lse_tol, lse_tol)) << what;
}

TEST(CpuAttentionTest, PlainAttentionMatchesReference) {
  std::mt19937 rng(31);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SdpaRun r;
    r.dtype = dtype;
    r.shape = {2, 3, 3, 5, 7, 8};
    check(r, rng);
    r.shape = {1, 2, 2, 33, 17, 16};
    check(r, rng);
    r.shape = {1, 1, 1, 1, 1, 4};
    check(r, rng);
  }
}

TEST(CpuAttentionTest, CausalIsTopLeftAligned) {
  std::mt19937 rng(32);
  SdpaRun r;
  r.causal = true;
  for (SdpaShape s :
       {SdpaShape{2, 2, 2, 6, 6, 8}, SdpaShape{1, 3, 3, 3, 9, 4}, SdpaShape{1, 2, 2, 9, 4, 4}}) {
    r.shape = s;
    check(r, rng);
  }
}

TEST(CpuAttentionTest, BoolAndFloatMasksBroadcast) {
  std::mt19937 rng(33);
  const SdpaShape s{2, 3, 3, 5, 6, 8};
  const int64_t L = s.q_len, S = s.kv_len;
  for (const Dims& ms : {Dims{L, S}, Dims{1, 1, L, S}, Dims{2, 1, L, S}, Dims{2, 3, L, S}, Dims{1, S}}) {
    SdpaRun r;
    r.shape = s;
    r.mask_sizes = ms;
    r.mask = MaskKind::kBool;
    check(r, rng);
    r.mask = MaskKind::kFloat;
    check(r, rng);
    r.causal = true;  // mask and causal together
    check(r, rng);
  }
}

TEST(CpuAttentionTest, CustomScaleAndGroupedHeads) {
  std::mt19937 rng(34);
  SdpaRun r;
  r.shape = {2, 4, 4, 5, 7, 8};
  r.has_scale = true;
  r.scale = 0.3;
  check(r, rng);
  // Four query heads over two K/V heads: head h reads K/V head h / 2.
  r.shape = {2, 4, 2, 5, 7, 8};
  check(r, rng);
  r.shape = {1, 6, 1, 4, 4, 4};
  r.causal = true;
  check(r, rng);
}

TEST(CpuAttentionTest, OutputFollowsQueryLayout) {
  std::mt19937 rng(35);
  SdpaRun r;
  r.shape = {2, 3, 3, 5, 7, 8};
  // [B, L, H, E] memory viewed as [B, H, L, E]: the usual transformer layout.
  r.q_perm = {0, 2, 1, 3};
  check(r, rng);
  r.q_perm = {2, 0, 1, 3};
  r.mask = MaskKind::kFloat;
  r.mask_sizes = {5, 7};
  check(r, rng);
  // Head dim not innermost: computed through a contiguous temporary.
  r.q_perm = {0, 1, 3, 2};
  check(r, rng);
}

// Enough (batch, head) pairs and work for the pairs to be split across the
// OpenMP threads (four here, whatever the machine has), each with its own
// scores: grouped heads, masks, causal, strided q/k/v rows and float64.
TEST(CpuAttentionTest, HeadsSplitAcrossThreads) {
  std::mt19937 rng(38);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(4);
  SdpaRun r;
  r.shape = {2, 4, 2, 40, 48, 32};
  check(r, rng);
  r.q_perm = {0, 2, 1, 3};
  r.causal = true;
  check(r, rng);
  r.mask = MaskKind::kBool;
  r.mask_sizes = {2, 1, 40, 48};
  check(r, rng);
  r.dtype = DType::kFloat64;
  r.mask = MaskKind::kFloat;
  r.mask_dtype = DType::kFloat64;
  r.causal = false;
  check(r, rng);
  // Fewer pairs than threads: the pairs in turn, on threaded BLAS.
  r.shape = {1, 3, 3, 40, 48, 32};
  r.mask_sizes = {40, 48};
  check(r, rng);
  omp_set_num_threads(saved);
}

TEST(CpuAttentionTest, ReducedPrecisionRunsInFloat32) {
  std::mt19937 rng(36);
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    SdpaRun r;
    r.dtype = dtype;
    r.shape = {1, 2, 2, 6, 9, 16};
    r.q_perm = {0, 2, 1, 3};
    check(r, rng);
    r.causal = true;
    r.mask = MaskKind::kFloat;
    r.mask_sizes = {6, 9};
    r.mask_dtype = DType::kFloat32;  // PyTorch also takes a float32 mask for reduced-precision queries
    check(r, rng);
    r.mask_dtype = dtype;
    check(r, rng);
  }
}

TEST(CpuAttentionTest, FullyMaskedRowGivesZeros) {
  const SdpaShape s{1, 1, 1, 3, 4, 2};
  Handle q = make_tensor({1, 1, 3, 2}, DType::kFloat32), k = make_tensor({1, 1, 4, 2}, DType::kFloat32);
  Handle v = make_tensor({1, 1, 4, 2}, DType::kFloat32), mask = make_tensor({3, 4}, DType::kFloat32);
  std::mt19937 rng(37);
  fill_random(q, rng);
  fill_random(k, rng);
  fill_random(v, rng);
  fill_value(mask, 0.0);
  float* m = static_cast<float*>(mask.impl().data_ptr());
  for (int j = 0; j < 4; ++j) m[4 + j] = -std::numeric_limits<float>::infinity();
  AtenTensorHandle mh = mask.get();
  Handle out, lse;
  ASSERT_EQ(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.get(), k.get(), v.get(), 0.0, 0, &mh,
                                                                       nullptr, out.out(), lse.out()),
            0);
  Reference want = ref_sdpa(s, values(q), values(k), values(v), values(mask), MaskKind::kFloat, false,
                            1.0 / std::sqrt(2.0));
  auto got = values(out);
  EXPECT_EQ(got[2], 0.0);
  EXPECT_EQ(got[3], 0.0);
  EXPECT_EQ(values(lse)[1], 0.0);
  EXPECT_TRUE(all_close(got, want.out, 1e-5, 1e-5));
}

TEST(CpuAttentionTest, ErrorsAreReported) {
  const char* op = "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu";
  Handle q = make_tensor({2, 4, 5, 8}, DType::kFloat32), k = make_tensor({2, 4, 7, 8}, DType::kFloat32);
  Handle v = make_tensor({2, 4, 7, 8}, DType::kFloat32);
  Handle out, lse;
  auto call = [&](AtenTensorHandle qh, AtenTensorHandle kh, AtenTensorHandle vh, double dropout,
                  AtenTensorHandle* mask) {
    return aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(qh, kh, vh, dropout, 0, mask, nullptr,
                                                                      out.out(), lse.out());
  };
  EXPECT_TRUE(failed_with(call(q.get(), k.get(), v.get(), 0.1, nullptr), StatusCode::kUnimplemented,
                          {op, "dropout_p=0.1"}));
  EXPECT_TRUE(failed_with(call(nullptr, k.get(), v.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {op, "'query' is a null"}));
  EXPECT_TRUE(
      failed_with(call(q.get(), nullptr, v.get(), 0, nullptr), StatusCode::kInvalidArgument, {"'key'"}));
  EXPECT_TRUE(
      failed_with(call(q.get(), k.get(), nullptr, 0, nullptr), StatusCode::kInvalidArgument, {"'value'"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
                              q.get(), k.get(), v.get(), 0, 0, nullptr, nullptr, nullptr, lse.out()),
                          StatusCode::kInvalidArgument, {"ret0"}));

  Handle q3 = make_tensor({4, 5, 8}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q3.get(), k.get(), v.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"'query' must be 4-D", "[4, 5, 8]"}));
  Handle k_e = make_tensor({2, 4, 7, 6}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q.get(), k_e.get(), v.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"same head size", "[2, 4, 7, 6]"}));
  Handle v_e = make_tensor({2, 4, 7, 4}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q.get(), k.get(), v_e.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"same head size"}));
  Handle k_b = make_tensor({1, 4, 7, 8}, DType::kFloat32), v_b = make_tensor({1, 4, 7, 8}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q.get(), k_b.get(), v_b.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"batch sizes differ"}));
  Handle k_h = make_tensor({2, 3, 7, 8}, DType::kFloat32), v_h = make_tensor({2, 3, 7, 8}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q.get(), k_h.get(), v_h.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"multiple of key/value heads"}));
  Handle v_s = make_tensor({2, 4, 6, 8}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(q.get(), k.get(), v_s.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"key and value disagree"}));
  Handle k64 = make_tensor({2, 4, 7, 8}, DType::kFloat64);
  EXPECT_TRUE(failed_with(call(q.get(), k64.get(), v.get(), 0, nullptr), StatusCode::kInvalidArgument,
                          {"'key' is float64"}));
  Handle qi = make_tensor({2, 4, 5, 8}, DType::kInt64);
  EXPECT_TRUE(
      failed_with(call(qi.get(), k.get(), v.get(), 0, nullptr), StatusCode::kUnimplemented, {"int64"}));

  Handle m_int = make_tensor({5, 7}, DType::kInt32);
  AtenTensorHandle mh = m_int.get();
  EXPECT_TRUE(failed_with(call(q.get(), k.get(), v.get(), 0, &mh), StatusCode::kInvalidArgument,
                          {"'attn_mask' has dtype int32"}));
  Handle m_shape = make_tensor({5, 6}, DType::kFloat32);
  mh = m_shape.get();
  EXPECT_TRUE(failed_with(call(q.get(), k.get(), v.get(), 0, &mh), StatusCode::kInvalidArgument,
                          {"[5, 6]", "does not broadcast to [2, 4, 5, 7]"}));
  Handle m_3d = make_tensor({1, 5, 7}, DType::kFloat32);
  mh = m_3d.get();
  EXPECT_TRUE(
      failed_with(call(q.get(), k.get(), v.get(), 0, &mh), StatusCode::kInvalidArgument, {"2-D or 4-D"}));
  // A null mask handle behind the pointer means no mask.
  mh = nullptr;
  EXPECT_EQ(call(q.get(), k.get(), v.get(), 0, &mh), 0) << get_last_error().to_string();
}

}  // namespace
}  // namespace cpu_ops_test
}  // namespace aotirt
