// aotirt's bfloat16 GEMMs (cuda_gemm_bf16.h): the choice of kernel shape (no
// GPU needed); every built tensor-core kernel and the few-row kernel (both B
// layouts, with and without 16-byte loads) against a float64 reference of
// the same bfloat16 inputs, at a tolerance of the output's rounding; refused
// problems; and the shims taking them for GPT-2's layers (Conv1D weights,
// the tied output layer of 50257 columns): the decode step's with no
// cuBLASLt, larger ones on the Hopper kernels where the GPU runs them,
// else as AOTIRT_CUDA_GEMM says. Skipped without a GPU; the
// tensor-core tests also when the build has no CUTLASS kernels, the Hopper
// kernels' cases on other GPUs (printed).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <aotirt/model.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_gemm_bf16_fixture.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

std::string bf16_mode() {
  switch (cuda_options().gemm) {
    case CudaLibraryChoice::kVendor: return "cublaslt";
    case CudaLibraryChoice::kAotirt: return "aotirt";
    case CudaLibraryChoice::kAuto: break;
  }
  return "auto";
}

CudaBf16Config shape(int tm, int tn, int align, bool b_row, bool split = false) {
  CudaBf16Config c;
  c.tile_m = tm;
  c.tile_n = tn;
  c.threads = 128;
  c.smem_bytes = 32768;
  c.out_align = align;
  c.b_row_major = b_row;
  c.split_k = split;
  return c;
}
// The build's table: big, small, big and small unaligned, big split; B
// column-major, then row-major.
const CudaBf16Config kShapes[] = {shape(128, 128, 8, false), shape(64, 64, 8, false),   shape(128, 128, 1, false),
                                  shape(64, 64, 1, false),   shape(128, 128, 8, false, true),
                                  shape(128, 128, 8, true),  shape(64, 64, 8, true),    shape(128, 128, 1, true),
                                  shape(64, 64, 1, true),    shape(128, 128, 8, true, true)};
constexpr int kCount = 10;

CudaBf16Problem dims(int m, int n, int k, bool b_row) {
  CudaBf16Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.b_row_major = b_row;
  return p;
}

CudaBf16Choice choose(int m, int n, int k, bool b_row, int align = 8, int sms = 132, int count = kCount) {
  return cuda_bf16_choose(dims(m, n, k, b_row), align, sms, kShapes, count);
}

// The table with the Hopper kernels after it, as cuda_gemm_bf16_sm90.cu
// lists them: 64x128 with B column-major, then row-major (indices 10 and
// 11), row-major 64x64 (12) and 64x192 (13), column-major 64x64 (14) and
// 64x192 (15).
std::vector<CudaBf16Config> with_sm90() {
  std::vector<CudaBf16Config> t(kShapes, kShapes + kCount);
  const struct {
    int n;
    bool row;
  } hopper[] = {{128, false}, {128, true}, {64, true}, {192, true}, {64, false}, {192, false}};
  for (const auto& h : hopper) {
    CudaBf16Config c = shape(64, h.n, 8, h.row);
    c.threads = 384;
    c.sm90 = true;
    t.push_back(c);
  }
  return t;
}

TEST(CudaBf16Choice, HopperKernelsTakeWhatTheyCan) {
  const std::vector<CudaBf16Config> t = with_sm90();
  auto pick = [&](CudaBf16Problem p, int align = 8) {
    return cuda_bf16_choose(p, align, 132, t.data(), static_cast<int>(t.size()));
  };
  auto with_bias = [](CudaBf16Problem p) {
    static int bias = 0;
    p.c = &bias;
    p.ldc = 0;
    p.beta = 1.f;
    return p;
  };
  // GPT-2's 512-token products, with Conv1D (B row-major) or Linear
  // (column-major) weights, where the Hopper kernels timed fastest
  // (CudaBf16Test.Timing in aotirt_cuda_bench): qkv and fc on 64x192 tiles
  // (96 and 128 of them:
  // one a block); the attention and MLP projections (768 columns) on
  // 64x64 ones (96, where 64x128 tiles give 48), the MLP projection's k
  // 3072 unsplit.
  for (bool row : {true, false}) {
    for (int n : {2304, 3072}) {
      EXPECT_EQ(pick(with_bias(dims(512, n, 768, row))).config, row ? 13 : 15) << n;
    }
    EXPECT_EQ(pick(with_bias(dims(512, 768, 768, row))).config, row ? 12 : 14);
    const CudaBf16Choice proj = pick(with_bias(dims(512, 768, 3072, row)));
    EXPECT_EQ(proj.config, row ? 12 : 14);
    EXPECT_EQ(proj.split, 1);
  }
  // The output layer as inductor pads it (50264 columns, the tied
  // embedding read column-major): 262 tiles of 64x192 a row of 64, against
  // 393 of 64x128.
  EXPECT_EQ(pick(dims(512, 50264, 768, false)).config, 15);
  // Llama-3.2-1B's prefill products as export_llm stacks them (Linear
  // weights, no bias), 1920 and 128 rows, where CudaBf16Test.Timing put
  // them: q/k/v and gate/up of 1920 rows on 64x192 Hopper tiles, its
  // attention and down projections (240 tiles of 128x128, k 2048 and 8192)
  // on Ampere's 128x128 ones; the 128-row products on 64x64 Hopper tiles,
  // gate/up on 64x128 (within 2% of 64x64).
  EXPECT_EQ(pick(dims(1920, 3072, 2048, false)).config, 15);
  EXPECT_EQ(pick(dims(1920, 2048, 2048, false)).config, 0);
  EXPECT_EQ(pick(dims(1920, 16384, 2048, false)).config, 15);
  EXPECT_EQ(pick(dims(1920, 2048, 8192, false)).config, 0);
  EXPECT_EQ(pick(dims(128, 3072, 2048, false)).config, 14);
  EXPECT_EQ(pick(dims(128, 2048, 2048, false)).config, 14);
  EXPECT_EQ(pick(dims(128, 16384, 2048, false)).config, 10);
  EXPECT_EQ(pick(dims(128, 2048, 8192, false)).config, 14);
  // Without it, the MLP projection goes to Ampere's k slices and the
  // attention projection to its 64x64 tiles.
  const CudaBf16Choice ampere = choose(512, 768, 3072, true);
  EXPECT_EQ(ampere.config, 9);
  EXPECT_EQ(choose(512, 768, 768, true).config, 6);
  // What they do not take goes to the Ampere kernels: an unaligned output,
  // n not a multiple of 8, a full C, a bias scaled by beta.
  EXPECT_EQ(pick(dims(512, 50257, 768, false), 1).config, 2);
  EXPECT_LT(pick(dims(512, 50257, 768, false)).config, kCount);
  int c_data = 0;
  CudaBf16Problem full = dims(512, 2304, 768, true);
  full.c = &c_data;
  full.ldc = 2304;
  full.beta = 1.f;
  EXPECT_LT(pick(full).config, kCount);
  CudaBf16Problem scaled = with_bias(dims(512, 2304, 768, true));
  scaled.beta = 0.5f;
  EXPECT_LT(pick(scaled).config, kCount);
  // With the Hopper entries emptied (how cuda_matmul.cpp leaves them out):
  // the Ampere choice as before.
  std::vector<CudaBf16Config> off = t;
  for (size_t i = kCount; i < off.size(); ++i) off[i].tile_m = off[i].tile_n = 0;
  EXPECT_EQ(cuda_bf16_choose(dims(512, 2304, 768, true), 8, 132, off.data(), static_cast<int>(off.size())).config, 5);
}

TEST(CudaBf16Choice, ShapesFollowTheProblem) {
  // GPT-2 prefill's projections (few tiles), its output layer (an odd row
  // stride: an unaligned shape), and large products.
  EXPECT_EQ(choose(512, 768, 768, true).config, 6);
  const CudaBf16Choice long_k = choose(512, 768, 3072, true);  // 24 big tiles, k 3072: 4 slices
  EXPECT_EQ(long_k.config, 9);
  EXPECT_EQ(long_k.split, 4);
  EXPECT_EQ(choose(512, 50257, 768, false, 1).config, 2);
  EXPECT_EQ(choose(4096, 4096, 1024, false).config, 0);
  EXPECT_EQ(choose(4096, 4096, 1024, true).config, 5);
  // One output tile and a long k: k slices.
  const CudaBf16Choice split = choose(128, 128, 8192, false);
  EXPECT_EQ(split.config, 4);
  EXPECT_GE(split.split, 2);
  EXPECT_EQ(choose(128, 128, 8192, false, 8, 132, 4).split, 1);  // no split shape built
}

TEST(CudaBf16Choice, ProblemsNoKernelTakesAreRefused) {
  EXPECT_EQ(choose(64, 64, 100, false).config, -1);  // k % 8
  EXPECT_EQ(choose(64, 60, 96, false, 1).config, 3);
  EXPECT_EQ(choose(64, 60, 96, true).config, -1);  // row-major B, n % 8
  EXPECT_EQ(choose(0, 64, 96, false).config, -1);
  EXPECT_EQ(choose(64, 64, 96, false, 8, 0).config, -1);
  EXPECT_EQ(choose(64, 64, 96, false, 8, 132, 0).config, -1);
}

// One product's operands on the device and its float64 reference.
struct Bf16Case {
  int m, n, k;
  bool b_row;
  int c_kind;  // 0: no C, 1: a bias row, 2: a full C
  float alpha, beta;
  int64_t pad;  // extra elements per row of every operand
  int64_t pad_d = -1;  // of D alone, where not -1
};

struct Bf16Data {
  TensorImpl a, b, c, d;
  std::vector<double> ref;
  CudaBf16Problem p;
};

Bf16Data make(const Bf16Case& t, uint32_t seed) {
  std::mt19937 rng(seed);
  Bf16Data x;
  const int64_t lda = t.k + t.pad, ldd = t.n + (t.pad_d >= 0 ? t.pad_d : t.pad);
  const int64_t ldb = (t.b_row ? t.n : t.k) + t.pad, bcols = t.b_row ? t.k : t.n;
  TensorImpl ha = host_random(DimVector{t.m, lda}, DType::kBFloat16, rng());
  TensorImpl hb = host_random(DimVector{bcols, ldb}, DType::kBFloat16, rng());
  TensorImpl hc = host_random(DimVector{t.c_kind == 2 ? t.m : 1, ldd}, DType::kBFloat16, rng());
  x.a = to_device(ha);
  x.b = to_device(hb);
  x.c = to_device(hc);
  x.d = device_empty(DimVector{t.m, ldd}, DType::kBFloat16);
  const std::vector<double> a = values(ha), b = values(hb), c = values(hc);
  x.ref.assign(static_cast<size_t>(t.m) * t.n, 0.0);
  for (int i = 0; i < t.m; ++i)
    for (int j = 0; j < t.n; ++j) {
      double s = 0;
      for (int kk = 0; kk < t.k; ++kk) s += a[i * lda + kk] * (t.b_row ? b[kk * ldb + j] : b[j * ldb + kk]);
      s *= t.alpha;
      if (t.c_kind == 1) s += t.beta * c[j];
      if (t.c_kind == 2) s += t.beta * c[i * ldd + j];
      x.ref[static_cast<size_t>(i) * t.n + j] = s;
    }
  CudaBf16Problem& p = x.p;
  p.m = t.m;
  p.n = t.n;
  p.k = t.k;
  p.a = x.a.data_ptr();
  p.lda = lda;
  p.b = x.b.data_ptr();
  p.ldb = ldb;
  p.b_row_major = t.b_row;
  p.d = x.d.data_ptr();
  p.ldd = ldd;
  p.alpha = t.alpha;
  if (t.c_kind != 0) {
    p.c = x.c.data_ptr();
    p.ldc = t.c_kind == 1 ? 0 : ldd;
    p.beta = t.beta;
  }
  return x;
}

// Worst error over D in units of the tolerance: one bfloat16 rounding of the
// result (2^-9 relative, here 2^-8) plus float32 sums' drift over k.
double worst_error(const Bf16Data& x, const Bf16Case& t) {
  const std::vector<double> d = values(x.d);
  const int64_t ldd = t.n + (t.pad_d >= 0 ? t.pad_d : t.pad);
  const double atol = 1e-3 * std::sqrt(static_cast<double>(t.k)), rtol = 1.0 / 256;
  double worst = 0;
  for (int i = 0; i < t.m; ++i)
    for (int j = 0; j < t.n; ++j) {
      const double r = x.ref[static_cast<size_t>(i) * t.n + j];
      const double e = std::fabs(d[i * ldd + j] - r) / (atol + rtol * std::fabs(r));
      worst = std::max(worst, std::isfinite(e) ? e : 1e30);
    }
  return worst;
}

TEST_F(CudaBf16Test, EveryKernelMatchesFloat64) {
  if (cuda_bf16_config_count() == 0) GTEST_SKIP() << "this build has no bfloat16 tensor-core kernels (no CUTLASS)";
  const Bf16Case cases[] = {
      {130, 72, 200, false, 1, 1.f, 1.f, 0},   // edges in m and k, bias
      {130, 72, 200, true, 2, 0.5f, -1.f, 8},  // full C, padded rows
      {257, 200, 64, false, 0, 1.f, 0.f, 0},
      {64, 96, 1024, true, 1, 1.f, 1.f, 0},    // long k
      {300, 201, 136, false, 0, 0.5f, 0.f, 0, 7},  // odd n in 16-byte rows of D, alpha
      {300, 208, 136, false, 0, 0.5f, 0.f, 0, 8},  // the same, n a multiple of 8
      {256, 256, 4096, true, 1, 1.f, 1.f, 0},  // few tiles, a long k (the split configs' slices)
  };
  constexpr size_t kWorkspace = 16 << 20;
  float* ws = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ws), kWorkspace), cudaSuccess);
  uint32_t seed = 1;
  for (int idx = 0; idx < cuda_bf16_config_count(); ++idx) {
    const CudaBf16Config cfg = cuda_bf16_config(idx);
    int blocks = 0;
    if (cuda_bf16_blocks_per_sm(idx, &blocks) != cudaSuccess || blocks < 1) {
      cudaGetLastError();
      std::printf("[ SKIPPED  ] config %d (%dx%d%s): no image for this GPU\n", idx, cfg.tile_m, cfg.tile_n,
                  cfg.sm90 ? ", sm_90a" : "");
      continue;
    }
    for (const Bf16Case& t : cases)
      for (int split : cfg.split_k ? std::vector<int>{2, 3, 5} : std::vector<int>{1}) {
        SCOPED_TRACE("config " + std::to_string(idx) + " (" + std::to_string(cfg.tile_m) + "x" +
                     std::to_string(cfg.tile_n) + ", align " + std::to_string(cfg.out_align) + ", split " +
                     std::to_string(split) + ") " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" +
                     std::to_string(t.k) + (t.b_row ? " B row-major" : " B column-major"));
        Bf16Data x = make(t, seed++);
        // The layout, more slices than k steps, or what the Hopper kernels
        // do not take (a full C, a bias row scaled by beta, n % 8).
        const bool refused = cfg.b_row_major != t.b_row || t.k / 32 < split ||
                             (cfg.sm90 && (t.c_kind == 2 || (t.c_kind == 1 && t.beta != 1.f) || t.n % 8 != 0));
        size_t bytes = 0;
        const cudaError_t sized = cuda_bf16_workspace_bytes(idx, x.p, split, &bytes);
        if (!refused) {
          ASSERT_EQ(sized, cudaSuccess);
          ASSERT_LE(bytes, kWorkspace);
        }
        ASSERT_EQ(cudaMemset(x.d.data_ptr(), 0xff, x.d.nbytes()), cudaSuccess);  // NaNs
        // The workspace full of garbage: a launch clears what it needs.
        ASSERT_EQ(cudaMemset(ws, 0x5a, kWorkspace), cudaSuccess);
        const cudaError_t err = cuda_bf16_launch(idx, x.p, split, ws, nullptr);
        if (refused) {
          EXPECT_EQ(err, cudaErrorInvalidValue);
          continue;
        }
        ASSERT_EQ(err, cudaSuccess);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_LE(worst_error(x, t), 1.0);
      }
  }
  cudaFree(ws);
}

TEST_F(CudaBf16Test, FewRowKernelMatchesFloat64) {
  const Bf16Case cases[] = {
      {1, 2304, 768, true, 1, 1.f, 1.f, 0},    // GPT-2's qkv projection, 16-byte loads
      {8, 768, 3072, true, 2, 2.f, 0.5f, 0},   // eight rows, full C
      {3, 37, 100, true, 0, 1.f, 0.f, 3},      // odd n and strides: element loads
      {1, 1001, 768, false, 0, 1.f, 0.f, 0},   // a tied output layer's layout
      {5, 40, 77, false, 1, 1.f, 1.f, 1},      // odd k: element loads
      // Llama-3.2-1B's decode GEMMs (B column-major), each warp split of k:
      {1, 512, 2048, false, 0, 1.f, 0.f, 0},   // k and v projections: 4 warps a column
      {1, 2048, 2048, false, 0, 1.f, 0.f, 0},  // q and o projections: a warp a column
      {1, 8192, 2048, false, 0, 1.f, 0.f, 0},  // MLP gate and up: a warp a column
      {1, 2048, 8192, false, 1, 1.f, 1.f, 0},  // MLP down, one row, with C: a warp a column, four passes
      {2, 2048, 8192, false, 1, 1.f, 1.f, 0},  // MLP down, two rows, with C: 4 warps a column, a pass each
      {1, 300, 2056, false, 0, 1.f, 0.f, 0},   // one row, k past the last whole pass
      {4, 300, 2056, false, 0, 1.f, 0.f, 0},   // k not a multiple of the slices' 256
      {8, 96, 4096, false, 2, 0.5f, 2.f, 0},   // eight rows split 8 ways, full C
  };
  uint32_t seed = 50;
  for (const Bf16Case& t : cases) {
    SCOPED_TRACE(std::to_string(t.m) + "x" + std::to_string(t.n) + "x" + std::to_string(t.k) +
                 (t.b_row ? " B row-major" : " B column-major"));
    Bf16Data x = make(t, seed++);
    ASSERT_EQ(cuda_bf16_gemv_rows_launch(x.p, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_LE(worst_error(x, t), 1.0);
    // Every fixed number of warps a column (the timing bench's choices).
    if (!t.b_row)
      for (int warps : {1, 2, 4, 8}) {
        SCOPED_TRACE(std::to_string(warps) + " warps a column");
        ASSERT_EQ(cuda_bf16_gemv_rows_launch(x.p, nullptr, false, warps), cudaSuccess);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_LE(worst_error(x, t), 1.0);
      }
  }
}

// Few-row products chained on one stream with programmatic dependent launch,
// each reading the one before's output as its A: each must wait for it
// (the outputs start as NaN bytes, so a read ahead of the write shows), on
// the stream and recorded in a CUDA graph. Plain launches elsewhere than
// Hopper and later.
TEST_F(CudaBf16Test, DependentLaunchesWaitForTheKernelAhead) {
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  const bool dependent = major >= 9;
  constexpr int kN = 2048, kChain = 6;
  std::vector<TensorImpl> w, act;
  act.push_back(to_device(host_random(DimVector{1, kN}, DType::kBFloat16, 70)));
  for (int i = 0; i < kChain; ++i) {
    // Weights scaled so that the products stay near 1 along the chain.
    w.push_back(to_device(host_random(DimVector{kN, kN}, DType::kBFloat16, 71 + i, -0.04, 0.04)));
    act.push_back(device_empty(DimVector{1, kN}, DType::kBFloat16));
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto queue = [&] {
    for (int i = 0; i < kChain; ++i) {
      CudaBf16Problem q;
      q.m = 1;
      q.n = kN;
      q.k = kN;
      q.a = act[i].data_ptr();
      q.lda = kN;
      q.b = w[i].data_ptr();
      q.ldb = kN;
      q.d = act[i + 1].data_ptr();
      q.ldd = kN;
      ASSERT_EQ(cuda_bf16_gemv_rows_launch(q, stream, dependent), cudaSuccess);
    }
  };
  auto check = [&](const char* how) {
    SCOPED_TRACE(how);
    for (int i = 0; i < kChain; ++i) {
      // Each link against float64 from the link's own (device) input.
      const std::vector<double> a = values(to_host(act[i])), b = values(to_host(w[i])),
                                got = values(to_host(act[i + 1]));
      for (int j = 0; j < kN; ++j) {
        double want = 0;
        for (int k = 0; k < kN; ++k) want += a[k] * b[size_t(j) * kN + k];
        ASSERT_NEAR(got[j], want, 1e-2 + 8e-3 * std::abs(want)) << "link " << i << ", column " << j;
      }
    }
  };
  for (int i = 1; i <= kChain; ++i) ASSERT_EQ(cudaMemsetAsync(act[i].data_ptr(), 0xff, act[i].nbytes(), stream), cudaSuccess);
  queue();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  check("on the stream");
  for (int i = 1; i <= kChain; ++i) ASSERT_EQ(cudaMemsetAsync(act[i].data_ptr(), 0xff, act[i].nbytes(), stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  queue();
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  check("replayed from a graph");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(CudaBf16Test, BadProblemsAreRefused) {
  Bf16Data x = make({16, 16, 16, false, 0, 1.f, 0.f, 0}, 9);
  CudaBf16Problem p = x.p;
  p.m = kCudaBf16GemvMaxRows + 1;
  EXPECT_EQ(cuda_bf16_gemv_rows_launch(p, nullptr), cudaErrorInvalidValue);
  p = x.p;
  p.beta = 1.f;  // beta without C
  EXPECT_EQ(cuda_bf16_gemv_rows_launch(p, nullptr), cudaErrorInvalidValue);
  // Warps a column: a power of two up to 8, or 0 for the kernel's choice.
  for (int warps : {-1, 3, 16}) EXPECT_EQ(cuda_bf16_gemv_rows_launch(x.p, nullptr, false, warps), cudaErrorInvalidValue);
  if (cuda_bf16_config_count() == 0) return;
  p = x.p;
  p.k = 12;  // not a multiple of 8
  EXPECT_EQ(cuda_bf16_launch(0, p, 1, nullptr, nullptr), cudaErrorInvalidValue);
  p = x.p;
  p.a = static_cast<const char*>(x.p.a) + 2;  // not 16-byte aligned
  EXPECT_EQ(cuda_bf16_launch(0, p, 1, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_bf16_launch(-1, x.p, 1, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_bf16_launch(cuda_bf16_config_count(), x.p, 1, nullptr, nullptr), cudaErrorInvalidValue);
  for (int i = 0; i < cuda_bf16_config_count(); ++i) {
    const CudaBf16Config c = cuda_bf16_config(i);
    if (c.b_row_major) continue;
    // A split config without slices or a workspace, a whole one with slices.
    EXPECT_EQ(cuda_bf16_launch(i, x.p, c.split_k ? 1 : 2, nullptr, nullptr), cudaErrorInvalidValue) << i;
    if (c.split_k) {
      EXPECT_EQ(cuda_bf16_launch(i, x.p, 2, nullptr, nullptr), cudaErrorInvalidValue) << i;
      // A workspace off 16 bytes (the reduction reads it in float4s); not
      // dereferenced: the launch refuses it first.
      float* misaligned = reinterpret_cast<float*>(static_cast<uintptr_t>(0x10004));
      EXPECT_EQ(cuda_bf16_launch(i, x.p, 2, misaligned, nullptr), cudaErrorInvalidValue) << i;
    }
  }
}

// GPT-2's layers as the generated code calls them: addmm(bias, x, W) with
// Conv1D's W [in, out], and mm(x, wte^T) for the tied output layer, at one
// token (the decode step) and at more.
TEST_F(CudaBf16Test, Gpt2LayersTakeAotirtsKernels) {
  if (bf16_mode() == "cublaslt") GTEST_SKIP() << "AOTIRT_CUDA_GEMM=cublaslt keeps bfloat16 GEMMs on cuBLASLt";
  // Products of more than eight rows take aotirt's tensor-core kernels where
  // the Hopper ones run (they or the Ampere ones, as the chooser models
  // them) or with AOTIRT_CUDA_GEMM=aotirt; else cuBLASLt takes them, as it
  // does those of kCudaBf16VendorRows rows or more by default.
  const bool own_large = bf16_mode() == "aotirt" && cuda_bf16_config_count() > 0;
  bool hopper = false;
  const bool sm90_on = cuda_options().enabled(CudaFeature::kBf16Sm90);
  for (int i = 0; i < cuda_bf16_config_count() && sm90_on; ++i) {
    int blocks = 0;
    if (cuda_bf16_config(i).sm90 && cuda_bf16_blocks_per_sm(i, &blocks) == cudaSuccess && blocks > 0) hopper = true;
    cudaGetLastError();
  }
  if (!hopper) std::printf("[ SKIPPED  ] no Hopper bfloat16 kernels on this GPU or in this build: not checked here\n");
  const bool have_cublaslt = cublaslt_unavailable_reason().empty();
  struct Case {
    int64_t tokens, in, out;
    bool tied;
  };
  const Case cases[] = {{1, 768, 2304, false},   {1, 3072, 768, false},  {1, 768, 50257, true},
                        {130, 768, 3072, false}, {9, 768, 50257, true},  {200, 3072, 768, false},
                        {40, 768, 1024, true},   {kCudaBf16VendorRows, 256, 512, false}};
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.tokens) + "x" + std::to_string(c.in) + "->" + std::to_string(c.out));
    const bool few = c.tokens <= kCudaBf16GemvMaxRows;
    // A long prompt's products go to cuBLASLt by default where it opens.
    const bool vendor = bf16_mode() == "auto" && c.tokens >= kCudaBf16VendorRows && have_cublaslt;
    const bool own = !few && !vendor && (hopper || own_large);
    if (!few && !own && !have_cublaslt) {
      std::printf("[ SKIPPED  ] %lld rows on cuBLASLt: %s\n", static_cast<long long>(c.tokens),
                  cublaslt_unavailable_reason().c_str());
      continue;
    }
    TensorImpl hx = host_random(DimVector{c.tokens, c.in}, DType::kBFloat16, rng());
    TensorImpl hw = c.tied ? host_random(DimVector{c.out, c.in}, DType::kBFloat16, rng())
                           : host_random(DimVector{c.in, c.out}, DType::kBFloat16, rng());
    TensorImpl hb = host_random(DimVector{c.out}, DType::kBFloat16, rng());
    TensorImpl dx = to_device(hx), dw = to_device(hw), db = to_device(hb);
    TensorImpl dwv = c.tied ? transposed(dw, 0, 1) : dw;
    TensorImpl dout = device_empty(DimVector{c.tokens, c.out}, DType::kBFloat16);
    set_shim_profiling(true);
    shim_profile(true);
    if (c.tied)
      ASSERT_EQ(aoti_torch_cuda_mm_out(handle(dout), handle(dx), handle(dwv)), 0) << last_error_text();
    else
      ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(db), handle(dx), handle(dwv), 1.0, 1.0), 0)
          << last_error_text();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto prof = shim_profile(true);
    set_shim_profiling(false);
    EXPECT_EQ(profiled_calls(prof, "few-row bfloat16"), few ? 1.0 : 0.0);
    EXPECT_EQ(profiled_calls(prof, "bfloat16 tensor-core"), own ? 1.0 : 0.0);
    EXPECT_EQ(profiled_calls(prof, "cublasLtMatmul"), !few && !own ? 1.0 : 0.0);
    const std::vector<double> x = values(hx), w = values(hw), bias = values(hb), out = values(dout);
    double worst = 0;
    for (int64_t i = 0; i < c.tokens; ++i)
      for (int64_t j = 0; j < c.out; ++j) {
        double s = c.tied ? 0.0 : bias[j];
        for (int64_t kk = 0; kk < c.in; ++kk) s += x[i * c.in + kk] * (c.tied ? w[j * c.in + kk] : w[kk * c.out + j]);
        const double e =
            std::fabs(out[i * c.out + j] - s) / (1e-3 * std::sqrt(double(c.in)) + std::fabs(s) / 256);
        worst = std::max(worst, std::isfinite(e) ? e : 1e30);
      }
    EXPECT_LE(worst, 1.0);
  }
}

}  // namespace
}  // namespace aotirt
