// Fixtures of aotirt's float32 (3xTF32) GEMM cases, shared by their tests
// (cuda_gemm_f32x3_test.cpp) and their timing case
// (bench/cuda/gemm_bench.cpp): the suite's set-up, a problem's sizes, and
// host data copied to the device.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace cuda_test {

// The 3xTF32 suite: skipped without a GPU or without the build's kernels.
class CudaF32x3Test : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    if (cuda_f32x3_config_count() == 0) GTEST_SKIP() << "this build has no 3xTF32 kernels (no CUTLASS)";
  }
};

// A problem of |batch| products of |m| x |k| by |k| x |n|, B row-major when
// |b_row|; no pointers or strides set.
inline CudaF32x3Problem dims(int m, int n, int k, int batch = 1, bool b_row = false) {
  CudaF32x3Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.b_row_major = b_row;
  return p;
}

// A device copy of |v| with 16 bytes of slack after it (the caller frees it
// with cudaFree).
template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), v.size() * sizeof(T) + 16), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

}  // namespace cuda_test
}  // namespace aotirt
