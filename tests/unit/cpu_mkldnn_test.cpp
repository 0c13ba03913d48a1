// The oneDNN shims of frozen packages against double references computed
// here: linears and convolutions with every unary post-op, binary post-ops
// (out of place and summed in place), prepacked weights in blocked layouts
// (packed by this file with direct formulas, described by the same 772-byte
// descriptor torch 2.11 writes) and plain weights, float32 and bfloat16,
// groups, stride, padding and dilation, the primitive cache's bound, and the
// argument errors. Skipped, visibly, when the build has no oneDNN or the
// library cannot be loaded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "cpu_ops_test_util.h"

#if AOTIRT_WITH_ONEDNN
#include "backends/cpu/ops/cpu_onednn.h"
#endif

namespace aotirt {
namespace cpu_ops_test {
namespace {

#if AOTIRT_WITH_ONEDNN

using cpu_ops::BlockedLayout;
using cpu_ops::onednn_context;
using cpu_ops::parse_blocked_layout;

// A descriptor as torch 2.11 serializes a prepacked weight: oneDNN 3.10's
// memory descriptor (fields at fixed offsets), then the group count.
struct Blob {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(772, 0);
  template <class T>
  void put(size_t off, T v) {
    std::memcpy(bytes.data() + off, &v, sizeof(T));
  }
};

struct Block {
  int64_t size;
  int64_t dim;
};

Blob make_blob(const Dims& dims, const Dims& padded, const Dims& strides, const std::vector<Block>& blocks,
               int32_t dnnl_dtype, int32_t groups = 1) {
  Blob b;
  b.put<int32_t>(0, 1);
  b.put<int32_t>(4, static_cast<int32_t>(dims.size()));
  for (size_t d = 0; d < dims.size(); ++d) {
    b.put<int64_t>(8 + 8 * d, dims[d]);
    b.put<int64_t>(112 + 8 * d, padded[d]);
    b.put<int64_t>(320 + 8 * d, strides[d]);
  }
  b.put<int32_t>(104, dnnl_dtype);
  b.put<int32_t>(312, 2);  // blocked
  b.put<int32_t>(416, static_cast<int32_t>(blocks.size()));
  for (size_t k = 0; k < blocks.size(); ++k) {
    b.put<int64_t>(424 + 8 * k, blocks[k].size);
    b.put<int64_t>(520 + 8 * k, blocks[k].dim);
  }
  b.put<int32_t>(768, groups);
  return b;
}

constexpr int32_t kDnnlF32 = 3, kDnnlBf16 = 2;

// A prepacked weight: its bytes (owned here) behind an _mkldnn tensor handle.
struct PackedWeight {
  std::vector<char> data;
  Blob blob;
  Handle handle;
};

// Packs |logical| (row-major over |dims|) with |offset_of|, which maps a
// logical index to the element offset of the layout under test.
void make_packed(PackedWeight& p, const Dims& tensor_sizes, const Dims& dims, const std::vector<double>& logical,
                 DType dtype, int64_t span, const std::function<int64_t(const Dims&)>& offset_of) {
  const size_t el = dtype_size(dtype);
  p.data.assign(static_cast<size_t>(span) * el + 64, 0);
  Dims idx(dims.size(), 0);
  for (size_t flat = 0; flat < logical.size(); ++flat) {
    store_from_double(p.data.data() + offset_of(idx) * el, dtype, logical[flat]);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  // torch gives such constants nominal strides; aotirt must not rely on them.
  Dims strides(tensor_sizes.size(), 0);
  strides[0] = 1;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob_v2(p.data.data(), static_cast<int64_t>(tensor_sizes.size()),
                                                  tensor_sizes.data(), strides.data(), 0,
                                                  static_cast<int32_t>(dtype), 0, 0, p.handle.out(),
                                                  aoti_torch_layout__mkldnn(), p.blob.bytes.data(),
                                                  static_cast<int64_t>(p.blob.bytes.size())),
            0)
      << get_last_error().to_string();
}

std::vector<double> random_values(size_t n, std::mt19937& rng, DType dtype) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) {
    char buf[8];
    store_from_double(buf, dtype, dist(rng));
    x = load_as_double(buf, dtype);  // representable in |dtype|
  }
  return v;
}

Handle tensor_from(const Dims& sizes, const std::vector<double>& v, DType dtype) {
  Handle h = make_tensor(sizes, dtype);
  char* base = static_cast<char*>(h.impl().data_ptr());
  for (size_t i = 0; i < v.size(); ++i) store_from_double(base + i * dtype_size(dtype), dtype, v[i]);
  return h;
}

// The post-ops as torch defines them.
double apply_unary(const std::string& attr, double x, const std::vector<double>& s, const std::string& alg) {
  if (attr == "none") return x;
  if (attr == "relu") return x > 0 ? x : 0;
  if (attr == "leaky_relu") return x > 0 ? x : s[0] * x;
  if (attr == "hardtanh") return std::min(std::max(x, s[0]), s[1]);
  if (attr == "gelu" && alg == "tanh")
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (attr == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (attr == "tanh") return std::tanh(x);
  if (attr == "sigmoid") return 1 / (1 + std::exp(-x));
  if (attr == "swish") return x / (1 + std::exp(-x));
  if (attr == "hardswish") return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
  if (attr == "hardsigmoid") return std::min(std::max(x + 3, 0.0), 6.0) / 6;
  ADD_FAILURE() << "no reference for " << attr;
  return x;
}

// oneDNN runs bfloat16 only on CPUs with AVX-512 (avx512_core) on x86; an
// AVX2 machine has no bfloat16 primitive at all (and torch makes no bfloat16
// frozen packages there). The bfloat16 cases are left out there, saying so.
bool onednn_runs_bf16() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return true;
#endif
}

// float32, and bfloat16 where oneDNN runs it.
std::vector<DType> onednn_dtypes() {
  if (onednn_runs_bf16()) return {DType::kFloat32, DType::kBFloat16};
  std::printf("SKIP: bfloat16 cases: this CPU has no AVX-512, so oneDNN has no bfloat16 primitives\n");
  return {DType::kFloat32};
}

class OnednnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ctx = onednn_context();
    if (!ctx.ok()) GTEST_SKIP() << "oneDNN unavailable: " << ctx.status().to_string();
    clear_last_error();
  }
};

// ---- descriptor decoding (no library needed) ---------------------------------

TEST(OnednnLayoutTest, DecodesTorchDescriptorsAndOffsets) {
  // torch's bfloat16 linear packing: [384, 128] as BA16a64b2a.
  Blob b = make_blob({384, 128}, {384, 128}, {8192, 2048}, {{16, 1}, {64, 0}, {2, 1}}, kDnnlBf16);
  auto l = parse_blocked_layout(b.bytes.data(), b.bytes.size());
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  EXPECT_EQ(l->dtype, DType::kBFloat16);
  EXPECT_EQ(l->ndims, 2);
  EXPECT_EQ(l->nblks, 3);
  EXPECT_EQ(l->span(), 384 * 128);
  for (int64_t n : {0, 1, 63, 64, 200, 383})
    for (int64_t k : {0, 1, 2, 31, 32, 33, 127}) {
      const int64_t idx[2] = {n, k};
      const int64_t want = (n / 64) * 8192 + (k / 32) * 2048 + ((k / 2) % 16) * 128 + (n % 64) * 2 + k % 2;
      EXPECT_EQ(l->offset(idx), want) << n << "," << k;
    }
  // A grouped (depthwise) convolution weight padded from 72 groups to 80.
  Blob g = make_blob({72, 1, 1, 3, 3}, {80, 1, 1, 3, 3}, {16, 80, 80, 240, 80}, {{16, 0}}, kDnnlF32, 72);
  auto lg = parse_blocked_layout(g.bytes.data(), g.bytes.size());
  ASSERT_TRUE(lg.ok()) << lg.status().to_string();
  EXPECT_EQ(lg->groups, 72);
  EXPECT_EQ(lg->span(), 80 * 9);
}

TEST(OnednnLayoutTest, RefusesDescriptorsItCannotRead) {
  Blob ok = make_blob({8, 4}, {8, 4}, {4, 1}, {}, kDnnlF32);
  auto expect_refused = [](const Blob& b, StatusCode code, const std::string& part) {
    auto l = parse_blocked_layout(b.bytes.data(), b.bytes.size());
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.status().code(), code) << l.status().to_string();
    EXPECT_NE(l.status().message().find(part), std::string::npos) << l.status().to_string();
  };
  EXPECT_TRUE(parse_blocked_layout(ok.bytes.data(), ok.bytes.size()).ok());
  auto short_blob = parse_blocked_layout(ok.bytes.data(), 768);
  EXPECT_EQ(short_blob.status().code(), StatusCode::kUnimplemented);
  Blob b = ok;
  b.put<int32_t>(0, 7);
  expect_refused(b, StatusCode::kUnimplemented, "starts with 7");
  b = ok;
  b.put<int32_t>(312, 3);  // opaque format kind
  expect_refused(b, StatusCode::kUnimplemented, "format kind 3");
  b = ok;
  b.put<int32_t>(104, 4);  // s32
  expect_refused(b, StatusCode::kUnimplemented, "data type 4");
  b = ok;
  b.put<int32_t>(4, 0);
  expect_refused(b, StatusCode::kInvalidArgument, "0 dims");
  b = make_blob({8, 4}, {10, 4}, {4, 1}, {{4, 0}}, kDnnlF32);
  expect_refused(b, StatusCode::kInvalidArgument, "not a multiple");
  b = make_blob({8, 4}, {8, 4}, {4, 1}, {{4, 5}}, kDnnlF32);
  expect_refused(b, StatusCode::kInvalidArgument, "on dim 5");
  b = ok;
  b.put<uint64_t>(640, 1);  // int8 compensation, on a float weight
  expect_refused(b, StatusCode::kUnimplemented, "compensation");
  b = ok;
  b.put<int32_t>(104, 5);     // s8
  b.put<uint64_t>(640, 0x2);  // scale_adjust: the weight is not as stored
  expect_refused(b, StatusCode::kUnimplemented, "flags 0x2");
}

TEST(OnednnLayoutTest, KeepsTheDescriptorWithTheStorage) {
  Blob b = make_blob({8, 4}, {8, 4}, {4, 1}, {}, kDnnlF32);
  std::vector<float> data(32, 1.f);
  const int64_t sizes[2] = {8, 4}, strides[2] = {1, 0};
  Handle h;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob_v2(data.data(), 2, sizes, strides, 0, 6, 0, 0, h.out(),
                                                  aoti_torch_layout__mkldnn(), b.bytes.data(), 772),
            0);
  const OpaqueLayout* opaque = h.impl().storage()->opaque();
  ASSERT_NE(opaque, nullptr);
  EXPECT_EQ(opaque->layout(), 3);
  EXPECT_EQ(opaque->metadata(), b.bytes);
  // Its bytes are not strided: copying it as if they were is refused.
  Handle copy;
  EXPECT_TRUE(failed_with(aoti_torch_clone(h.get(), copy.out()), StatusCode::kUnimplemented, {"opaque"}));
}

// ---- linear ----------------------------------------------------------------

// X [M, K] @ W[N, K]^T + bias, then the post-op.
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>* bias, int64_t m, int64_t n, int64_t k) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? (*bias)[j] : 0.0;
      for (int64_t t = 0; t < k; ++t) acc += x[i * k + t] * w[j * k + t];
      y[i * n + j] = acc;
    }
  return y;
}

// [N, K] packed with N in blocks of 16 (padded), as Ab16a.
void pack_linear_weight(PackedWeight& p, int64_t n, int64_t k, const std::vector<double>& w, DType dtype) {
  const int64_t np = (n + 15) / 16 * 16;
  p.blob = make_blob({n, k}, {np, k}, {16 * k, 16}, {{16, 0}}, dtype == DType::kFloat32 ? kDnnlF32 : kDnnlBf16);
  make_packed(p, {n, k}, {n, k}, w, dtype, np * k,
              [&](const Dims& i) { return (i[0] / 16) * 16 * k + i[1] * 16 + i[0] % 16; });
}

struct LinearCase {
  std::string attr;
  std::vector<double> scalars;
  std::string algorithm;
};

TEST_F(OnednnTest, LinearWithEveryUnaryPostOpOnAPackedWeight) {
  std::mt19937 rng(1);
  const int64_t m = 5, n = 24, k = 40;
  for (DType dtype : onednn_dtypes()) {
    auto x = random_values(m * k, rng, dtype);
    auto w = random_values(n * k, rng, dtype);
    auto b = random_values(n, rng, dtype);
    PackedWeight pw;
    pack_linear_weight(pw, n, k, w, dtype);
    Handle hx = tensor_from({m, k}, x, dtype);
    Handle hb = tensor_from({n}, b, dtype);
    const auto base = linear_ref(x, w, &b, m, n, k);
    for (const LinearCase& c : std::vector<LinearCase>{{"none", {}, ""},
                                                       {"relu", {-1.0}, ""},
                                                       {"leaky_relu", {0.1}, ""},
                                                       {"hardtanh", {-0.5, 0.5}, ""},
                                                       {"gelu", {}, "none"},
                                                       {"gelu", {}, "tanh"},
                                                       {"tanh", {}, ""},
                                                       {"sigmoid", {}, ""},
                                                       {"swish", {}, ""},
                                                       {"hardswish", {}, ""},
                                                       {"hardsigmoid", {}, ""}}) {
      std::vector<const double*> sp;
      for (const double& s : c.scalars) sp.push_back(&s);
      const char* alg = c.algorithm.c_str();
      AtenTensorHandle bias = hb.get();
      Handle out;
      ASSERT_EQ(aoti_torch_cpu__linear_pointwise(hx.get(), pw.handle.get(), &bias, c.attr.c_str(), sp.data(),
                                                 static_cast<int64_t>(sp.size()), &alg, out.out()),
                0)
          << c.attr << ": " << get_last_error().to_string();
      EXPECT_EQ(out.sizes(), (Dims{m, n}));
      EXPECT_EQ(out.impl().dtype(), dtype);
      std::vector<double> want(base.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = apply_unary(c.attr, base[i], c.scalars, c.algorithm);
      EXPECT_TRUE(all_close(values(out), want, atol_for(dtype) * 4, rtol_for(dtype)))
          << c.attr << " " << c.algorithm << " " << dtype_name(dtype);
    }
  }
}

TEST_F(OnednnTest, LinearOnAPlainWeightWithoutBiasAndA3dInput) {
  std::mt19937 rng(2);
  const int64_t n = 7, k = 9;
  auto x = random_values(2 * 3 * k, rng, DType::kFloat32);
  auto w = random_values(n * k, rng, DType::kFloat32);
  Handle hx = tensor_from({2, 3, k}, x, DType::kFloat32);
  Handle hw = tensor_from({n, k}, w, DType::kFloat32);
  const char* alg = "";
  Handle out;
  ASSERT_EQ(aoti_torch_cpu__linear_pointwise(hx.get(), hw.get(), nullptr, "relu", nullptr, 0, &alg, out.out()), 0)
      << get_last_error().to_string();
  EXPECT_EQ(out.sizes(), (Dims{2, 3, n}));
  auto want = linear_ref(x, w, nullptr, 6, n, k);
  for (double& v : want) v = v > 0 ? v : 0;
  EXPECT_TRUE(all_close(values(out), want, 1e-5, 1e-5));
}

TEST_F(OnednnTest, LinearWithABinaryPostOp) {
  std::mt19937 rng(3);
  const int64_t m = 6, n = 20, k = 16;
  auto x = random_values(m * k, rng, DType::kFloat32);
  auto w = random_values(n * k, rng, DType::kFloat32);
  auto b = random_values(n, rng, DType::kFloat32);
  auto o = random_values(m * n, rng, DType::kFloat32);
  PackedWeight pw;
  pack_linear_weight(pw, n, k, w, DType::kFloat32);
  Handle hx = tensor_from({m, k}, x, DType::kFloat32);
  Handle hb = tensor_from({n}, b, DType::kFloat32);
  Handle ho = tensor_from({m, n}, o, DType::kFloat32);
  const auto base = linear_ref(x, w, &b, m, n, k);
  for (const char* op : {"add", "sub", "mul", "div"}) {
    AtenTensorHandle bias = hb.get();
    Handle out;
    ASSERT_EQ(aoti_torch_cpu__linear_pointwise_binary(hx.get(), ho.get(), pw.handle.get(), &bias, op, out.out()), 0)
        << op << ": " << get_last_error().to_string();
    std::vector<double> want(base.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const std::string s = op;
      want[i] = s == "add"   ? base[i] + o[i]
                : s == "sub" ? base[i] - o[i]
                : s == "mul" ? base[i] * o[i]
                             : base[i] / o[i];
    }
    EXPECT_TRUE(all_close(values(out), want, 1e-4, 1e-4)) << op;
  }
}

TEST_F(OnednnTest, LinearRefusesBadArguments) {
  const int64_t m = 2, n = 4, k = 3;
  std::mt19937 rng(4);
  auto w = random_values(n * k, rng, DType::kFloat32);
  PackedWeight pw;
  pack_linear_weight(pw, n, k, w, DType::kFloat32);
  Handle hx = tensor_from({m, k}, random_values(m * k, rng, DType::kFloat32), DType::kFloat32);
  Handle out;
  const char* alg = "";
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(hx.get(), pw.handle.get(), nullptr, "softplus", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kInvalidArgument, {"_linear_pointwise", "softplus"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(hx.get(), pw.handle.get(), nullptr, "leaky_relu", nullptr,
                                                           0, &alg, out.out()),
                          StatusCode::kInvalidArgument, {"leaky_relu", "scalar"}));
  const char* bad_alg = "fast";
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(hx.get(), pw.handle.get(), nullptr, "gelu", nullptr, 0,
                                                           &bad_alg, out.out()),
                          StatusCode::kInvalidArgument, {"gelu algorithm 'fast'"}));
  Handle wide = make_tensor({m, k + 1}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(wide.get(), pw.handle.get(), nullptr, "none", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kInvalidArgument, {"4 features", "takes 3"}));
  Handle ints = make_tensor({m, k}, DType::kInt32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(ints.get(), pw.handle.get(), nullptr, "none", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kUnimplemented, {"int32", "float32, bfloat16"}));
  Handle bf16 = make_tensor({m, k}, DType::kBFloat16);
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(bf16.get(), pw.handle.get(), nullptr, "none", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kInvalidArgument, {"same dtype"}));
  Handle hb = make_tensor({n + 1}, DType::kFloat32);
  AtenTensorHandle bias = hb.get();
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(hx.get(), pw.handle.get(), &bias, "none", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kInvalidArgument, {"'bias'"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise(nullptr, pw.handle.get(), nullptr, "none", nullptr, 0,
                                                           &alg, out.out()),
                          StatusCode::kInvalidArgument, {"null"}));
  Handle other = make_tensor({m, n + 1}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise_binary(hx.get(), other.get(), pw.handle.get(), nullptr,
                                                                  "add", out.out()),
                          StatusCode::kInvalidArgument, {"'other'"}));
  Handle other_ok = make_tensor({m, n}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu__linear_pointwise_binary(hx.get(), other_ok.get(), pw.handle.get(), nullptr,
                                                                  "pow", out.out()),
                          StatusCode::kInvalidArgument, {"'pow'"}));
}

// ---- convolution --------------------------------------------------------------

struct ConvGeom {
  int64_t n, c, h, w, o, kh, kw, groups, stride, pad, dil;
  int64_t oh() const { return (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1; }
  int64_t ow() const { return (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1; }
};

// y[n, o, y, x] in NCHW order (values() reads logical order).
std::vector<double> conv_ref(const ConvGeom& g, const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>* bias) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  std::vector<double> y(static_cast<size_t>(g.n * g.o * g.oh() * g.ow()));
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t oy = 0; oy < g.oh(); ++oy)
        for (int64_t ox = 0; ox < g.ow(); ++ox) {
          double acc = bias ? (*bias)[o] : 0.0;
          const int64_t grp = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t iy = oy * g.stride - g.pad + ky * g.dil, ix = ox * g.stride - g.pad + kx * g.dil;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                const int64_t c = grp * cg + ci;
                acc += x[((b * g.c + c) * g.h + iy) * g.w + ix] * w[((o * cg + ci) * g.kh + ky) * g.kw + kx];
              }
          y[((b * g.o + o) * g.oh() + oy) * g.ow() + ox] = acc;
        }
  return y;
}

// A channels-last input holding |x| (NCHW logical order).
Handle channels_last_input(const ConvGeom& g, const std::vector<double>& x, DType dtype) {
  Handle h = make_permuted({g.n, g.c, g.h, g.w}, {0, 2, 3, 1}, dtype);
  char* base = static_cast<char*>(h.impl().data_ptr());
  size_t i = 0;
  for_each_element(h.impl(),
                   [&](int64_t off, int64_t) { store_from_double(base + off * dtype_size(dtype), dtype, x[i++]); });
  return h;
}

// Packs the weight as oneDNN blocks convolution weights: output channels in
// blocks of 16 innermost ("Ohwi16o" for one group; "Goihw16g" per group for
// depthwise, where the descriptor has a leading group dim).
void pack_conv_weight(PackedWeight& p, const ConvGeom& g, const std::vector<double>& w, DType dtype) {
  const int32_t dt = dtype == DType::kFloat32 ? kDnnlF32 : kDnnlBf16;
  const int64_t cg = g.c / g.groups, kk = g.kh * g.kw;
  if (g.groups == 1) {
    const int64_t op = (g.o + 15) / 16 * 16;
    p.blob = make_blob({g.o, g.c, g.kh, g.kw}, {op, g.c, g.kh, g.kw}, {16 * g.c * kk, 16, 16 * g.c * g.kw, 16 * g.c},
                       {{16, 0}}, dt);
    make_packed(p, {g.o, g.c, g.kh, g.kw}, {g.o, g.c, g.kh, g.kw}, w, dtype, op * g.c * kk, [&](const Dims& i) {
      return (i[0] / 16) * 16 * g.c * kk + ((i[2] * g.kw + i[3]) * g.c + i[1]) * 16 + i[0] % 16;
    });
    return;
  }
  ASSERT_EQ(g.o, g.groups);  // depthwise: one output per group
  ASSERT_EQ(cg, 1);
  const int64_t gp = (g.groups + 15) / 16 * 16;
  p.blob = make_blob({g.groups, 1, 1, g.kh, g.kw}, {gp, 1, 1, g.kh, g.kw}, {16 * kk, gp * kk, gp * kk, 16 * g.kw, 16},
                     {{16, 0}}, dt, static_cast<int32_t>(g.groups));
  make_packed(p, {g.o, 1, g.kh, g.kw}, {g.groups, 1, 1, g.kh, g.kw}, w, dtype, gp * kk, [&](const Dims& i) {
    return (i[0] / 16) * 16 * kk + (i[3] * g.kw + i[4]) * 16 + i[0] % 16;
  });
}

// Runs the unary convolution shim with |w| (packed or plain) and checks it.
void check_conv(const ConvGeom& g, DType dtype, bool packed, const std::string& attr, uint32_t seed) {
  std::mt19937 rng(seed);
  auto x = random_values(g.n * g.c * g.h * g.w, rng, dtype);
  auto w = random_values(g.o * (g.c / g.groups) * g.kh * g.kw, rng, dtype);
  auto b = random_values(g.o, rng, dtype);
  PackedWeight pw;
  Handle plain;
  if (packed)
    pack_conv_weight(pw, g, w, dtype);
  else
    plain = tensor_from({g.o, g.c / g.groups, g.kh, g.kw}, w, dtype);
  Handle hx = channels_last_input(g, x, dtype);
  Handle hb = tensor_from({g.o}, b, dtype);
  const int64_t pad[2] = {g.pad, g.pad}, str[2] = {g.stride, g.stride}, dil[2] = {g.dil, g.dil};
  AtenTensorHandle bias = hb.get();
  const double* none[1] = {nullptr};
  const char* alg = "";
  Handle out;
  ASSERT_EQ(aoti_torch_cpu_mkldnn__convolution_pointwise(hx.get(), packed ? pw.handle.get() : plain.get(), &bias,
                                                         pad, 2, str, 2, dil, 2, g.groups, attr.c_str(), none, 1,
                                                         &alg, out.out()),
            0)
      << get_last_error().to_string();
  const Dims out_sizes{g.n, g.o, g.oh(), g.ow()};
  ASSERT_EQ(out.sizes(), out_sizes);
  // Channels-last, as Inductor planned the buffer.
  EXPECT_EQ(out.strides(), (Dims{g.o * g.oh() * g.ow(), 1, g.ow() * g.o, g.o}));
  auto want = conv_ref(g, x, w, &b);
  for (double& v : want) v = apply_unary(attr, v, {}, "");
  EXPECT_TRUE(all_close(values(out), want, atol_for(dtype) * 8, rtol_for(dtype)))
      << attr << (packed ? " packed " : " plain ") << dtype_name(dtype);
}

TEST_F(OnednnTest, ConvolutionOnPackedWeights) {
  check_conv({2, 8, 9, 9, 24, 3, 3, 1, 1, 1, 1}, DType::kFloat32, true, "relu", 10);
  check_conv({1, 3, 15, 15, 16, 7, 7, 1, 2, 3, 1}, DType::kFloat32, true, "none", 11);
  check_conv({1, 16, 8, 8, 20, 1, 1, 1, 1, 0, 1}, DType::kFloat32, true, "hardswish", 12);
  check_conv({1, 8, 10, 10, 16, 3, 3, 1, 1, 2, 2}, DType::kFloat32, true, "sigmoid", 13);
  if (onednn_runs_bf16()) check_conv({1, 8, 9, 9, 16, 3, 3, 1, 2, 1, 1}, DType::kBFloat16, true, "relu", 14);
}

TEST_F(OnednnTest, DepthwiseConvolutionOnAPackedGroupedWeight) {
  check_conv({1, 20, 9, 9, 20, 3, 3, 20, 1, 1, 1}, DType::kFloat32, true, "hardswish", 20);
  check_conv({2, 18, 11, 11, 18, 5, 5, 18, 2, 2, 1}, DType::kFloat32, true, "relu", 21);
}

TEST_F(OnednnTest, ConvolutionOnPlainWeights) {
  check_conv({2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1}, DType::kFloat32, false, "hardsigmoid", 30);
  check_conv({1, 8, 9, 9, 12, 3, 3, 4, 2, 1, 1}, DType::kFloat32, false, "none", 31);
}

TEST_F(OnednnTest, ConvolutionWithBinaryPostOps) {
  const ConvGeom g{2, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1};
  std::mt19937 rng(40);
  auto x = random_values(g.n * g.c * g.h * g.w, rng, DType::kFloat32);
  auto w = random_values(g.o * g.c * g.kh * g.kw, rng, DType::kFloat32);
  auto o = random_values(g.n * g.o * g.oh() * g.ow(), rng, DType::kFloat32);
  PackedWeight pw;
  pack_conv_weight(pw, g, w, DType::kFloat32);
  Handle hx = channels_last_input(g, x, DType::kFloat32);
  const ConvGeom og{g.n, g.o, g.oh(), g.ow(), 0, 0, 0, 1, 1, 0, 1};
  const int64_t pad[2] = {1, 1}, str[2] = {1, 1}, dil[2] = {1, 1};
  const double* none[1] = {nullptr};
  const char* alg = "";
  const char* relu = "relu";
  const auto base = conv_ref(g, x, w, nullptr);

  // Out of place: relu(conv + other) and conv * other.
  for (const char* op : {"add", "mul"}) {
    Handle other = channels_last_input(og, o, DType::kFloat32);
    double one = 1.0;
    Handle out;
    ASSERT_EQ(aoti_torch_cpu_mkldnn__convolution_pointwise_binary(hx.get(), other.get(), pw.handle.get(), nullptr,
                                                                  pad, 2, str, 2, dil, 2, 1, op, &one, &relu, none,
                                                                  1, &alg, out.out()),
              0)
        << get_last_error().to_string();
    std::vector<double> want(base.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const double v = std::string(op) == "add" ? base[i] + o[i] : base[i] * o[i];
      want[i] = v > 0 ? v : 0;
    }
    EXPECT_TRUE(all_close(values(out), want, 1e-4, 1e-4)) << op;
    EXPECT_TRUE(all_close(values(other), o, 0, 0)) << "out of place must leave 'other' alone";
  }

  // In place: other = relu(conv + 0.5 * other), returned as a handle on other.
  Handle other = channels_last_input(og, o, DType::kFloat32);
  double half = 0.5;
  Handle out;
  ASSERT_EQ(aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(other.get(), hx.get(), pw.handle.get(), nullptr,
                                                                 pad, 2, str, 2, dil, 2, 1, "add", &half, &relu, none,
                                                                 1, &alg, out.out()),
            0)
      << get_last_error().to_string();
  EXPECT_EQ(out.impl().data_ptr(), other.impl().data_ptr());
  std::vector<double> want(base.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(base[i] + 0.5 * o[i], 0.0);
  EXPECT_TRUE(all_close(values(other), want, 1e-4, 1e-4));

  // Errors: in-place only adds; out of place takes alpha 1 only; shapes match.
  double one = 1.0, two = 2.0;
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(other.get(), hx.get(),
                                                                               pw.handle.get(), nullptr, pad, 2, str,
                                                                               2, dil, 2, 1, "mul", &one, &relu,
                                                                               none, 1, &alg, out.out()),
                          StatusCode::kInvalidArgument, {"'add' only"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mkldnn__convolution_pointwise_binary(hx.get(), other.get(), pw.handle.get(),
                                                                              nullptr, pad, 2, str, 2, dil, 2, 1,
                                                                              "add", &two, &relu, none, 1, &alg,
                                                                              out.out()),
                          StatusCode::kUnimplemented, {"alpha 2"}));
  Handle small = make_tensor({g.n, g.o, 3, 3}, DType::kFloat32);
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mkldnn__convolution_pointwise_binary(hx.get(), small.get(), pw.handle.get(),
                                                                              nullptr, pad, 2, str, 2, dil, 2, 1,
                                                                              "add", &one, &relu, none, 1, &alg,
                                                                              out.out()),
                          StatusCode::kInvalidArgument, {"'other' has shape"}));
}

TEST_F(OnednnTest, ConvolutionRefusesBadArguments) {
  const ConvGeom g{1, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1};
  std::mt19937 rng(50);
  PackedWeight pw;
  pack_conv_weight(pw, g, random_values(g.o * g.c * 9, rng, DType::kFloat32), DType::kFloat32);
  Handle hx = channels_last_input(g, random_values(g.c * g.h * g.w, rng, DType::kFloat32), DType::kFloat32);
  const int64_t pad[2] = {1, 1}, str[2] = {1, 1}, dil[2] = {1, 1}, zero[2] = {0, 0};
  const double* none[1] = {nullptr};
  const char* alg = "";
  Handle out;
  auto call = [&](AtenTensorHandle x, const char* attr, const int64_t* s, int64_t groups) {
    return aoti_torch_cpu_mkldnn__convolution_pointwise(x, pw.handle.get(), nullptr, pad, 2, s, 2, dil, 2, groups,
                                                        attr, none, 1, &alg, out.out());
  };
  EXPECT_TRUE(failed_with(call(hx.get(), "mish", str, 1), StatusCode::kInvalidArgument, {"'mish'"}));
  EXPECT_TRUE(failed_with(call(hx.get(), "relu", zero, 1), StatusCode::kInvalidArgument, {"stride 0"}));
  EXPECT_TRUE(failed_with(call(hx.get(), "relu", str, 2), StatusCode::kInvalidArgument, {"groups=2"}));
  Handle wrong_c = make_tensor({1, 4, 9, 9}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(wrong_c.get(), "relu", str, 1), StatusCode::kInvalidArgument, {"4 channels"}));
  Handle flat = make_tensor({8, 9}, DType::kFloat32);
  EXPECT_TRUE(failed_with(call(flat.get(), "relu", str, 1), StatusCode::kInvalidArgument, {"3-D, 4-D or 5-D"}));
  Handle halfs = make_tensor({1, 8, 9, 9}, DType::kFloat64);
  EXPECT_TRUE(failed_with(call(halfs.get(), "relu", str, 1), StatusCode::kUnimplemented, {"float64"}));
  EXPECT_TRUE(failed_with(aoti_torch_cpu_mkldnn__convolution_pointwise(hx.get(), pw.handle.get(), nullptr, pad, 3,
                                                                       str, 2, dil, 2, 1, "relu", none, 1, &alg,
                                                                       out.out()),
                          StatusCode::kInvalidArgument, {"'padding' has 3 values"}));
}

TEST_F(OnednnTest, ThePrimitiveCacheIsBounded) {
  auto ctx = onednn_context();
  ASSERT_TRUE(ctx.ok());
  const size_t old = (*ctx)->capacity();
  (*ctx)->set_capacity_for_testing(2);
  std::mt19937 rng(60);
  for (int64_t m = 1; m <= 4; ++m) {
    Handle hx = tensor_from({m, 8}, random_values(m * 8, rng, DType::kFloat32), DType::kFloat32);
    Handle hw = tensor_from({4, 8}, random_values(32, rng, DType::kFloat32), DType::kFloat32);
    const char* alg = "";
    Handle out;
    ASSERT_EQ(aoti_torch_cpu__linear_pointwise(hx.get(), hw.get(), nullptr, "none", nullptr, 0, &alg, out.out()), 0);
    EXPECT_LE((*ctx)->cached_primitives(), 2u);
  }
  EXPECT_EQ((*ctx)->cached_primitives(), 2u);
  (*ctx)->set_capacity_for_testing(old);
}

// aten::convolution (aoti_torch_cpu_convolution) of float32 and bfloat16
// runs on oneDNN too, as in PyTorch: each new problem adds a primitive to the
// cache. Its values are checked against a reference in cpu_convolution_test.
TEST_F(OnednnTest, PlainConvolutionsRunOnOnednn) {
  auto ctx = onednn_context();
  ASSERT_TRUE(ctx.ok());
  std::mt19937 rng(61);
  const int64_t stride[] = {1, 1}, padding[] = {1, 1}, dilation[] = {1, 1}, output_padding[] = {0, 0};
  for (DType dtype : onednn_dtypes()) {
    for (int64_t groups : {int64_t{1}, int64_t{4}}) {
      Handle x = tensor_from({2, 4, 9, 7}, random_values(2 * 4 * 63, rng, dtype), dtype);
      Handle w = tensor_from({8, 4 / groups, 3, 3}, random_values(8 * (4 / groups) * 9, rng, dtype), dtype);
      const size_t before = (*ctx)->cached_primitives();
      Handle out;
      ASSERT_EQ(aoti_torch_cpu_convolution(x.get(), w.get(), nullptr, stride, 2, padding, 2, dilation, 2, 0,
                                           output_padding, 2, groups, out.out()),
                0)
          << get_last_error().to_string();
      // The convolution, and the reorders of its activations into and out of
      // the layout its kernel picked.
      EXPECT_GT((*ctx)->cached_primitives(), before) << dtype_name(dtype) << " groups " << groups;
      int64_t* sizes = nullptr;
      ASSERT_EQ(aoti_torch_get_sizes(out.get(), &sizes), 0);
      EXPECT_EQ(std::vector<int64_t>(sizes, sizes + 4), (std::vector<int64_t>{2, 8, 9, 7}));
    }
  }
}

// A plain weight is reordered for oneDNN's kernel once and kept with its
// storage only when the storage is immutable (a model parameter); any other
// weight is read afresh on every call, so changing it changes the result.
TEST_F(OnednnTest, PlainWeightsAreKeptReorderedOnlyWhenImmutable) {
  std::mt19937 rng(62);
  const ConvGeom g{1, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1};
  auto x = random_values(g.n * g.c * g.h * g.w, rng, DType::kFloat32);
  auto w1 = random_values(g.o * g.c * g.kh * g.kw, rng, DType::kFloat32);
  auto w2 = random_values(g.o * g.c * g.kh * g.kw, rng, DType::kFloat32);
  Handle hx = tensor_from({g.n, g.c, g.h, g.w}, x, DType::kFloat32);
  const int64_t stride[] = {1, 1}, padding[] = {1, 1}, dilation[] = {1, 1}, output_padding[] = {0, 0};
  auto conv = [&](const Handle& w) {
    Handle out;
    EXPECT_EQ(aoti_torch_cpu_convolution(hx.get(), w.get(), nullptr, stride, 2, padding, 2, dilation, 2, 0,
                                         output_padding, 2, 1, out.out()),
              0)
        << get_last_error().to_string();
    return values(out);
  };
  auto overwrite = [&](const Handle& h, const std::vector<double>& v) {
    char* base = static_cast<char*>(h.impl().data_ptr());
    for (size_t i = 0; i < v.size(); ++i) store_from_double(base + i * 4, DType::kFloat32, v[i]);
  };
  const double tol = atol_for(DType::kFloat32) * 8;
  // Mutable: a changed weight gives the changed result, and nothing is kept.
  Handle mutable_w = tensor_from({g.o, g.c, g.kh, g.kw}, w1, DType::kFloat32);
  EXPECT_TRUE(all_close(conv(mutable_w), conv_ref(g, x, w1, nullptr), tol, 1e-4));
  overwrite(mutable_w, w2);
  EXPECT_TRUE(all_close(conv(mutable_w), conv_ref(g, x, w2, nullptr), tol, 1e-4));
  EXPECT_EQ(mutable_w.impl().storage()->derived_forms(), nullptr);
  // Immutable: reordered once, kept, and used by later calls.
  Handle frozen_w = tensor_from({g.o, g.c, g.kh, g.kw}, w1, DType::kFloat32);
  frozen_w.impl().storage()->mark_immutable();
  EXPECT_TRUE(all_close(conv(frozen_w), conv_ref(g, x, w1, nullptr), tol, 1e-4));
  const DerivedForms* forms = frozen_w.impl().storage()->derived_forms();
  ASSERT_NE(forms, nullptr);
  EXPECT_EQ(forms->size(), 1u);
  EXPECT_TRUE(all_close(conv(frozen_w), conv_ref(g, x, w1, nullptr), tol, 1e-4));
  EXPECT_EQ(forms->size(), 1u);
}

#else  // !AOTIRT_WITH_ONEDNN

TEST(OnednnTest, BuiltWithoutOnednn) {
  GTEST_SKIP() << "this build has no oneDNN headers: the mkldnn shims are absent and frozen packages are refused";
}

#endif

}  // namespace
}  // namespace cpu_ops_test
}  // namespace aotirt
