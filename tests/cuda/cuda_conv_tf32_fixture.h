// Fixtures for aotirt's TF32 and 3xTF32 convolutions and its stem kernel,
// shared by their tests (cuda_conv_tf32_test.cpp) and their timing cases
// (bench/cuda/conv_bench.cpp): a problem of given sizes, and the suites'
// set-up that skips without a GPU, without the build's kernels, or on a GPU
// too old for them.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace cuda_test {

// A convolution of |n| images of |h| x |w| by |c| channels into |k|, with
// |r| x |s| taps, the same stride, padding and dilation both ways, and the
// output size that gives; no pointers set.
inline CudaConvProblem conv(int n, int h, int w, int c, int k, int r, int s, int stride, int pad, int dil = 1) {
  CudaConvProblem p;
  p.n = n;
  p.h = h;
  p.w = w;
  p.c = c;
  p.k = k;
  p.r = r;
  p.s = s;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dil_h = p.dil_w = dil;
  p.p = (h + 2 * pad - dil * (r - 1) - 1) / stride + 1;
  p.q = (w + 2 * pad - dil * (s - 1) - 1) / stride + 1;
  return p;
}

// The TF32 and 3xTF32 kernels: skipped without a GPU or without them in the
// build; runs(i) says whether kernel |i| has an image for this GPU.
class CudaConvTf32Test : public ::testing::Test {
 protected:
  void SetUp() override {
    AOTIRT_REQUIRE_GPU();
    if (cuda_conv_tf32_config_count() == 0) GTEST_SKIP() << "this build has no TF32 convolution kernels (no CUTLASS)";
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    runs_.assign(cuda_conv_tf32_config_count(), true);
    for (int i = 0; i < cuda_conv_tf32_config_count(); ++i) {
      // sm_90a code runs on compute capability 9.0 alone.
      if (cuda_conv_tf32_config(i).sm90 && (major != 9 || minor != 0)) {
        runs_[i] = false;
        continue;
      }
      int blocks = 0;
      // Also raises each kernel's shared-memory limit, as the shim's table does.
      ASSERT_EQ(cuda_conv_tf32_blocks_per_sm(i, &blocks), cudaSuccess) << "kernel " << i;
      ASSERT_GE(blocks, 1);
    }
  }
  // Whether kernel |i| has an image for this GPU.
  bool runs(int i) const { return runs_[i]; }

 private:
  std::vector<bool> runs_;
};

// The stem kernel (cuda_conv_stem.h): skipped without a GPU of compute
// capability 8.0 or later.
class CudaConvStemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AOTIRT_REQUIRE_GPU();
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major < 8) GTEST_SKIP() << "the stem kernel needs compute capability 8.0 (TF32 mma)";
  }
};

}  // namespace cuda_test
}  // namespace aotirt
