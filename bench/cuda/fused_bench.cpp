// Timing of the fused decode-step kernel (cuda_fused_decode.cu) on
// Llama-3.2-1B's one-row products (CudaFusedTest.Timing): each product
// plain (the few-row kernel, as an unfused decode step runs it) and with
// its fused norm, residual add or SiLU-multiply, recorded in a CUDA graph and
// replayed over weight copies past L2's reach. The fused form replaces a
// generated norm, residual or SiLU-multiply kernel as well, which this
// does not time: the decode step's tokens/s tell that. Prints "[ timing ]"
// lines; fails only on a launch error. Correctness: tests/ops
// (test_fused_decode_ops.py).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "cuda_test_util.h"
#include "graph_timing.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaFusedTest : public CudaTest {};

TEST_F(CudaFusedTest, Timing) {
  struct Shape {
    int n, k;
    CudaFusedPrologue pro;
    bool residual, silu_mul;
    const char* what;
  };
  const Shape shapes[] = {
      {3072, 2048, CudaFusedPrologue::kRmsNorm, false, false, "q/k/v with the norm"},
      {2048, 2048, CudaFusedPrologue::kNone, true, false, "o with the residual"},
      {16384, 2048, CudaFusedPrologue::kRmsNorm, false, true, "gate/up with the norm and SiLU-multiply"},
      {2048, 8192, CudaFusedPrologue::kNone, true, false, "down with the residual"}};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  const bool dep = major >= 9;
  std::mt19937 rng(5);
  for (const Shape& s : shapes) {
    const size_t bytes = size_t(s.n) * s.k * 2;
    const size_t copies = std::max<size_t>(4, (size_t(256) << 20) / bytes);
    TensorImpl x = to_device(host_random(DimVector{1, s.k}, DType::kBFloat16, rng()));
    TensorImpl norm = to_device(host_random(DimVector{s.k}, DType::kBFloat16, rng()));
    TensorImpl res = to_device(host_random(DimVector{1, s.n}, DType::kBFloat16, rng()));
    TensorImpl out = device_empty(DimVector{1, s.n}, DType::kBFloat16);
    std::vector<TensorImpl> w;
    for (size_t c = 0; c < copies; ++c) w.push_back(to_device(host_random(DimVector{s.n, s.k}, DType::kBFloat16, rng())));
    const int iters = int(copies);
    auto plain = [&](size_t c) {
      CudaBf16Problem q;
      q.m = 1, q.n = s.n, q.k = s.k, q.a = x.data_ptr(), q.lda = s.k, q.b = w[c % copies].data_ptr(), q.ldb = s.k;
      q.d = out.data_ptr(), q.ldd = s.n;
      return cuda_bf16_gemv_rows_launch(q, stream, dep);
    };
    auto fused = [&](size_t c, CudaFusedRowKernel kernel) {
      CudaFusedRow p;
      p.silu_mul = s.silu_mul;
      p.n = s.n, p.k = s.k, p.x = x.data_ptr(), p.norm = norm.data_ptr(), p.eps = 1e-5f;
      p.w = w[c % copies].data_ptr(), p.ldw = s.k, p.residual = s.residual ? res.data_ptr() : nullptr;
      p.out = out.data_ptr();
      return cuda_fused_row_launch(p, s.pro, stream, dep, kernel);
    };
    const bool warp_form = !s.silu_mul && (s.pro != CudaFusedPrologue::kRmsNorm || s.k <= kCudaFusedNormMaxK);
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(plain(r), cudaSuccess);
      if (warp_form) {
        ASSERT_EQ(fused(r, CudaFusedRowKernel::kWarp), cudaSuccess);
      }
      ASSERT_EQ(fused(r, CudaFusedRowKernel::kShared), cudaSuccess);
    }
    const double plain_us = cuda_bench::graph_replay_us(
        stream, [&] { for (int it = 0; it < iters; ++it) plain(it); }, iters);
    const double warp_us = warp_form ? cuda_bench::graph_replay_us(
        stream, [&] { for (int it = 0; it < iters; ++it) fused(it, CudaFusedRowKernel::kWarp); }, iters) : 0.0;
    const double shared_us = cuda_bench::graph_replay_us(
        stream, [&] { for (int it = 0; it < iters; ++it) fused(it, CudaFusedRowKernel::kShared); }, iters);
    char warp_text[32] = "n/a";
    if (warp_form) std::snprintf(warp_text, sizeof warp_text, "%.2f us", warp_us);
    std::printf("[ timing ] llama %s (1x%dx%d): plain %.2f us, fused a warp %s, fused shared %.2f us\n", s.what,
                s.n, s.k, plain_us, warp_text, shared_us);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace aotirt
