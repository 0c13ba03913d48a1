// Replays of library calls (cuda_op_replay.h): a key is called directly the
// first time, recorded the second and replayed after that, each time with the
// call's effect; a new key is called directly; a site keeps a recording for
// each layer of a deep model and drops the oldest past its limit; a call that synchronises is
// never recorded and still runs; inside a larger recording the call itself is
// recorded. The calls here are memsets standing in for cuBLASLt and cuDNN.
// Skipped without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaOpReplayTest : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    Result<cudaStream_t> s = cuda_current_stream(0);
    ASSERT_TRUE(s.ok());
    stream_ = s.value();
    ASSERT_EQ(cudaMalloc(&buf_, kBytes), cudaSuccess);
  }
  void TearDown() override {
    if (buf_) cudaFree(buf_);
  }
  // Clears the buffer, then checks that |run| sets every byte to |value|.
  void expect_sets(uint8_t value, const std::function<Status()>& run) {
    ASSERT_EQ(cudaMemsetAsync(buf_, 0, kBytes, stream_), cudaSuccess);
    Status s = run();
    ASSERT_TRUE(s.ok()) << s.to_string();
    std::vector<uint8_t> host(kBytes);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(host.data(), buf_, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(host[i], value) << "byte " << i;
  }
  static constexpr size_t kBytes = 1 << 16;
  cudaStream_t stream_ = nullptr;
  void* buf_ = nullptr;
};

TEST_F(CudaOpReplayTest, RecordsOnSecondCallAndReplaysAfter) {
  if (!cuda_op_replay_enabled()) GTEST_SKIP() << "AOTIRT_CUDA_OP_REPLAY=0";
  CudaOpReplay site("test / replay");
  int direct = 0;
  auto call = [&](uint8_t value) {
    return [&, value]() {
      return site.run(0, CudaReplayKey{reinterpret_cast<uintptr_t>(buf_), value}, stream_,
                      [&](cudaStream_t s) -> Status {
                        ++direct;
                        AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf_, value, kBytes, s));
                        return Status();
                      });
    };
  };
  expect_sets(7, call(7));  // first sight: direct
  EXPECT_EQ(site.recordings(), 0);
  expect_sets(7, call(7));  // second: recorded, then launched
  EXPECT_EQ(site.recordings(), 1);
  EXPECT_EQ(site.replays(), 0);
  expect_sets(7, call(7));  // replayed: the library is not called
  expect_sets(7, call(7));
  EXPECT_EQ(site.replays(), 2);
  EXPECT_EQ(direct, 2);
  // Another key (a different argument) is not served by the recording.
  expect_sets(9, call(9));
  EXPECT_EQ(direct, 3);
  EXPECT_EQ(site.replays(), 2);
  expect_sets(7, call(7));
  EXPECT_EQ(site.replays(), 3);
}

// A model's repeated layers share a site, each with its own arguments: 24
// sets in turn (a 24-layer model) are each recorded on their second pass
// and replayed from the third. A table of eight sets, fewer than the
// layers, evicted each set before it came round again: nothing replayed.
TEST_F(CudaOpReplayTest, KeepsARecordingForEveryLayer) {
  if (!cuda_op_replay_enabled()) GTEST_SKIP() << "AOTIRT_CUDA_OP_REPLAY=0";
  CudaOpReplay site("test / replay");
  constexpr int kLayers = 24;
  int direct = 0;
  auto layer = [&](int i) {
    return [&, i]() {
      const uint8_t value = static_cast<uint8_t>(i + 1);
      return site.run(0, CudaReplayKey{reinterpret_cast<uintptr_t>(buf_), static_cast<uint64_t>(i)}, stream_,
                      [&, value](cudaStream_t s) -> Status {
                        ++direct;
                        AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf_, value, kBytes, s));
                        return Status();
                      });
    };
  };
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 0; i < kLayers; ++i) expect_sets(static_cast<uint8_t>(i + 1), layer(i));
  EXPECT_EQ(site.recordings(), kLayers);
  EXPECT_EQ(site.replays(), kLayers);
  EXPECT_EQ(direct, 2 * kLayers);
}

// Past kCudaReplayEntries sets the one unused for longest is dropped: sets
// that come round in turn, one more than the table holds, are then each
// called directly (and stay correct), never replayed.
TEST_F(CudaOpReplayTest, DropsTheOldestSetWhenFull) {
  if (!cuda_op_replay_enabled()) GTEST_SKIP() << "AOTIRT_CUDA_OP_REPLAY=0";
  CudaOpReplay site("test / replay");
  constexpr int kSets = kCudaReplayEntries + 1;
  int direct = 0;
  auto run = [&](int i) {
    return site.run(0, CudaReplayKey{static_cast<uint64_t>(i)}, stream_, [&, i](cudaStream_t s) -> Status {
      ++direct;
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf_, i & 0xff, kBytes, s));
      return Status();
    });
  };
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < kSets; ++i) ASSERT_TRUE(run(i).ok());
  EXPECT_EQ(site.recordings(), 0);
  EXPECT_EQ(direct, 2 * kSets);
  // The newest set is still held: its next call is recorded.
  expect_sets((kSets - 1) & 0xff, [&] { return run(kSets - 1); });
  EXPECT_EQ(site.recordings(), 1);
}

TEST_F(CudaOpReplayTest, CallThatSynchronisesIsNeverRecorded) {
  CudaOpReplay site("test / replay");
  int direct = 0;
  auto run = [&]() {
    return site.run(0, CudaReplayKey{1}, stream_, [&](cudaStream_t s) -> Status {
      ++direct;
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf_, 3, kBytes, s));
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));  // refused inside a recording
      return Status();
    });
  };
  for (int i = 0; i < 4; ++i) expect_sets(3, run);
  EXPECT_EQ(site.recordings(), 0);
  EXPECT_EQ(site.replays(), 0);
  EXPECT_EQ(direct, cuda_op_replay_enabled() ? 5 : 4);  // the refused recording called it once more
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaOpReplayTest, ErrorFromTheCallIsReturned) {
  CudaOpReplay site("test / replay");
  for (int i = 0; i < 3; ++i) {
    Status s = site.run(0, CudaReplayKey{2}, stream_,
                        [&](cudaStream_t) -> Status { return Status(StatusCode::kInvalidArgument, "bad call"); });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("bad call"), std::string::npos);
  }
  EXPECT_EQ(site.recordings(), 0);
}

TEST_F(CudaOpReplayTest, InsideALargerRecordingTheCallIsRecorded) {
  CudaOpReplay site("test / replay");
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(buf_, 0, kBytes, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  int direct = 0;
  for (int i = 0; i < 3; ++i) {
    Status st = site.run(0, CudaReplayKey{3}, s, [&](cudaStream_t cs) -> Status {
      ++direct;
      EXPECT_EQ(cs, s);
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf_, 5, kBytes, cs));
      return Status();
    });
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  EXPECT_EQ(direct, 3);
  EXPECT_EQ(site.recordings(), 0);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  std::vector<uint8_t> host(kBytes);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), buf_, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[0], 5);
  EXPECT_EQ(host[kBytes - 1], 5);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace aotirt
