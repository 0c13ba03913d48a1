// Timing of the CUDA SDPA shims: one flash-attention call, shim included,
// for a decode step (CudaAttentionTest.DecodeTiming) and for GPT-2's,
// a long, ViT-B/16's and BERT-base's prefill (CudaAttentionTest.PrefillTiming);
// and the decode kernel alone as a Llama decode step runs it, per key split
// count (CudaAttentionTest.LlamaDecodeSplitTiming).
// Prints "[ timing ]" lines; fails only on a launch error or a call slower
// than a millisecond. Their correctness tests are
// tests/cuda/cuda_attention_test.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backends/cuda/ops/attention/cuda_attention_kernel.h"
#include "cuda_attention_fixture.h"
#include "cuda_test_util.h"
#include "graph_timing.h"

namespace aotirt {
namespace {

using namespace cuda_test;

// Not a pass/fail speed bar (beyond a generous bound): prints what one
// attention call costs, shim included, for |c| in |dt|.
void print_timing(const AttnCase& c, const char* what, DType dt = DType::kBFloat16) {
  Inputs in = make_inputs(c, dt, 9);
  auto run = [&] {
    AtenTensorHandle r[9] = {};
    int64_t ri[2];
    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_flash_attention(handle(in.dq), handle(in.dk), handle(in.dv), 0.0,
                                                                  c.causal, 0, nullptr, &r[0], &r[1], &r[2], &r[3],
                                                                  &ri[0], &ri[1], &r[6], &r[7], &r[8]),
              0);
    for (int i : {0, 1, 2, 3, 6, 7, 8}) take(r[i]);
  };
  for (int i = 0; i < 5; ++i) run();
  void* stream = nullptr;
  ASSERT_EQ(aoti_torch_get_current_cuda_stream(0, &stream), 0);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const int iters = 50;
  cudaEventRecord(a, static_cast<cudaStream_t>(stream));
  for (int i = 0; i < iters; ++i) run();
  cudaEventRecord(b, static_cast<cudaStream_t>(stream));
  ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  const double us = 1000.0 * ms / iters;
  std::printf("[ timing ] attention %s (%s): %.1f us per call (shim included)\n", what, describe(c, dt).c_str(), us);
  EXPECT_LT(us, 1000.0);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

TEST_F(CudaAttentionTest, DecodeTiming) {
  print_timing({1, 32, 32, 1, 512, 128, 128, false, Mask::kNone, false, false, 0}, "decode");
}

TEST_F(CudaAttentionTest, PrefillTiming) {
  print_timing({1, 12, 12, 512, 512, 64, 64, true, Mask::kNone, false, false, 0}, "GPT-2 prefill");
  print_timing({1, 32, 32, 2048, 2048, 128, 128, true, Mask::kNone, false, false, 0}, "long prefill");
  print_timing({1, 12, 12, 197, 197, 64, 64, false, Mask::kNone, false, false, 0}, "ViT-B/16", DType::kFloat32);
  print_timing({1, 12, 12, 128, 128, 64, 64, false, Mask::kNone, false, false, 0}, "BERT-base", DType::kFloat32);
}

// Llama-3.2-1B's decode attention (32 query heads over 8 key/value heads of
// 64 features, a static cache of 2048 keys, an additive bfloat16 mask that
// shows the first |seen| keys): the decode kernel and its split merge as
// the shim launches them (dependent launches on Hopper), recorded for 16
// layers' caches in a CUDA graph, per split count. Each count's output is
// checked against the shim's own count's.
TEST_F(CudaAttentionTest, LlamaDecodeSplitTiming) {
  constexpr int kLayers = 16, kHq = 32, kHkv = 8, kD = 64, kS = 2048;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int dev = 0, major = 0, sms = 1;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  TensorImpl q = to_device(host_random(DimVector{1, kHq, 1, kD}, DType::kBFloat16, 3));
  std::vector<TensorImpl> k, v;
  for (int l = 0; l < kLayers; ++l) {
    k.push_back(to_device(host_random(DimVector{1, kHkv, kS, kD}, DType::kBFloat16, 10 + l)));
    v.push_back(to_device(host_random(DimVector{1, kHkv, kS, kD}, DType::kBFloat16, 50 + l)));
  }
  TensorImpl out = device_empty(DimVector{1, kHq, 1, kD}, DType::kBFloat16);
  TensorImpl ws = device_empty(DimVector{64 * kHq * (kD + 1)}, DType::kFloat32);
  for (int seen : {192, 2048}) {
    TensorImpl mh = host_empty(DimVector{1, 1, 1, kS}, DType::kBFloat16);
    uint16_t* mb = static_cast<uint16_t*>(mh.data_ptr());
    for (int j = 0; j < kS; ++j) mb[j] = j < seen ? 0x0000 : 0xff80;  // 0 or -inf
    TensorImpl mask = to_device(mh);
    auto params = [&](int layer, int splits) {
      CudaAttentionParams p;
      p.dtype = 15;
      p.q = q.data_ptr(), p.k = k[layer].data_ptr(), p.v = v[layer].data_ptr(), p.out = out.data_ptr();
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
      p.dependent_launch = major >= 9;
      p.num_splits = splits;
      p.workspace = splits > 1 ? static_cast<float*>(ws.data_ptr()) : nullptr;
      return p;
    };
    const int shipped = cuda_attention_key_splits(params(0, 1), sms);
    ASSERT_EQ(cuda_launch_attention(params(0, shipped), 0, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<double> want = values(to_host(out));
    for (int splits : {4, 8, 16, 32, 64}) {
      ASSERT_EQ(cuda_launch_attention(params(0, splits), 0, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const std::vector<double> got = values(to_host(out));
      double err = 0;
      for (size_t i = 0; i < got.size(); ++i) err = std::max(err, std::fabs(got[i] - want[i]));
      EXPECT_LT(err, 2e-2) << splits << " splits";
      const int reps = 4;
      const double us = cuda_bench::graph_replay_us(
          stream,
          [&] {
            for (int r = 0; r < reps; ++r)
              for (int l = 0; l < kLayers; ++l) EXPECT_EQ(cuda_launch_attention(params(l, splits), 0, stream), cudaSuccess);
          },
          reps * kLayers);
      std::printf("[ timing ] llama decode attention, %d of %d keys seen, %d splits%s: %.2f us a layer (max diff %.1e)\n",
                  seen, kS, splits, splits == shipped ? " (shipped)" : "", us, err);
    }
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace aotirt
