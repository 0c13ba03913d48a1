// Timing of the fused decode-step kernel (cuda_fused_decode.cu) on
// Llama-3.2-1B's one-row products (CudaFusedTest.Timing): each product
// plain (the few-row kernel, as an unfused decode step runs it) and with
// its fused norm, residual add or SiLU-multiply, recorded in a CUDA graph and
// replayed over weight copies past L2's reach. The fused form replaces a
// generated norm, residual or SiLU-multiply kernel as well, which this
// does not time: the decode step's tokens/s tell that. Prints "[ timing ]"
// lines; fails only on a launch error. Correctness: tests/ops
// (test_fused_decode_ops.py).
//
// CudaFusedTest.LayerChainTiming chains Llama-3.2-1B's decode layers as the
// fused export runs them (q/k/v with the norm, the decode attention on a
// 2048-key cache and its merge, o with the residual, gate/up with the norm
// and SiLU-multiply, down with the residual; 16 layers of their own
// weights, dependent launches on Hopper), with the q/k/v kernel asking L2
// for the o weights and part of the gate/up weights, which the memory can
// fetch while the attention runs: per layer, by the bytes asked and how.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/ops/attention/cuda_attention_kernel.h"
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


TEST_F(CudaFusedTest, LayerChainTiming) {
  constexpr int kLayers = 16, kHidden = 2048, kQkv = 3072, kInter = 8192, kHq = 32, kHkv = 8, kD = 64, kS = 2048;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int dev = 0, major = 0, sms = 1, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  const bool dep = major >= 9;
  struct Layer {
    void *qkv, *o, *gate_up, *down, *k, *v;
  };
  // Weights of tiny values (every byte 0x20), so that 16 residual adds stay
  // finite; the caches random.
  std::vector<Layer> layers(kLayers);
  std::vector<void*> owned;
  auto alloc = [&](size_t bytes, int fill) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
    if (p) cudaMemset(p, fill, bytes);
    owned.push_back(p);
    return p;
  };
  for (Layer& l : layers) {
    l.qkv = alloc(size_t(kQkv) * kHidden * 2, 0x20);
    l.o = alloc(size_t(kHidden) * kHidden * 2, 0x20);
    l.gate_up = alloc(size_t(2) * kInter * kHidden * 2, 0x20);
    l.down = alloc(size_t(kHidden) * kInter * 2, 0x20);
    l.k = alloc(size_t(kHkv) * kS * kD * 2, 0x21);
    l.v = alloc(size_t(kHkv) * kS * kD * 2, 0x22);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  TensorImpl norm = to_device(host_random(DimVector{kHidden}, DType::kBFloat16, 7, 0.5, 1.5));
  TensorImpl h0 = to_device(host_random(DimVector{1, kHidden}, DType::kBFloat16, 8));
  TensorImpl h1 = device_empty(DimVector{1, kHidden}, DType::kBFloat16);
  TensorImpl h2 = device_empty(DimVector{1, kHidden}, DType::kBFloat16);
  TensorImpl qkv = device_empty(DimVector{1, kQkv}, DType::kBFloat16);
  TensorImpl attn = device_empty(DimVector{1, kHidden}, DType::kBFloat16);
  TensorImpl act = device_empty(DimVector{1, kInter}, DType::kBFloat16);
  TensorImpl ws = device_empty(DimVector{64 * kHq * (kD + 1)}, DType::kFloat32);
  TensorImpl mh = host_empty(DimVector{1, 1, 1, kS}, DType::kBFloat16);
  uint16_t* mb = static_cast<uint16_t*>(mh.data_ptr());
  for (int j = 0; j < kS; ++j) mb[j] = j < 192 ? 0x0000 : 0xff80;  // 192 keys seen
  TensorImpl mask = to_device(mh);

  auto attention = [&](const Layer& l, int splits) {
    CudaAttentionParams p;
    p.dtype = 15;
    p.q = qkv.data_ptr(), p.k = l.k, p.v = l.v, p.out = attn.data_ptr();
    p.batch = 1, p.heads_q = kHq, p.heads_kv = kHkv, p.len_q = 1, p.len_kv = kS, p.head_dim = kD, p.head_dim_v = kD;
    const int64_t qs[4] = {kHq * kD, kD, kD, 1}, ks[4] = {int64_t{kHkv} * kS * kD, int64_t{kS} * kD, kD, 1};
    std::memcpy(p.q_strides, qs, sizeof qs);
    std::memcpy(p.out_strides, qs, sizeof qs);
    std::memcpy(p.k_strides, ks, sizeof ks);
    std::memcpy(p.v_strides, ks, sizeof ks);
    p.scale = 0.125f;
    p.mask = mask.data_ptr(), p.mask_kind = kCudaMaskAdditive, p.mask_dtype = 15;
    const int64_t mst[4] = {0, 0, 0, 1};
    std::memcpy(p.mask_strides, mst, sizeof mst);
    p.dependent_launch = dep;
    p.num_splits = splits;
    p.workspace = splits > 1 ? static_cast<float*>(ws.data_ptr()) : nullptr;
    return p;
  };
  const int splits = cuda_attention_key_splits(attention(layers[0], 1), sms);

  // One layer; the q/k/v kernel asks L2 for the o weights and the first
  // |gate_up_bytes| of the gate/up weights (the first rows of each half,
  // which the gate/up kernel's first blocks read).
  auto layer = [&](const Layer& l, int64_t gate_up_bytes, CudaL2Prefetch mode, bool o_too) {
    const bool shared = true;
    CudaFusedRow a;
    a.n = kQkv, a.k = kHidden, a.x = h0.data_ptr(), a.norm = norm.data_ptr(), a.eps = 1e-5f, a.w = l.qkv;
    a.ldw = kHidden, a.out = qkv.data_ptr();
    a.prefetch_mode = mode;
    int r = 0;
    if (o_too) {
      a.prefetch[r] = l.o;
      a.prefetch_bytes[r++] = int64_t{kHidden} * kHidden * 2;
    }
    if (gate_up_bytes > 0) {
      a.prefetch[r] = l.gate_up;
      a.prefetch_bytes[r++] = gate_up_bytes / 2;
      a.prefetch[r] = static_cast<const char*>(l.gate_up) + int64_t{kInter} * kHidden * 2;
      a.prefetch_bytes[r++] = gate_up_bytes / 2;
    }
    EXPECT_EQ(cuda_fused_row_launch(a, CudaFusedPrologue::kRmsNorm, stream, dep,
                                    shared ? CudaFusedRowKernel::kShared : CudaFusedRowKernel::kWarp),
              cudaSuccess);
    EXPECT_EQ(cuda_launch_attention(attention(l, splits), 0, stream), cudaSuccess);
    CudaFusedRow o;
    o.n = kHidden, o.k = kHidden, o.x = attn.data_ptr(), o.w = l.o, o.ldw = kHidden, o.residual = h0.data_ptr();
    o.out = h1.data_ptr();
    EXPECT_EQ(cuda_fused_row_launch(o, CudaFusedPrologue::kNone, stream, dep, CudaFusedRowKernel::kWarp), cudaSuccess);
    CudaFusedRow g;
    g.n = 2 * kInter, g.k = kHidden, g.silu_mul = true, g.x = h1.data_ptr(), g.norm = norm.data_ptr(), g.eps = 1e-5f;
    g.w = l.gate_up, g.ldw = kHidden, g.out = act.data_ptr();
    EXPECT_EQ(cuda_fused_row_launch(g, CudaFusedPrologue::kRmsNorm, stream, dep, CudaFusedRowKernel::kShared),
              cudaSuccess);
    CudaFusedRow d;
    d.n = kHidden, d.k = kInter, d.x = act.data_ptr(), d.w = l.down, d.ldw = kInter, d.residual = h1.data_ptr();
    d.out = h0.data_ptr();
    EXPECT_EQ(cuda_fused_row_launch(d, CudaFusedPrologue::kNone, stream, dep, CudaFusedRowKernel::kWarp), cudaSuccess);
  };
  struct Variant {
    int64_t gate_up_mb;
    bool o_too;
    CudaL2Prefetch mode;
    const char* how;
  };
  const Variant variants[] = {{0, false, CudaL2Prefetch::kLines, "none"},
                              {0, true, CudaL2Prefetch::kLines, "lines"},
                              {8, true, CudaL2Prefetch::kLines, "lines"},
                              {16, true, CudaL2Prefetch::kLines, "lines"},
                              {24, true, CudaL2Prefetch::kLines, "lines"},
                              {32, true, CudaL2Prefetch::kLines, "lines"},
                              {16, true, CudaL2Prefetch::kLinesEvictLast, "lines, evict_last"},
                              {24, true, CudaL2Prefetch::kLinesEvictLast, "lines, evict_last"},
                              {0, true, CudaL2Prefetch::kBulk, "bulk"},
                              {16, true, CudaL2Prefetch::kBulk, "bulk"},
                              {24, true, CudaL2Prefetch::kBulk, "bulk"},
                              {32, true, CudaL2Prefetch::kBulk, "bulk"},
                              {0, false, CudaL2Prefetch::kLines, "none"}};
  std::printf("[ timing ] llama layer chain: L2 %d MB, %d SMs, %d key splits\n", l2 >> 20, sms, splits);
  for (int round = 0; round < 2; ++round) {
    for (const Variant& v : variants) {
      const int reps = 4;
      auto queue = [&] {
        for (int rep = 0; rep < reps; ++rep)
          for (const Layer& l : layers) layer(l, v.gate_up_mb << 20, v.mode, v.o_too);
      };
      queue();  // warm up (not recorded)
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const double us = cuda_bench::graph_replay_us(stream, queue, reps * kLayers);
      std::printf("[ timing ] llama layer chain, round %d, prefetch %s of o + %lld MB of gate/up (%s): %.2f us a layer\n",
                  round, v.o_too || v.gate_up_mb ? "8.4 MB" : "0 MB", static_cast<long long>(v.gate_up_mb), v.how,
                  us);
    }
  }
  for (void* p : owned) cudaFree(p);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace aotirt
