// Time per call of a run of kernel launches as a CUDA graph replays them,
// for the timing cases of aotirt_cuda_bench: the GPU's time, without the
// host's launch cost. Launch errors are reported as GoogleTest failures.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <functional>

namespace aotirt {
namespace cuda_bench {

// Records what |queue| launches on |stream| into a graph, replays it once to
// warm up and once timed, and returns the timed replay's microseconds over
// |calls| (the calls |queue| makes); 0 when recording or replaying failed.
inline double graph_replay_us(cudaStream_t stream, const std::function<void()>& queue, int calls) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  float ms = 0;
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  queue();
  const bool recorded = cudaStreamEndCapture(stream, &graph) == cudaSuccess &&
                        cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  EXPECT_TRUE(recorded) << "recording the launches into a CUDA graph failed";
  if (recorded && cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess) {
    EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    cudaEventRecord(e0, stream);
    EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    cudaEventRecord(e1, stream);
    EXPECT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  return calls > 0 ? 1000.0 * ms / calls : 0.0;
}

}  // namespace cuda_bench
}  // namespace aotirt
