// The GEMM weights' prefetch into L2 while a graph is recorded: a branch from the
// marked point, joined before the next kernels, and nothing outside a
// capture, without a mark of the same capture, or for sizes outside its
// range. Skipped without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

class CudaL2PrefetchTest : public cuda_test::CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    if (!cuda_l2_prefetch_enabled())
      GTEST_SKIP() << "prefetches are turned off (AOTIRT_CUDA_DISABLE=l2_prefetch)";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&buf_, kBytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&small_, 256), cudaSuccess);
  }
  void TearDown() override {
    if (graph_) cudaGraphDestroy(graph_);
    if (buf_) cudaFree(buf_);
    if (small_) cudaFree(small_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  void begin() {
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), cudaSuccess);
    ASSERT_EQ(cuda_l2_prefetch_capture(stream_, &capture_), cudaSuccess);
    ASSERT_NE(capture_, 0u);
  }
  void end() {
    if (graph_) cudaGraphDestroy(graph_);
    graph_ = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(stream_, &graph_), cudaSuccess);
  }
  // A node that only writes |small_|, to see where the others hang.
  void marker(int value) { ASSERT_EQ(cudaMemsetAsync(small_, value, 256, stream_), cudaSuccess); }
  std::vector<cudaGraphNode_t> nodes(cudaGraphNodeType type) {
    size_t n = 0;
    EXPECT_EQ(cudaGraphGetNodes(graph_, nullptr, &n), cudaSuccess);
    std::vector<cudaGraphNode_t> all(n), out;
    if (n) {
      EXPECT_EQ(cudaGraphGetNodes(graph_, all.data(), &n), cudaSuccess);
    }
    for (cudaGraphNode_t node : all) {
      cudaGraphNodeType t;
      if (cudaGraphNodeGetType(node, &t) == cudaSuccess && t == type) out.push_back(node);
    }
    return out;
  }
  std::vector<cudaGraphNode_t> deps(cudaGraphNode_t node) {
    size_t n = 0;
    EXPECT_EQ(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &n), cudaSuccess);
    std::vector<cudaGraphNode_t> out(n);
    if (n) {
      EXPECT_EQ(cudaGraphNodeGetDependencies(node, out.data(), nullptr, &n), cudaSuccess);
    }
    return out;
  }
  static constexpr size_t kBytes = size_t(1) << 20;
  cudaStream_t stream_ = nullptr;
  void* buf_ = nullptr;
  void* small_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  unsigned long long capture_ = 0;
};

TEST_F(CudaL2PrefetchTest, NothingOutsideACapture) {
  unsigned long long capture = 1;
  ASSERT_EQ(cuda_l2_prefetch_capture(stream_, &capture), cudaSuccess);
  EXPECT_EQ(capture, 0u);
  EXPECT_EQ(cuda_l2_prefetch_mark(stream_, capture), cudaSuccess);
  EXPECT_EQ(cuda_l2_prefetch(stream_, capture, buf_, kBytes), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream_), cudaSuccess);  // nothing queued
}

TEST_F(CudaL2PrefetchTest, BranchesFromTheMarkAndJoinsBeforeTheNextKernels) {
  begin();
  marker(1);  // the previous op
  ASSERT_EQ(cuda_l2_prefetch_mark(stream_, capture_), cudaSuccess);
  marker(2);  // the kernels in between
  ASSERT_EQ(cuda_l2_prefetch(stream_, capture_, buf_, kBytes), cudaSuccess);
  marker(3);  // the op itself
  end();
  const std::vector<cudaGraphNode_t> kernels = nodes(cudaGraphNodeTypeKernel);
  const std::vector<cudaGraphNode_t> sets = nodes(cudaGraphNodeTypeMemset);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(sets.size(), 3u);
  // Memsets in capture order: each one's dependencies tell them apart.
  cudaGraphNode_t first = nullptr, second = nullptr, third = nullptr;
  for (cudaGraphNode_t s : sets) {
    const std::vector<cudaGraphNode_t> d = deps(s);
    if (d.empty()) {
      first = s;
    } else if (d.size() == 2) {
      third = s;
    } else {
      second = s;
    }
  }
  ASSERT_TRUE(first && second && third);
  // The prefetch waits for the marked point only, not for the kernels since.
  EXPECT_EQ(deps(kernels[0]), std::vector<cudaGraphNode_t>{first});
  EXPECT_EQ(deps(second), std::vector<cudaGraphNode_t>{first});
  // The op waits for both.
  std::vector<cudaGraphNode_t> d3 = deps(third), want = {second, kernels[0]};
  std::sort(d3.begin(), d3.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(d3, want);
  // And the graph runs, leaving the prefetched bytes as they were.
  ASSERT_EQ(cudaMemset(buf_, 0x7f, kBytes), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph_, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  cudaGraphExecDestroy(exec);
  std::vector<unsigned char> host(kBytes);
  ASSERT_EQ(cudaMemcpy(host.data(), buf_, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char c) { return c == 0x7f; }));
}

TEST_F(CudaL2PrefetchTest, AMarkOfAnEarlierCaptureStartsNothing) {
  begin();
  ASSERT_EQ(cuda_l2_prefetch_mark(stream_, capture_), cudaSuccess);
  marker(1);
  end();
  begin();
  marker(2);
  ASSERT_EQ(cuda_l2_prefetch(stream_, capture_, buf_, kBytes), cudaSuccess);
  end();
  EXPECT_TRUE(nodes(cudaGraphNodeTypeKernel).empty());
}

TEST_F(CudaL2PrefetchTest, TooSmallOrTooLargeStartsNothing) {
  begin();
  ASSERT_EQ(cuda_l2_prefetch_mark(stream_, capture_), cudaSuccess);
  marker(1);
  ASSERT_EQ(cuda_l2_prefetch(stream_, capture_, buf_, kCudaL2PrefetchMinBytes - 1), cudaSuccess);
  ASSERT_EQ(cuda_l2_prefetch(stream_, capture_, buf_, kCudaL2PrefetchMaxBytes + 1), cudaSuccess);
  ASSERT_EQ(cuda_l2_prefetch(stream_, capture_, nullptr, kBytes), cudaSuccess);
  end();
  EXPECT_TRUE(nodes(cudaGraphNodeTypeKernel).empty());
}

}  // namespace
}  // namespace aotirt
