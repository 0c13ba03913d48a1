// The int4 weight-only few-row product's dependent launches (Hopper and
// later): a chain of products, each reading the one before's output as its
// x, must give the same bits as plain launches. Its values against torch are
// checked by tests/ops (the weight-only quantized GEMMs); its timing is
// aotirt_cuda_bench (bench/cuda/quant_bench.cpp).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaInt4Test : public CudaTest {};

std::vector<uint8_t> bytes_of(const TensorImpl& t) {
  TensorImpl h = to_host(t);
  std::vector<uint8_t> b(h.nbytes());
  std::memcpy(b.data(), h.data_ptr(), b.size());
  return b;
}

// Six chained products whose outputs start as NaN bytes: each product lets
// the next start at once (it calls launch_dependents first), so a read of x
// issued ahead of the wait for the kernel ahead reads NaN or a stale value.
// Compared bit for bit with plain launches, on the stream and replayed from
// a CUDA graph, for one row and for five, with each choice of tiles a block.
TEST_F(CudaInt4Test, DependentLaunchesReadXAfterTheKernelAhead) {
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (major < 9) GTEST_SKIP() << "dependent launches need Hopper or later (compute capability " << major << ")";
  constexpr int kN = 2048, kChain = 6, kInnerKTiles = 8, kGroup = 128;
  std::mt19937 rng(5);
  std::vector<int32_t*> packed(kChain, nullptr);
  std::vector<TensorImpl> sz;
  std::vector<uint32_t> words(size_t(kN) * kN / 8);
  for (int i = 0; i < kChain; ++i) {
    for (uint32_t& w : words) w = rng();
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&packed[i]), words.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(packed[i], words.data(), words.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    // Small scales and zeros keep the chain's values near 1, finite.
    sz.push_back(to_device(host_random(DimVector{kN / kGroup, kN, 2}, DType::kBFloat16, rng(), -0.008, 0.008)));
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (int m : {1, 5}) {
    std::vector<TensorImpl> act;
    act.push_back(to_device(host_random(DimVector{m, kN}, DType::kBFloat16, 40 + m)));
    for (int i = 0; i < kChain; ++i) act.push_back(device_empty(DimVector{m, kN}, DType::kBFloat16));
    auto poison = [&] {
      for (int i = 1; i <= kChain; ++i)
        ASSERT_EQ(cudaMemsetAsync(act[i].data_ptr(), 0xff, act[i].nbytes(), stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    };
    auto queue = [&](bool dependent, int tiles) {
      for (int i = 0; i < kChain; ++i)
        ASSERT_EQ(cuda_launch_int4pack_gemv(act[i].data_ptr(), packed[i], sz[i].data_ptr(), act[i + 1].data_ptr(), m,
                                            kN, kN, kInnerKTiles, kGroup, stream, dependent, tiles),
                  cudaSuccess);
    };
    auto outputs = [&] {
      std::vector<std::vector<uint8_t>> out;
      for (int i = 1; i <= kChain; ++i) out.push_back(bytes_of(act[i]));
      return out;
    };
    for (int tiles : {0, 1, 2, 4}) {
      SCOPED_TRACE(std::to_string(m) + " rows, tiles a block " + std::to_string(tiles));
      // The reference: plain launches with the same tiles a block (the
      // tiles' warps sum in another order for each choice).
      poison();
      queue(false, tiles);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const auto want = outputs();
      // Finite all along the chain, so NaN bytes left unwritten or read as
      // x would show.
      for (double v : values(to_host(act[kChain]))) ASSERT_TRUE(std::isfinite(v)) << "the chain's scale";
      poison();
      queue(true, tiles);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      EXPECT_EQ(outputs(), want) << "on the stream";
      poison();
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      queue(true, tiles);
      ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      for (int r = 0; r < 3; ++r) {
        poison();
        ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        EXPECT_EQ(outputs(), want) << "replayed from a graph, replay " << r;
      }
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
  }
  for (auto* p : packed) cudaFree(p);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace aotirt
