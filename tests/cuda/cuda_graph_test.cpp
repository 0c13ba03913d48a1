// CUDA graphs at the device level: recording allocates from the graph's own
// pool and runs nothing until a replay; a recording that waits for the device
// fails cleanly and leaves the allocator and the CUDA runtime usable; the
// allocator's host cache hands a freed block back on the next request. Skipped
// without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backends/cuda/runtime/cuda_allocator.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/status.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaGraphTest : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    Result<CudaDevice*> dev = cuda_device(0);
    ASSERT_TRUE(dev.ok()) << dev.status().to_string();
    dev_ = dev.value();
    Result<cudaStream_t> s = cuda_current_stream(0);
    ASSERT_TRUE(s.ok());
    stream_ = s.value();
  }
  std::vector<uint8_t> read(void* p, size_t n) {
    std::vector<uint8_t> host(n);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(host.data(), p, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  CudaDevice* dev_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaGraphTest, RecordingRunsNothingAndReplaysRunIt) {
  CudaAllocator& alloc = dev_->cuda_allocator();
  void* p = nullptr;
  Result<std::unique_ptr<DeviceGraph>> graph = dev_->capture([&]() -> Status {
    EXPECT_TRUE(alloc.capturing_on_this_thread());
    AOTIRT_ASSIGN_OR_RETURN(p, alloc.allocate(4096));
    // A block freed while recording is reused inside the same recording.
    AOTIRT_ASSIGN_OR_RETURN(void* scratch, alloc.allocate(4096));
    alloc.deallocate(scratch, 4096);
    AOTIRT_ASSIGN_OR_RETURN(void* again, alloc.allocate(4096));
    EXPECT_EQ(again, scratch);
    alloc.deallocate(again, 4096);
    if (cudaMemsetAsync(p, 0x5a, 4096, stream_) != cudaSuccess) return Status(StatusCode::kInternal, "memset");
    return Status();
  });
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  EXPECT_FALSE(alloc.capturing_on_this_thread());
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(cudaMemset(p, 0, 4096), cudaSuccess);  // recorded, not run
  EXPECT_EQ(read(p, 4096)[100], 0);
  AOTIRT_ASSERT_OK(graph.value()->replay());
  EXPECT_EQ(read(p, 4096)[100], 0x5a);
  ASSERT_EQ(cudaMemset(p, 0, 4096), cudaSuccess);
  AOTIRT_ASSERT_OK(graph.value()->replay());
  EXPECT_EQ(read(p, 4096)[4095], 0x5a);
  // The graph's memory outlives the graph while a tensor holds it.
  graph.value().reset();
  EXPECT_EQ(read(p, 4096)[0], 0x5a);
  alloc.deallocate(p, 4096);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// Memory zeroed for a recording, outside it: zeros at once, no node in the
// graph (a replay leaves what was written there since), and refused when
// nothing is recorded.
TEST_F(CudaGraphTest, ZeroedMemoryForARecordingHoldsNoNode) {
  CudaAllocator& alloc = dev_->cuda_allocator();
  EXPECT_EQ(alloc.zeroed_for_capture(64).status().code(), StatusCode::kInternal);
  void* z = nullptr;
  Result<std::unique_ptr<DeviceGraph>> graph = dev_->capture([&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(z, alloc.zeroed_for_capture(4096));
    return Status();
  });
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  ASSERT_NE(z, nullptr);
  std::vector<uint8_t> bytes = read(z, 4096);
  EXPECT_EQ(std::count(bytes.begin(), bytes.end(), 0), 4096);
  ASSERT_EQ(cudaMemset(z, 7, 4096), cudaSuccess);
  AOTIRT_ASSERT_OK(graph.value()->replay());
  EXPECT_EQ(read(z, 4096)[123], 7);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaGraphTest, WaitingForTheDeviceWhileRecordingFailsCleanly) {
  CudaAllocator& alloc = dev_->cuda_allocator();
  Result<std::unique_ptr<DeviceGraph>> graph = dev_->capture([&]() -> Status {
    cudaError_t err = cudaStreamSynchronize(stream_);
    if (err != cudaSuccess)
      return Status(StatusCode::kInternal, std::string("synchronize: ") + cudaGetErrorName(err));
    return Status();
  });
  ASSERT_FALSE(graph.ok());
  EXPECT_FALSE(alloc.capturing_on_this_thread());
  cudaStreamCaptureStatus status;
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // Ordinary work still runs.
  Result<void*> p = alloc.allocate(1024);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(cudaMemsetAsync(p.value(), 1, 1024, stream_), cudaSuccess);
  EXPECT_EQ(read(p.value(), 1024)[7], 1);
  alloc.deallocate(p.value(), 1024);
}

TEST_F(CudaGraphTest, BodyErrorIsReturnedAndNothingIsRecorded) {
  Result<std::unique_ptr<DeviceGraph>> graph =
      dev_->capture([]() -> Status { return Status(StatusCode::kInvalidArgument, "the body refused"); });
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(dev_->cuda_allocator().capturing_on_this_thread());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaGraphTest, RecordedCopiesCanBeRetargeted) {
  CudaAllocator& alloc = dev_->cuda_allocator();
  Result<void*> a = alloc.allocate(256), b = alloc.allocate(256), dst = alloc.allocate(256);
  ASSERT_TRUE(a.ok() && b.ok() && dst.ok());
  ASSERT_EQ(cudaMemset(a.value(), 1, 256), cudaSuccess);
  ASSERT_EQ(cudaMemset(b.value(), 2, 256), cudaSuccess);
  Result<std::unique_ptr<DeviceGraph>> graph = dev_->capture([&]() -> Status {
    if (cudaMemcpyAsync(dst.value(), a.value(), 256, cudaMemcpyDeviceToDevice, stream_) != cudaSuccess)
      return Status(StatusCode::kInternal, "copy");
    return Status();
  });
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  AOTIRT_ASSERT_OK(graph.value()->replay());
  EXPECT_EQ(read(dst.value(), 256)[9], 1);
  AOTIRT_ASSERT_OK(graph.value()->retarget_copy(dst.value(), b.value(), 256));
  AOTIRT_ASSERT_OK(graph.value()->replay());
  EXPECT_EQ(read(dst.value(), 256)[9], 2);
  Status unknown = graph.value()->retarget_copy(a.value(), b.value(), 256);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound) << unknown.to_string();
  graph.value().reset();
  for (void* p : {a.value(), b.value(), dst.value()}) alloc.deallocate(p, 256);
}

TEST_F(CudaGraphTest, FreedBlocksAreReusedFromTheHostCache) {
  CudaAllocator& alloc = dev_->cuda_allocator();
  Result<void*> a = alloc.allocate(100000);
  ASSERT_TRUE(a.ok());
  alloc.deallocate(a.value(), 100000);
  const MemoryStats before = alloc.stats();
  // Same size class: the same block, without a CUDA call.
  Result<void*> b = alloc.allocate(99999);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value(), a.value());
  EXPECT_EQ(alloc.stats().cache_hits, before.cache_hits + 1);
  alloc.deallocate(b.value(), 99999);
  alloc.trim();
  EXPECT_EQ(CudaAllocator::size_class(1), CudaAllocator::size_class(512));
  EXPECT_GE(CudaAllocator::size_class(3 << 20), size_t{3} << 20);
}

}  // namespace
}  // namespace aotirt
