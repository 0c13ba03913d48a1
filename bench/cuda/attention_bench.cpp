// Timing of the CUDA SDPA shims: one flash-attention call, shim included,
// for a decode step (CudaAttentionTest.DecodeTiming) and for GPT-2's,
// a long, ViT-B/16's and BERT-base's prefill (CudaAttentionTest.PrefillTiming).
// Prints "[ timing ]" lines; fails only on a launch error or a call slower
// than a millisecond. Their correctness tests are
// tests/cuda/cuda_attention_test.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "cuda_attention_fixture.h"
#include "cuda_test_util.h"

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

}  // namespace
}  // namespace aotirt
