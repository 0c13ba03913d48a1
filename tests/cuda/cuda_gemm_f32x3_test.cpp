// aotirt's float32 GEMMs (cuda_gemm_f32x3.h): the choice of kernel shape
// and k split (no GPU needed); every built 3xTF32 kernel (single and
// batched, both B layouts) at several splits and the few-row kernel against
// a float64 reference at float32 tolerances; the truncation the fresh sums
// exist for; and the shims taking them for the linear layers and attention
// products of ViT, BERT, ResNet and the MLP, and for patch embeddings. Skipped without a GPU; the
// 3xTF32 tests also when the build has no CUTLASS kernels.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <aotirt/model.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_gemm_f32x3_fixture.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

bool own_gemms_off() { return cuda_options().gemm == CudaLibraryChoice::kVendor; }

// Shapes like the build's, for the chooser tests to run on any build.
CudaF32x3Config shape(int tm, int tn, int threads, int align, bool b_row, bool batched) {
  CudaF32x3Config c;
  c.tile_m = tm;
  c.tile_n = tn;
  c.threads = threads;
  c.smem_bytes = 32768;
  c.out_align = align;
  c.b_row_major = b_row;
  c.batched = batched;
  return c;
}
const CudaF32x3Config kShapes[] = {shape(64, 64, 128, 4, false, false), shape(32, 64, 64, 4, false, false),
                                   shape(32, 64, 64, 1, false, false),  shape(64, 64, 128, 4, true, false),
                                   shape(64, 64, 128, 4, false, true),  shape(64, 64, 128, 4, true, true)};
const int kBlocks[] = {3, 6, 6, 3, 3, 3};
constexpr int kCount = 6;

CudaF32x3Choice choose(const CudaF32x3Problem& p, int align = 4, const int* blocks = kBlocks, int count = kCount) {
  return cuda_f32x3_choose(p, align, 132, kShapes, blocks, count);
}

TEST(CudaF32x3Choice, FillsTheMultiprocessorsWithSlicesOfK) {
  // ViT-B/16's second MLP GEMM: 197 x 768 x 3072. Whole-k tiles give at most
  // 48 blocks of 64x64 for 132 SMs, so k is split.
  CudaF32x3Choice c = choose(dims(197, 768, 3072));
  ASSERT_GE(c.config, 0);
  EXPECT_FALSE(kShapes[c.config].batched);
  EXPECT_GT(c.split, 1);
  const int64_t slice = (3072 / c.split + 15) / 16 * 16;
  EXPECT_GE(slice, 128);
  // A grid of many waves gains little from slices.
  c = choose(dims(4096, 4096, 4096));
  ASSERT_GE(c.config, 0);
  EXPECT_LE(c.split, 2);
  // A short k is never cut below 128 per slice.
  c = choose(dims(64, 64, 128));
  ASSERT_GE(c.config, 0);
  EXPECT_EQ(c.split, 1);
  // Unaligned C or D: only the shape that reads and writes single floats.
  c = choose(dims(8, 10, 128), 1);
  EXPECT_EQ(c.config, 2);
}

TEST(CudaF32x3Choice, LayoutAndBatchPickTheirKernels) {
  // BERT's attention products: 12 heads of [128, 64] @ [64, 128] (k-contiguous
  // B) and [128, 128] @ [128, 64] (row-major B), whole k.
  CudaF32x3Choice c = choose(dims(128, 128, 64, 12));
  ASSERT_EQ(c.config, 4);
  EXPECT_EQ(c.split, 1);
  c = choose(dims(128, 64, 128, 12, true));
  ASSERT_EQ(c.config, 5);
  EXPECT_EQ(c.split, 1);
  c = choose(dims(197, 768, 768, 1, true));
  EXPECT_EQ(c.config, 3);
  // A row-major B is read four floats at a time along n.
  EXPECT_EQ(choose(dims(128, 66, 128, 12, true)).config, -1);
}

TEST(CudaF32x3Choice, RefusesWhatNoKernelTakes) {
  EXPECT_EQ(choose(dims(197, 768, 770)).config, -1);  // k % 16
  EXPECT_EQ(choose(dims(0, 768, 768)).config, -1);
  EXPECT_EQ(choose(dims(197, 768, 768, 0)).config, -1);
  EXPECT_EQ(cuda_f32x3_choose(dims(197, 768, 768), 4, 0, kShapes, kBlocks, kCount).config, -1);
  const int none[] = {0, 0, 0, 0, 0, 0};  // no block fits anywhere
  EXPECT_EQ(choose(dims(197, 768, 768), 4, none).config, -1);
  EXPECT_EQ(choose(dims(197, 768, 768), 4, kBlocks, 0).config, -1);
  // Unaligned output and only aligned shapes.
  EXPECT_EQ(choose(dims(8, 10, 128), 1, kBlocks, 2).config, -1);
}

// A float32 model's library (it names no other floating dtype) does not
// load cuBLASLt ahead of its first run when the 3xTF32 kernels take its GEMMs,
// nor does a bfloat16 one (its few-row GEMMs run on aotirt's kernel, larger
// ones open cuBLASLt when they come); float16 and float64 GEMMs always need
// it.
TEST(CudaF32x3Choice, Float32LibrariesSkipTheCublasLtPrewarm) {
  const std::vector<std::string> f32 = {"aoti_torch_cuda_addmm_out", "aoti_torch_dtype_float32",
                                        "aoti_torch_empty_strided"};
  std::vector<std::string> bf16 = f32;
  bf16.push_back("aoti_torch_dtype_bfloat16");
  const bool f32x3_on = cuda_f32x3_config_count() > 0 && !cuda_matmul_allow_tf32() && !own_gemms_off();
  EXPECT_EQ(cuda_matmul_prewarm_useful(f32), !f32x3_on);
  // bfloat16 packages skip it too where the bfloat16 kernels take their GEMMs.
  const bool bf16_on = cuda_options().gemm != CudaLibraryChoice::kVendor;
  EXPECT_EQ(cuda_matmul_prewarm_useful(bf16), !(f32x3_on && bf16_on));
  std::vector<std::string> f16 = f32, f64 = f32;
  f16.push_back("aoti_torch_dtype_float16");
  f64.push_back("aoti_torch_dtype_float64");
  EXPECT_TRUE(cuda_matmul_prewarm_useful(f16));
  EXPECT_TRUE(cuda_matmul_prewarm_useful(f64));
}

// Host data for one problem and its float64 reference.
struct Problem {
  int m, n, k, batch;
  bool b_row;                  // B row-major [k, ldb], else column-major [n, ldb]
  std::vector<float> a, b, c;  // a: batch x [m, lda]; c: one row (bias) or batch x [m, n]
  int64_t lda, ldb;
  bool bias_row;
  float alpha, beta;
  std::vector<double> ref;  // batch x [m, n]
  int64_t a_batch() const { return static_cast<int64_t>(m) * lda; }
  int64_t b_batch() const { return static_cast<int64_t>(b_row ? k : n) * ldb; }
};

Problem make_problem(int m, int n, int k, bool bias_row, float alpha, float beta, uint32_t seed, double lo = -1,
                     double hi = 1, int batch = 1, bool b_row = false) {
  // Padded rows: strides differ from the extents.
  Problem p{m, n, k, batch, b_row, {}, {}, {}, k + 4, (b_row ? n : k) + 8, bias_row, alpha, beta, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(static_cast<float>(lo), static_cast<float>(hi));
  p.a.resize(static_cast<size_t>(batch) * p.a_batch());
  p.b.resize(static_cast<size_t>(batch) * p.b_batch());
  for (auto& x : p.a) x = u(rng);
  for (auto& x : p.b) x = u(rng);
  p.c.resize(bias_row ? n : static_cast<size_t>(batch) * m * n);
  for (auto& x : p.c) x = u(rng);
  p.ref.assign(static_cast<size_t>(batch) * m * n, 0.0);
  for (int bi = 0; bi < batch; ++bi)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) {
          const float av = p.a[bi * p.a_batch() + i * p.lda + kk];
          const float bv = b_row ? p.b[bi * p.b_batch() + kk * p.ldb + j] : p.b[bi * p.b_batch() + j * p.ldb + kk];
          acc += static_cast<double>(av) * static_cast<double>(bv);
        }
        const size_t o = (static_cast<size_t>(bi) * m + i) * n + j;
        const double c = bias_row ? p.c[j] : p.c[o];
        p.ref[o] = alpha * acc + (beta != 0 ? beta * c : 0.0);
      }
  return p;
}

constexpr int kGemv = -1;  // run_case's index for the few-row kernel

// Runs |p| with config |index| (kGemv: the few-row kernel) and |split|;
// returns the largest |d - ref| / (atol + rtol |ref|), atol and rtol at
// float32's scale, or -1 when the kernel refuses the problem.
double run_case(const Problem& p, int index, int split) {
  float* da = upload(p.a);
  float* db = upload(p.b);
  float* dc = upload(p.c);
  std::vector<float> poison(static_cast<size_t>(p.batch) * p.m * p.n, std::nanf(""));
  float* dd = upload(poison);
  int* sem = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&sem), 1 << 20), cudaSuccess);
  EXPECT_EQ(cudaMemset(sem, 0, 1 << 20), cudaSuccess);
  CudaF32x3Problem q;
  q.m = p.m;
  q.n = p.n;
  q.k = p.k;
  q.batch = p.batch;
  q.a = da;
  q.lda = p.lda;
  q.stride_a = p.a_batch();
  q.b = db;
  q.ldb = p.ldb;
  q.stride_b = p.b_batch();
  q.b_row_major = p.b_row;
  q.alpha = p.alpha;
  q.beta = p.beta;
  if (p.beta != 0) {
    q.c = dc;
    q.ldc = p.bias_row ? 0 : p.n;
    q.stride_c = p.bias_row ? 0 : static_cast<int64_t>(p.m) * p.n;
  }
  q.d = dd;
  q.ldd = p.n;
  q.stride_d = static_cast<int64_t>(p.m) * p.n;
  double worst = 0;
  // Twice: the second run checks that the first left the semaphores zero.
  for (int run = 0; run < 2 && worst >= 0; ++run) {
    EXPECT_EQ(cudaMemcpy(dd, poison.data(), poison.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    const cudaError_t err =
        index == kGemv ? cuda_gemv_rows_launch(q, nullptr) : cuda_f32x3_launch(index, q, split, sem, nullptr);
    if (err == cudaErrorInvalidValue) {
      worst = -1;  // refused
      break;
    }
    EXPECT_EQ(err, cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> out(poison.size());
    EXPECT_EQ(cudaMemcpy(out.data(), dd, out.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    const double atol = 2e-6 * std::sqrt(static_cast<double>(p.k)), rtol = 4e-6;
    for (size_t i = 0; i < out.size(); ++i) {
      const double e = std::fabs(out[i] - p.ref[i]) / (atol + rtol * std::fabs(p.ref[i]));
      worst = std::max(worst, std::isfinite(e) ? e : 1e30);
    }
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dd);
  cudaFree(sem);
  return worst;
}

// Whether config |i| is meant to take |p| (else it must refuse it).
bool takes(const CudaF32x3Config& c, const Problem& p, int split) {
  if (c.b_row_major != p.b_row || c.batched != (p.batch > 1)) return false;
  if (c.batched && split != 1) return false;
  if (c.out_align == 4 && p.n % 4 != 0) return false;
  if (p.b_row && p.n % 4 != 0) return false;
  return true;
}

TEST_F(CudaF32x3Test, EveryShapeAndSplitMatchesFloat64) {
  struct Case {
    int m, n, k;
    bool bias_row;
    float alpha, beta;
    int batch;
    bool b_row;
  };
  // Odd edges (m, n not multiples of any tile), a bias row, a full C with
  // beta, alpha, no C at all, batches, and row-major B.
  const Case cases[] = {{197, 232, 768, true, 1.f, 1.f, 1, false}, {33, 70, 256, false, 0.5f, -2.f, 1, false},
                        {128, 64, 512, false, 1.f, 0.f, 1, false},  {5, 9, 16, true, 2.f, 1.f, 1, false},
                        {70, 132, 256, true, 1.f, 1.f, 1, true},    {40, 64, 128, false, 1.f, 0.f, 3, false},
                        {40, 64, 128, false, 1.f, 0.5f, 3, true}};
  uint32_t seed = 5;
  int ran = 0;
  for (const Case& c : cases) {
    const Problem p = make_problem(c.m, c.n, c.k, c.bias_row, c.alpha, c.beta, seed++, -1, 1, c.batch, c.b_row);
    for (int i = 0; i < cuda_f32x3_config_count(); ++i)
      for (int split : {1, 2, 3}) {
        if (split > 1 && (c.k / 16) < split) continue;
        SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                     " batch " + std::to_string(c.batch) + (c.b_row ? " B row-major" : "") + " config " +
                     std::to_string(i) + " split " + std::to_string(split));
        const double e = run_case(p, i, split);
        if (!takes(cuda_f32x3_config(i), p, split)) {
          EXPECT_EQ(e, -1.0);
        } else {
          EXPECT_GE(e, 0.0);
          EXPECT_LE(e, 1.0);
          ++ran;
        }
      }
  }
  EXPECT_GT(ran, 20);
}

// All-positive operands over a long k: sums that only grow, where mma.sync's
// truncating adds would leave a single accumulator short by up to an ulp of
// the running sum at each of its 1152 mma (about 0.02 here, by estimate five
// to ten times the tolerance of 3e-3).
TEST_F(CudaF32x3Test, LongPositiveSumsStayAtFloat32Accuracy) {
  const Problem p = make_problem(64, 64, 3072, true, 1.f, 0.f, 77, 0.0, 1.0);
  for (int i = 0; i < cuda_f32x3_config_count(); ++i) {
    if (!takes(cuda_f32x3_config(i), p, 1)) continue;
    SCOPED_TRACE("config " + std::to_string(i));
    const double e = run_case(p, i, 1);
    EXPECT_GE(e, 0.0);
    EXPECT_LE(e, 1.0);
  }
}

TEST_F(CudaF32x3Test, BadProblemsAreRefused) {
  CudaF32x3Problem q;
  q.m = 8;
  q.n = 8;
  q.k = 24;  // not a multiple of 16
  EXPECT_EQ(cuda_f32x3_launch(0, q, 1, nullptr, nullptr), cudaErrorInvalidValue);
  q.k = 32;
  EXPECT_EQ(cuda_f32x3_launch(cuda_f32x3_config_count(), q, 1, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_f32x3_launch(0, q, 0, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_f32x3_launch(0, q, 2, nullptr, nullptr), cudaErrorInvalidValue);  // split without semaphores
  q.batch = 0;
  EXPECT_EQ(cuda_f32x3_launch(0, q, 1, nullptr, nullptr), cudaErrorInvalidValue);
}

// The few-row kernel (any alignment, any k) over one to eight rows.
TEST(CudaGemvRowsTest, FewRowsMatchFloat64) {
  AOTIRT_REQUIRE_GPU();
  struct Case {
    int m, n, k;
    bool bias_row;
    float beta;
  };
  const Case cases[] = {{1, 1000, 2048, true, 1.f}, {8, 128, 64, true, 1.f}, {8, 10, 128, true, 1.f},
                        {3, 77, 100, false, -1.f}, {5, 33, 2051, false, 0.f}};
  uint32_t seed = 21;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    const Problem p = make_problem(c.m, c.n, c.k, c.bias_row, 1.f, c.beta, seed++);
    const double e = run_case(p, kGemv, 1);
    EXPECT_GE(e, 0.0);
    EXPECT_LE(e, 1.0);
  }
  CudaF32x3Problem q;
  q.m = kCudaGemvMaxRows + 1;
  q.n = q.k = 8;
  EXPECT_EQ(cuda_gemv_rows_launch(q, nullptr), cudaErrorInvalidValue);
  q.m = 2;
  q.b_row_major = true;
  EXPECT_EQ(cuda_gemv_rows_launch(q, nullptr), cudaErrorInvalidValue);
}

// nn.Linear as the generated code calls it: addmm(bias, x, W^T) with x
// [tokens, in] and W^T a transposed view of W [out, in].
TEST_F(CudaF32x3Test, LinearLayersTakeAotirtsKernels) {
  if (own_gemms_off()) GTEST_SKIP() << "AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt";
  struct Case {
    int64_t tokens, in, out;
  };
  // ViT, BERT; ResNet's classifier and the MLP's layers (few rows, the
  // last with rows of 40 bytes); 9 rows of 10 outputs (the unaligned shape).
  const Case cases[] = {{197, 768, 2304}, {197, 3072, 768}, {128, 768, 768}, {1, 2048, 1000},
                        {8, 64, 128},     {8, 128, 10},     {9, 128, 10}};
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.tokens) + "x" + std::to_string(c.in) + "->" + std::to_string(c.out));
    TensorImpl hx = host_random(DimVector{c.tokens, c.in}, DType::kFloat32, rng());
    TensorImpl hw = host_random(DimVector{c.out, c.in}, DType::kFloat32, rng());
    TensorImpl hbias = host_random(DimVector{c.out}, DType::kFloat32, rng());
    TensorImpl dx = to_device(hx), dw = to_device(hw), dbias = to_device(hbias);
    TensorImpl dwt = transposed(dw, 0, 1);
    TensorImpl dout = device_empty(DimVector{c.tokens, c.out}, DType::kFloat32);
    set_shim_profiling(true);
    shim_profile(true);
    ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(dbias), handle(dx), handle(dwt), 1.0, 1.0), 0)
        << last_error_text();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto prof = shim_profile(true);
    set_shim_profiling(false);
    const bool few = c.tokens <= kCudaGemvMaxRows;
    EXPECT_EQ(profiled_calls(prof, "3xTF32 kernel"), few ? 0.0 : 1.0);
    EXPECT_EQ(profiled_calls(prof, "few-row"), few ? 1.0 : 0.0);
    EXPECT_EQ(profiled_calls(prof, "cublasLtMatmul"), 0.0);
    std::vector<double> x = values(hx), w = values(hw), bias = values(hbias), out = values(dout);
    double worst = 0;
    for (int64_t i = 0; i < c.tokens; ++i)
      for (int64_t j = 0; j < c.out; ++j) {
        double s = bias[j];
        for (int64_t kk = 0; kk < c.in; ++kk) s += x[i * c.in + kk] * w[j * c.in + kk];
        const double e = std::fabs(out[i * c.out + j] - s) / (2e-6 * std::sqrt(double(c.in)) + 4e-6 * std::fabs(s));
        worst = std::max(worst, std::isfinite(e) ? e : 1e30);
      }
    EXPECT_LE(worst, 1.0);
  }
}

// Attention written out as products, as BERT's export has it: 12 heads of
// Q K^T (K a transposed view: k-contiguous) and P V (V row-major) through
// bmm, on the batched kernels.
TEST_F(CudaF32x3Test, AttentionProductsTakeTheBatchedKernels) {
  if (own_gemms_off()) GTEST_SKIP() << "AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt";
  const int64_t heads = 12, len = 128, dim = 64;
  std::mt19937 rng(17);
  TensorImpl hq = host_random(DimVector{heads, len, dim}, DType::kFloat32, rng());
  TensorImpl hk = host_random(DimVector{heads, len, dim}, DType::kFloat32, rng());
  TensorImpl hp = host_random(DimVector{heads, len, len}, DType::kFloat32, rng(), 0.0, 1.0);
  TensorImpl hv = host_random(DimVector{heads, len, dim}, DType::kFloat32, rng());
  TensorImpl dq = to_device(hq), dk = to_device(hk), dp = to_device(hp), dv = to_device(hv);
  TensorImpl dkt = transposed(dk, 1, 2);
  TensorImpl scores = device_empty(DimVector{heads, len, len}, DType::kFloat32);
  TensorImpl out = device_empty(DimVector{heads, len, dim}, DType::kFloat32);
  set_shim_profiling(true);
  shim_profile(true);
  ASSERT_EQ(aoti_torch_cuda_bmm_out(handle(scores), handle(dq), handle(dkt)), 0) << last_error_text();
  ASSERT_EQ(aoti_torch_cuda_bmm_out(handle(out), handle(dp), handle(dv)), 0) << last_error_text();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto prof = shim_profile(true);
  set_shim_profiling(false);
  EXPECT_EQ(profiled_calls(prof, "3xTF32 kernel"), 2.0);
  EXPECT_EQ(profiled_calls(prof, "cublasLtMatmul"), 0.0);
  auto check = [](const std::vector<double>& a, const std::vector<double>& b, bool bt, const TensorImpl& got,
                  int64_t m, int64_t n, int64_t k, int64_t batch) {
    const std::vector<double> g = values(got);
    double worst = 0;
    for (int64_t h = 0; h < batch; ++h)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t kk = 0; kk < k; ++kk)
            acc += a[(h * m + i) * k + kk] * (bt ? b[(h * n + j) * k + kk] : b[(h * k + kk) * n + j]);
          const double e = std::fabs(g[(h * m + i) * n + j] - acc) / (2e-6 * std::sqrt(double(k)) + 4e-6 * std::fabs(acc));
          worst = std::max(worst, std::isfinite(e) ? e : 1e30);
        }
    return worst;
  };
  EXPECT_LE(check(values(hq), values(hk), true, scores, len, len, dim, heads), 1.0);
  EXPECT_LE(check(values(hp), values(hv), false, out, len, dim, len, heads), 1.0);
}

// Patch embeddings (a float32 convolution whose stride equals its kernel)
// run as a copy into patches and one GEMM on these kernels, with no cuDNN:
// ViT-B/16's, a batch of two with non-square patches, a strided input and
// edges that leave rows and columns out; against the CPU op in float64.
// Convolutions the GEMM cannot take (k = 75 is not a multiple of 16) or
// that are no patch embedding (1x1, padded) stay on cuDNN.
TEST_F(CudaF32x3Test, PatchConvolutionsTakeAotirtsKernels) {
  if (own_gemms_off()) GTEST_SKIP() << "AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt";
  if (cuda_matmul_allow_tf32()) GTEST_SKIP() << "TF32 is allowed: patch convolutions stay on cuDNN";
  struct Case {
    int64_t n, c, h, w, c_out, kh, kw, pad;
    bool bias, strided, own;
  };
  const Case cases[] = {
      {1, 3, 224, 224, 768, 16, 16, 0, true, false, true},  // ViT-B/16
      {2, 4, 35, 37, 40, 4, 8, 0, false, true, true},       // batched, non-square, leftover edges
      {1, 3, 20, 20, 16, 5, 5, 0, true, false, false},      // k = 75 (over the few-row kernel's 8 outputs)
      {1, 32, 8, 8, 16, 1, 1, 0, false, false, false},      // 1x1
      {1, 16, 16, 16, 16, 4, 4, 1, false, false, false},    // padded
  };
  std::mt19937 rng(23);
  for (const Case& c : cases) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " c=" + std::to_string(c.c) + " " + std::to_string(c.h) + "x" +
                 std::to_string(c.w) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw));
    if (!c.own && !cudnn_unavailable_reason().empty()) {
      std::printf("[ SKIPPED  ] the cuDNN case: %s\n", cudnn_unavailable_reason().c_str());
      continue;
    }
    const DimVector xs{c.n, c.c, c.h, c.w};
    TensorImpl hx = host_random(xs, DType::kFloat32, rng());
    TensorImpl hw = host_random(DimVector{c.c_out, c.c, c.kh, c.kw}, DType::kFloat32, rng(), -0.5, 0.5);
    TensorImpl hb = host_random(DimVector{c.c_out}, DType::kFloat32, rng());
    TensorImpl dx;
    if (c.strided) {
      DimVector st = contiguous_strides(xs);
      for (int64_t d = 0; d < 3; ++d) st[d] *= 2;
      st[3] = 2;
      dx = to_device(hx, st, 1);
    } else {
      dx = to_device(hx);
    }
    TensorImpl dw = to_device(hw), db = to_device(hb);
    OwnedHandle bias_h(db);
    AtenTensorHandle bias_raw = bias_h;
    const int64_t stride[2] = {c.kh, c.kw}, pad[2] = {c.pad, c.pad}, dil[2] = {1, 1}, outpad[2] = {0, 0};
    AtenTensorHandle out_h = nullptr;
    set_shim_profiling(true);
    shim_profile(true);
    ASSERT_EQ(aoti_torch_cuda_convolution(handle(dx), handle(dw), c.bias ? &bias_raw : nullptr, stride, 2, pad, 2,
                                          dil, 2, 0, outpad, 2, 1, &out_h),
              0)
        << last_error_text();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto prof = shim_profile(true);
    set_shim_profiling(false);
    TensorImpl out = take(out_h);
    EXPECT_EQ(profiled_calls(prof, "patches kernel"), c.own ? 1.0 : 0.0);
    EXPECT_EQ(profiled_calls(prof, "3xTF32 kernel"), c.own ? 1.0 : 0.0);
    if (c.own) {
      EXPECT_EQ(profiled_calls(prof, "cuDNN"), 0.0);
    }
    EXPECT_EQ(out.strides(), contiguous_strides(out.sizes()));

    TensorImpl ref = reference_conv2d(hx, hw, c.bias ? &hb : nullptr, stride, pad, dil);
    ASSERT_TRUE(ref.defined());
    ASSERT_EQ(out.sizes(), ref.sizes());
    if (!c.own) continue;  // cuDNN's accuracy is CudaConvolutionTest's
    // The patch kernel refuses a negative patch size.
    const int64_t xst[4] = {1, 1, 1, 1};
    EXPECT_EQ(cuda_launch_patches(dx.data_ptr(), xst, 1, 1, 1, 1, -1, 1, out.data_ptr(), nullptr),
              cudaErrorInvalidValue);
    const std::vector<double> got = values(out), want = values(ref);
    const double k = static_cast<double>(c.c * c.kh * c.kw);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double e = std::fabs(got[i] - want[i]) / (2e-6 * std::sqrt(k) + 4e-6 * std::fabs(want[i]));
      worst = std::max(worst, std::isfinite(e) ? e : 1e30);
    }
    EXPECT_LE(worst, 1.0);
  }
}

// A GEMM whose k is split, recorded into a CUDA graph (its semaphores come
// zeroed from outside the recording) and replayed: every replay gives the
// product, also after other split GEMMs ran outside the graph.
TEST_F(CudaF32x3Test, SplitGemmsReplayFromAGraph) {
  if (own_gemms_off()) GTEST_SKIP() << "AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt";
  const int64_t tokens = 197, in = 3072, outf = 768;  // ViT's second MLP GEMM: k is split
  std::mt19937 rng(11);
  TensorImpl hx = host_random(DimVector{tokens, in}, DType::kFloat32, rng());
  TensorImpl hw = host_random(DimVector{outf, in}, DType::kFloat32, rng());
  TensorImpl hb = host_random(DimVector{outf}, DType::kFloat32, rng());
  TensorImpl dx = to_device(hx), dw = to_device(hw), db = to_device(hb), dwt = transposed(dw, 0, 1);
  TensorImpl dout = device_empty(DimVector{tokens, outf}, DType::kFloat32);
  std::vector<double> x = values(hx), w = values(hw), bias = values(hb), ref(tokens * outf);
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t j = 0; j < outf; ++j) {
      double acc = bias[j];
      for (int64_t kk = 0; kk < in; ++kk) acc += x[i * in + kk] * w[j * in + kk];
      ref[i * outf + j] = acc;
    }
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    std::vector<double> got = values(dout);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double e = std::fabs(got[i] - ref[i]) / (2e-6 * std::sqrt(double(in)) + 4e-6 * std::fabs(ref[i]));
      worst = std::max(worst, std::isfinite(e) ? e : 1e30);
    }
    EXPECT_LE(worst, 1.0);
  };
  Result<Device*> dev = get_device(kCuda0);
  ASSERT_TRUE(dev.ok());
  set_shim_profiling(true);
  shim_profile(true);
  Result<std::unique_ptr<DeviceGraph>> graph = dev.value()->capture([&]() -> Status {
    if (aoti_torch_cuda_addmm_out(handle(dout), handle(db), handle(dx), handle(dwt), 1.0, 1.0) != 0)
      return Status(StatusCode::kInternal, last_error_text());
    return Status();
  });
  const auto prof = shim_profile(true);
  set_shim_profiling(false);
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  EXPECT_EQ(profiled_calls(prof, "3xTF32"), 1.0);
  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_EQ(cudaMemset(dout.data_ptr(), 0xff, dout.nbytes()), cudaSuccess);  // NaNs
    AOTIRT_ASSERT_OK(graph.value()->replay());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    check("replay");
    // The same GEMM outside the graph, on the stream's own semaphores.
    ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(db), handle(dx), handle(dwt), 1.0, 1.0), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    check("outside the graph");
  }
}

}  // namespace
}  // namespace aotirt
