// aoti_torch_cpu_convolution against a direct-summation double reference:
// 1-d/2-d/3-d, stride, padding, dilation, groups, transposed with
// output_padding, bias present or absent, non-contiguous and channels-last
// inputs, weights in any layout, bfloat16, and the argument errors.
#include <gtest/gtest.h>

#include "cpu_ops_test_util.h"

namespace aotirt {
namespace cpu_ops_test {
namespace {

struct ConvCase {
  Dims input;   // [N, C, spatial...]
  Dims weight;  // [Cout, Cin/g, k...] or transposed [Cin, Cout/g, k...]
  Dims stride, padding, dilation, output_padding;
  int64_t groups;
  bool transposed;
  bool bias;
};

// Output sizes per PyTorch's formulas.
Dims output_sizes(const ConvCase& c) {
  const size_t sp = c.input.size() - 2;
  Dims out{c.input[0], c.transposed ? c.weight[1] * c.groups : c.weight[0]};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t span = c.dilation[i] * (c.weight[2 + i] - 1) + 1;
    out.push_back(c.transposed
                      ? (c.input[2 + i] - 1) * c.stride[i] - 2 * c.padding[i] + span + c.output_padding[i]
                      : (c.input[2 + i] + 2 * c.padding[i] - span) / c.stride[i] + 1);
  }
  return out;
}

// Row-major index helpers over up to three spatial dims (padded with 1).
struct Grid {
  int64_t d[3] = {1, 1, 1};
  explicit Grid(const Dims& sizes) {
    const size_t sp = sizes.size() - 2;
    for (size_t i = 0; i < sp; ++i) d[3 - sp + i] = sizes[2 + i];
  }
  int64_t volume() const { return d[0] * d[1] * d[2]; }
};

std::vector<double> ref_conv(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>& b) {
  const Dims osz = output_sizes(c);
  const size_t sp = c.input.size() - 2;
  Grid gi(c.input), go(osz), gk(c.weight);
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  for (size_t i = 0; i < sp; ++i) {
    st[3 - sp + i] = c.stride[i];
    pd[3 - sp + i] = c.padding[i];
    dl[3 - sp + i] = c.dilation[i];
  }
  const int64_t n_batch = c.input[0], cin = c.input[1], cout = osz[1];
  const int64_t cin_g = cin / c.groups, cout_g = cout / c.groups;
  std::vector<double> y(static_cast<size_t>(numel(osz)), 0.0);
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t oc = 0; oc < cout; ++oc)
      for (int64_t o = 0; o < go.volume(); ++o)
        y[(n * cout + oc) * go.volume() + o] = b.empty() ? 0.0 : b[oc];
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t grp = 0; grp < c.groups; ++grp)
      for (int64_t ic = 0; ic < cin_g; ++ic)
        for (int64_t oc = 0; oc < cout_g; ++oc)
          for (int64_t k0 = 0; k0 < gk.d[0]; ++k0)
            for (int64_t k1 = 0; k1 < gk.d[1]; ++k1)
              for (int64_t k2 = 0; k2 < gk.d[2]; ++k2) {
                const int64_t kidx = (k0 * gk.d[1] + k1) * gk.d[2] + k2;
                const int64_t ci = grp * cin_g + ic, co = grp * cout_g + oc;
                const double wv = c.transposed ? w[(ci * cout_g + oc) * gk.volume() + kidx]
                                               : w[(co * cin_g + ic) * gk.volume() + kidx];
                // Forward: out o reads in i = o*s - p + k*d. Transposed: in i writes out o = i*s - p + k*d.
                const Grid& outer = c.transposed ? gi : go;
                const Grid& inner = c.transposed ? go : gi;
                for (int64_t a0 = 0; a0 < outer.d[0]; ++a0)
                  for (int64_t a1 = 0; a1 < outer.d[1]; ++a1)
                    for (int64_t a2 = 0; a2 < outer.d[2]; ++a2) {
                      const int64_t b0 = a0 * st[0] - pd[0] + k0 * dl[0];
                      const int64_t b1 = a1 * st[1] - pd[1] + k1 * dl[1];
                      const int64_t b2 = a2 * st[2] - pd[2] + k2 * dl[2];
                      if (b0 < 0 || b0 >= inner.d[0] || b1 < 0 || b1 >= inner.d[1] || b2 < 0 ||
                          b2 >= inner.d[2])
                        continue;
                      const int64_t a = (a0 * outer.d[1] + a1) * outer.d[2] + a2;
                      const int64_t bb = (b0 * inner.d[1] + b1) * inner.d[2] + b2;
                      if (c.transposed)
                        y[(n * cout + co) * go.volume() + bb] += wv * x[(n * cin + ci) * gi.volume() + a];
                      else
                        y[(n * cout + co) * go.volume() + a] += wv * x[(n * cin + ci) * gi.volume() + bb];
                    }
              }
  return y;
}

AOTITorchError run_conv(const ConvCase& c, const Handle& x, const Handle& w, AtenTensorHandle* bias,
                        Handle* out) {
  return aoti_torch_cpu_convolution(x.get(), w.get(), bias, c.stride.data(), c.stride.size(),
                                    c.padding.data(), c.padding.size(), c.dilation.data(), c.dilation.size(),
                                    c.transposed ? 1 : 0, c.output_padding.data(), c.output_padding.size(),
                                    c.groups, out->out());
}

void check_case(const ConvCase& c, DType dtype, std::mt19937& rng, bool permute_input = false) {
  const std::string what = "input " + ::testing::PrintToString(c.input) + " weight " +
                           ::testing::PrintToString(c.weight) + (c.transposed ? " transposed" : "") +
                           " groups " + std::to_string(c.groups) + " " + dtype_name(dtype);
  Dims perm(c.input.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  // Swap the last two dims in memory: a non-contiguous, non-channels-last input.
  if (permute_input) std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  Handle x = make_permuted(c.input, perm, dtype);
  Handle w = make_tensor(c.weight, dtype);
  const int64_t cout = output_sizes(c)[1];
  Handle b = make_tensor({cout}, dtype);
  fill_random(x, rng);
  fill_random(w, rng);
  fill_random(b, rng);
  AtenTensorHandle bh = b.get();
  Handle out;
  ASSERT_EQ(run_conv(c, x, w, c.bias ? &bh : nullptr, &out), 0)
      << get_last_error().to_string() << " " << what;
  EXPECT_EQ(out.sizes(), output_sizes(c)) << what;
  EXPECT_EQ(out.strides(), contiguous(output_sizes(c))) << what;
  auto want = ref_conv(c, values(x), values(w), c.bias ? values(b) : std::vector<double>());
  EXPECT_TRUE(all_close(values(out), want, atol_for(dtype), rtol_for(dtype))) << what;
}

const ConvCase kCases[] = {
    // 1-d
    {{2, 3, 11}, {4, 3, 3}, {1}, {0}, {1}, {0}, 1, false, true},
    {{1, 4, 13}, {6, 2, 4}, {2}, {3}, {2}, {0}, 2, false, false},
    {{2, 3, 7}, {3, 5, 3}, {2}, {1}, {1}, {1}, 1, true, true},
    // 2-d
    {{2, 3, 9, 8}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, true},
    {{1, 6, 10, 7}, {6, 2, 3, 2}, {2, 1}, {2, 0}, {2, 3}, {0, 0}, 3, false, false},
    {{2, 4, 6, 5}, {4, 1, 3, 3}, {1, 2}, {1, 1}, {1, 1}, {0, 0}, 4, false, true},  // depthwise
    {{2, 8, 5, 6}, {4, 8, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, false, true},  // pointwise
    {{2, 4, 5, 4}, {4, 3, 3, 3}, {2, 2}, {1, 0}, {1, 1}, {1, 0}, 1, true, true},
    {{1, 6, 4, 5}, {6, 2, 3, 2}, {3, 2}, {1, 1}, {2, 1}, {2, 1}, 2, true, false},
    // 3-d
    {{1, 2, 5, 6, 4}, {3, 2, 3, 3, 2}, {1, 2, 1}, {1, 1, 0}, {1, 1, 2}, {0, 0, 0}, 1, false, true},
    {{2, 4, 4, 5, 3}, {4, 2, 2, 3, 1}, {2, 1, 1}, {0, 1, 0}, {2, 1, 1}, {0, 0, 0}, 2, false, false},
    {{1, 2, 3, 4, 3}, {2, 3, 2, 3, 2}, {2, 2, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 0}, 1, true, true},
};

TEST(CpuConvolutionTest, MatchesReferenceInFloat32AndFloat64) {
  std::mt19937 rng(2024);
  for (const ConvCase& c : kCases) {
    check_case(c, DType::kFloat32, rng);
    check_case(c, DType::kFloat64, rng);
  }
}

TEST(CpuConvolutionTest, NonContiguousInput) {
  std::mt19937 rng(11);
  for (const ConvCase& c : kCases) check_case(c, DType::kFloat32, rng, /*permute_input=*/true);
}

// Weights in other layouts than dense: the kernels read them through their
// strides (a package that folds batch norms makes a fresh channels-last
// weight on every call). Kinds: 0 the last two dims swapped in memory, 1 the
// input channels innermost (channels-last for 4-d), 2 a view into a larger
// buffer (padded rows and an offset), 3 dim 0 broadcast (stride 0).
Handle make_weight(const Dims& sizes, int kind, DType dtype) {
  const size_t nd = sizes.size();
  Dims perm(nd);
  for (size_t i = 0; i < nd; ++i) perm[i] = static_cast<int64_t>(i);
  switch (kind) {
    case 0:
      std::swap(perm[nd - 1], perm[nd - 2]);
      return make_permuted(sizes, perm, dtype);
    case 1:
      perm.erase(perm.begin() + 1);
      perm.push_back(1);
      return make_permuted(sizes, perm, dtype);
    case 2: {
      Dims padded = sizes;
      padded[nd - 1] += 3;
      Dims st = contiguous(padded);
      return make_strided(sizes, st, dtype, /*offset=*/5);
    }
    default: {
      Dims st = contiguous(sizes);
      st[0] = 0;
      return make_strided(sizes, st, dtype);
    }
  }
}

TEST(CpuConvolutionTest, NonContiguousWeight) {
  std::mt19937 rng(16);
  for (const ConvCase& c : kCases) {
    for (int kind = 0; kind < 4; ++kind) {
      for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
        const std::string what = "weight " + ::testing::PrintToString(c.weight) + " kind " + std::to_string(kind) +
                                 " groups " + std::to_string(c.groups) + (c.transposed ? " transposed " : " ") +
                                 dtype_name(dtype);
        Handle x = make_tensor(c.input, dtype);
        Handle w = make_weight(c.weight, kind, dtype);
        fill_random(x, rng);
        fill_random(w, rng);
        Handle out;
        ASSERT_EQ(run_conv(c, x, w, nullptr, &out), 0) << get_last_error().to_string() << " " << what;
        EXPECT_EQ(out.sizes(), output_sizes(c)) << what;
        EXPECT_TRUE(all_close(values(out), ref_conv(c, values(x), values(w), {}), atol_for(dtype), rtol_for(dtype)))
            << what;
      }
    }
  }
}

TEST(CpuConvolutionTest, ReducedPrecisionInputs) {
  std::mt19937 rng(12);
  for (const ConvCase& c : {kCases[0], kCases[4], kCases[7], kCases[9]}) {
    check_case(c, DType::kBFloat16, rng);
    check_case(c, DType::kFloat16, rng);
  }
}

TEST(CpuConvolutionTest, BiasPointerToNullMeansNoBias) {
  std::mt19937 rng(13);
  ConvCase c = kCases[3];
  Handle x = make_tensor(c.input, DType::kFloat32), w = make_tensor(c.weight, DType::kFloat32);
  fill_random(x, rng);
  fill_random(w, rng);
  AtenTensorHandle null_bias = nullptr;
  Handle out;
  ASSERT_EQ(run_conv(c, x, w, &null_bias, &out), 0) << get_last_error().to_string();
  EXPECT_TRUE(all_close(values(out), ref_conv(c, values(x), values(w), {}), 1e-4, 1e-4));
}

TEST(CpuConvolutionTest, SingleValueParametersApplyToEveryDim) {
  std::mt19937 rng(14);
  ConvCase full = {{1, 2, 7, 6}, {3, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 1, false, true};
  ConvCase single = full;
  single.stride = {2};
  single.padding = {1};
  single.dilation = {1};
  single.output_padding = {0};
  Handle x = make_tensor(full.input, DType::kFloat32), w = make_tensor(full.weight, DType::kFloat32);
  Handle b = make_tensor({3}, DType::kFloat32);
  fill_random(x, rng);
  fill_random(w, rng);
  fill_random(b, rng);
  AtenTensorHandle bh = b.get();
  Handle out;
  ASSERT_EQ(run_conv(single, x, w, &bh, &out), 0) << get_last_error().to_string();
  EXPECT_EQ(out.sizes(), output_sizes(full));
  EXPECT_TRUE(all_close(values(out), ref_conv(full, values(x), values(w), values(b)), 1e-4, 1e-4));
}

TEST(CpuConvolutionTest, ChannelsLastInputGivesChannelsLastOutput) {
  std::mt19937 rng(15);
  // PyTorch (and so the compiled model) expects a channels-last result when
  // the input or the weight is channels-last.
  ConvCase c = {{2, 3, 6, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, true};
  for (int which = 0; which < 2; ++which) {
    Handle x = which == 0 ? make_permuted(c.input, {0, 2, 3, 1}, DType::kFloat32)
                          : make_tensor(c.input, DType::kFloat32);
    Handle w = which == 1 ? make_permuted(c.weight, {0, 2, 3, 1}, DType::kFloat32)
                          : make_tensor(c.weight, DType::kFloat32);
    Handle b = make_tensor({4}, DType::kFloat32);
    fill_random(x, rng);
    fill_random(w, rng);
    fill_random(b, rng);
    AtenTensorHandle bh = b.get();
    Handle out;
    ASSERT_EQ(run_conv(c, x, w, &bh, &out), 0) << get_last_error().to_string();
    const Dims os = output_sizes(c);  // [2, 4, 6, 5]
    EXPECT_EQ(out.strides(), (Dims{os[1] * os[2] * os[3], 1, os[3] * os[1], os[1]})) << which;
    EXPECT_TRUE(all_close(values(out), ref_conv(c, values(x), values(w), values(b)), 1e-4, 1e-4));
  }
  // 3-d channels-last in float32 too; float64 stays contiguous, as PyTorch's slow 3-d path does.
  ConvCase c3 = {
      {1, 2, 3, 4, 5}, {3, 2, 2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, false, false};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    Handle x = make_permuted(c3.input, {0, 2, 3, 4, 1}, dtype), w = make_tensor(c3.weight, dtype);
    fill_random(x, rng);
    fill_random(w, rng);
    Handle out;
    ASSERT_EQ(run_conv(c3, x, w, nullptr, &out), 0) << get_last_error().to_string();
    const Dims os = output_sizes(c3);
    const Dims want_strides = dtype == DType::kFloat32 ? Dims{os[1] * os[2] * os[3] * os[4], 1,
                                                              os[3] * os[4] * os[1], os[4] * os[1], os[1]}
                                                       : contiguous(os);
    EXPECT_EQ(out.strides(), want_strides) << dtype_name(dtype);
    EXPECT_TRUE(
        all_close(values(out), ref_conv(c3, values(x), values(w), {}), atol_for(dtype), rtol_for(dtype)));
  }
}

TEST(CpuConvolutionTest, ErrorsAreReported) {
  ConvCase c = {{1, 4, 6, 6}, {2, 4, 3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, false, false};
  Handle x = make_tensor(c.input, DType::kFloat32), w = make_tensor(c.weight, DType::kFloat32);
  Handle out;
  const char* op = "aoti_torch_cpu_convolution";

  EXPECT_TRUE(failed_with(
      aoti_torch_cpu_convolution(nullptr, w.get(), nullptr, c.stride.data(), 2, c.padding.data(), 2,
                                 c.dilation.data(), 2, 0, c.output_padding.data(), 2, 1, out.out()),
      StatusCode::kInvalidArgument, {op, "'input' is a null"}));
  EXPECT_TRUE(failed_with(
      aoti_torch_cpu_convolution(x.get(), nullptr, nullptr, c.stride.data(), 2, c.padding.data(), 2,
                                 c.dilation.data(), 2, 0, c.output_padding.data(), 2, 1, out.out()),
      StatusCode::kInvalidArgument, {"'weight' is a null"}));
  EXPECT_TRUE(failed_with(
      aoti_torch_cpu_convolution(x.get(), w.get(), nullptr, c.stride.data(), 2, c.padding.data(), 2,
                                 c.dilation.data(), 2, 0, c.output_padding.data(), 2, 1, nullptr),
      StatusCode::kInvalidArgument, {"ret0"}));

  ConvCase bad = c;
  bad.groups = 3;
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument,
                          {op, "[2, 4, 3, 3]", "not divisible by groups=3"}));
  bad.groups = 2;
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument,
                          {op, "'input' [1, 4, 6, 6] has 4 channels", "[2, 4, 3, 3]", "groups=2 expects 8"}));
  bad = c;
  bad.groups = 0;
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument, {"groups"}));
  bad = c;
  bad.stride = {1, 0};
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument, {"stride"}));
  bad = c;
  bad.padding = {1, 1, 1};
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument,
                          {"'padding' has 3 values"}));
  bad = c;
  bad.dilation = {4, 4};
  EXPECT_TRUE(failed_with(run_conv(bad, x, w, nullptr, &out), StatusCode::kInvalidArgument, {"larger than"}));
  bad = c;
  bad.transposed = true;
  bad.stride = {2, 2};
  bad.output_padding = {2, 0};
  Handle wt = make_tensor({4, 2, 3, 3}, DType::kFloat32);
  EXPECT_TRUE(
      failed_with(run_conv(bad, x, wt, nullptr, &out), StatusCode::kInvalidArgument, {"output_padding 2"}));
  bad.output_padding = {1, 1};
  EXPECT_EQ(run_conv(bad, x, wt, nullptr, &out), 0) << get_last_error().to_string();
  Handle wt_bad = make_tensor({3, 2, 3, 3}, DType::kFloat32);
  EXPECT_TRUE(failed_with(run_conv(bad, x, wt_bad, nullptr, &out), StatusCode::kInvalidArgument,
                          {"transposed 'weight' [3, 2, 3, 3]"}));

  Handle w3 = make_tensor({2, 4, 3}, DType::kFloat32);
  EXPECT_TRUE(failed_with(run_conv(c, x, w3, nullptr, &out), StatusCode::kInvalidArgument, {"as many dims"}));
  Handle x2 = make_tensor({4, 6}, DType::kFloat32);
  EXPECT_TRUE(
      failed_with(run_conv(c, x2, w, nullptr, &out), StatusCode::kInvalidArgument, {"3-D, 4-D or 5-D"}));
  Handle w64 = make_tensor(c.weight, DType::kFloat64);
  EXPECT_TRUE(failed_with(run_conv(c, x, w64, nullptr, &out), StatusCode::kInvalidArgument, {"float64"}));
  Handle xi = make_tensor(c.input, DType::kInt32), wi = make_tensor(c.weight, DType::kInt32);
  EXPECT_TRUE(failed_with(run_conv(c, xi, wi, nullptr, &out), StatusCode::kUnimplemented, {"int32"}));

  Handle b_bad = make_tensor({3}, DType::kFloat32), b64 = make_tensor({2}, DType::kFloat64);
  AtenTensorHandle bh = b_bad.get();
  EXPECT_TRUE(
      failed_with(run_conv(c, x, w, &bh, &out), StatusCode::kInvalidArgument, {"'bias' has shape [3]"}));
  bh = b64.get();
  EXPECT_TRUE(failed_with(run_conv(c, x, w, &bh, &out), StatusCode::kInvalidArgument, {"'bias' is float64"}));
}

}  // namespace
}  // namespace cpu_ops_test
}  // namespace aotirt
