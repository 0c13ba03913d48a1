// The fused decode-step kernel's two forms (cuda_fused_decode.cu: a warp
// makes the norm of the row itself, or the block makes it once in shared
// memory; SiLU-multiply after the product in the shared form alone)
// against a host reference that rounds as transformers' modules do, on
// Llama-sized rows and on rows the forms' bounds leave out.
// The shims' conformance with eager torch is tests/ops
// (test_fused_decode_ops.py).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"
#include "core/dtype.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaFusedTest : public CudaTest {};

float round_bf16(float v) { return bf16_to_float(float_to_bf16(v)); }

// out[j] as the fused op computes it, in double for the sums.
std::vector<double> reference(CudaFusedPrologue pro, bool silu_mul, const std::vector<double>& x,
                              const std::vector<double>& g, const std::vector<double>& w,
                              const std::vector<double>* res, int n, int k) {
  std::vector<float> a(k);
  float inv = 1.f;
  if (pro == CudaFusedPrologue::kRmsNorm) {
    double ss = 0;
    for (int i = 0; i < k; ++i) ss += x[i] * x[i];
    inv = 1.0f / std::sqrt(static_cast<float>(ss / k) + 1e-5f);
  }
  for (int i = 0; i < k; ++i) {
    const float v = static_cast<float>(x[i]);
    a[i] = pro == CudaFusedPrologue::kRmsNorm ? round_bf16(static_cast<float>(g[i]) * round_bf16(v * inv)) : v;
  }
  std::vector<double> sums(n);
  for (int j = 0; j < n; ++j) {
    double acc = 0;
    for (int i = 0; i < k; ++i) acc += double(a[i]) * w[size_t(j) * k + i];
    sums[j] = acc;
  }
  if (!silu_mul) {
    for (int j = 0; j < n; ++j)
      if (res) sums[j] = (*res)[j] + round_bf16(static_cast<float>(sums[j]));
    return sums;
  }
  std::vector<double> out(n / 2);
  for (int j = 0; j < n / 2; ++j) {
    const float gate = round_bf16(static_cast<float>(sums[j])), up = round_bf16(static_cast<float>(sums[n / 2 + j]));
    out[j] = round_bf16(gate / (1.f + std::exp(-gate))) * up;
  }
  return out;
}

TEST_F(CudaFusedTest, BothFormsMatchTheReference) {
  struct Case {
    int n, k;
    CudaFusedPrologue pro;
    bool residual, silu_mul;
  };
  const Case cases[] = {{3072, 2048, CudaFusedPrologue::kRmsNorm, false, false},  // q/k/v
                        {2048, 2048, CudaFusedPrologue::kNone, true, false},       // o
                        {300, 2048, CudaFusedPrologue::kRmsNorm, false, false},    // a partial last block
                        {2048, 8192, CudaFusedPrologue::kNone, true, false},       // down: four passes
                        {40, 4096, CudaFusedPrologue::kRmsNorm, true, false},      // the shared form alone
                        {16384, 2048, CudaFusedPrologue::kRmsNorm, false, true},   // gate/up, SiLU-multiply
                        {34, 24, CudaFusedPrologue::kRmsNorm, false, true},        // 17 pairs: a partial block
                        {18, 24, CudaFusedPrologue::kNone, false, true}};          // without the norm
  for (const Case& c : cases) {
    TensorImpl x = host_random(DimVector{c.k}, DType::kBFloat16, 1, -3.0, 3.0);
    TensorImpl g = host_random(DimVector{c.k}, DType::kBFloat16, 2);
    TensorImpl w = host_random(DimVector{c.n, c.k}, DType::kBFloat16, 3, -0.0625, 0.0625);
    TensorImpl res = host_random(DimVector{c.n}, DType::kBFloat16, 4);
    const std::vector<double> xv = values(x), gv = values(g), wv = values(w), rv = values(res);
    const std::vector<double> want =
        reference(c.pro, c.silu_mul, xv, gv, wv, c.residual ? &rv : nullptr, c.n, c.k);
    const int outs = c.silu_mul ? c.n / 2 : c.n;
    TensorImpl dx = to_device(x), dg = to_device(g), dw = to_device(w), dr = to_device(res);
    for (CudaFusedRowKernel form : {CudaFusedRowKernel::kWarp, CudaFusedRowKernel::kShared}) {
      TensorImpl out = device_empty(DimVector{outs}, DType::kBFloat16);
      CudaFusedRow p;
      p.silu_mul = c.silu_mul;
      p.n = c.n, p.k = c.k, p.x = dx.data_ptr(), p.norm = dg.data_ptr(), p.eps = 1e-5f;
      p.w = dw.data_ptr(), p.ldw = c.k, p.residual = c.residual ? dr.data_ptr() : nullptr, p.out = out.data_ptr();
      const char* name = form == CudaFusedRowKernel::kWarp ? "a warp" : "shared";
      if (!cuda_fused_row_supported(p, c.pro, form)) {
        EXPECT_EQ(cuda_fused_row_launch(p, c.pro, nullptr, false, form), cudaErrorInvalidValue) << name;
        continue;
      }
      for (bool dep : {false, true}) {
        ASSERT_EQ(cuda_fused_row_launch(p, c.pro, nullptr, dep, form), cudaSuccess) << name;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<double> got = values(to_host(out));
        double worst = 0;
        for (int j = 0; j < outs; ++j)
          worst = std::max(worst, std::abs(got[j] - want[j]) / (1e-2 + 1e-2 * std::abs(want[j])));
        EXPECT_LE(worst, 1.0) << name << " n " << c.n << " k " << c.k << " prologue " << int(c.pro)
                              << (c.silu_mul ? " SiLU-multiply" : "");
      }
    }
  }
}

TEST_F(CudaFusedTest, RowsTheKernelsCannotTakeAreRefused) {
  TensorImpl x = device_empty(DimVector{64}, DType::kBFloat16), w = device_empty(DimVector{8, 64}, DType::kBFloat16);
  TensorImpl out = device_empty(DimVector{8}, DType::kBFloat16);
  CudaFusedRow p;
  p.n = 8, p.k = 64, p.x = x.data_ptr(), p.norm = x.data_ptr(), p.w = w.data_ptr(), p.ldw = 64, p.out = out.data_ptr();
  EXPECT_TRUE(cuda_fused_row_supported(p, CudaFusedPrologue::kRmsNorm));
  CudaFusedRow odd = p;
  odd.k = 60;  // not a multiple of 8
  EXPECT_FALSE(cuda_fused_row_supported(odd, CudaFusedPrologue::kNone));
  CudaFusedRow skew = p;
  skew.x = static_cast<const char*>(p.x) + 2;  // not 16-byte aligned
  EXPECT_FALSE(cuda_fused_row_supported(skew, CudaFusedPrologue::kNone, CudaFusedRowKernel::kShared));
  CudaFusedRow longrow = p;
  longrow.k = kCudaFusedSharedMaxK + 8;
  EXPECT_FALSE(cuda_fused_row_supported(longrow, CudaFusedPrologue::kNone, CudaFusedRowKernel::kShared));
  // SiLU-multiply: the shared form alone, gate and up rows in pairs, no
  // residual; the SiLU-multiply prologue is the general path's alone.
  CudaFusedRow glu = p;
  glu.silu_mul = true;
  EXPECT_TRUE(cuda_fused_row_supported(glu, CudaFusedPrologue::kRmsNorm, CudaFusedRowKernel::kShared));
  EXPECT_FALSE(cuda_fused_row_supported(glu, CudaFusedPrologue::kRmsNorm, CudaFusedRowKernel::kWarp));
  CudaFusedRow odd_rows = glu;
  odd_rows.n = 7;
  EXPECT_FALSE(cuda_fused_row_supported(odd_rows, CudaFusedPrologue::kRmsNorm, CudaFusedRowKernel::kShared));
  CudaFusedRow glu_res = glu;
  glu_res.residual = x.data_ptr();
  EXPECT_FALSE(cuda_fused_row_supported(glu_res, CudaFusedPrologue::kRmsNorm, CudaFusedRowKernel::kShared));
  EXPECT_FALSE(cuda_fused_row_supported(p, CudaFusedPrologue::kSiluMul, CudaFusedRowKernel::kShared));
  EXPECT_EQ(cuda_fused_row_launch(odd, CudaFusedPrologue::kNone, nullptr, false), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace aotirt
