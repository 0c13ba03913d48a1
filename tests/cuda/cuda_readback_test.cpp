// CudaDevice::read_back: small reads queued on the stream behind the work
// already there, without waiting for it (a generated token read while the
// next decode step is queued), larger ones copied at once, and the pool of
// pinned buffers and events kept bounded.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaReadbackTest : public CudaTest {};

void CUDART_CB hold_stream(void* flag) {
  auto* f = static_cast<std::atomic<bool>*>(flag);
  while (!f->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST_F(CudaReadbackTest, ASmallReadIsQueuedBehindTheStreamsWork) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok()) << dev.status().to_string();
  Result<cudaStream_t> stream = cuda_current_stream(0);
  ASSERT_TRUE(stream.ok());
  TensorImpl t = device_empty(DimVector{4}, DType::kInt64);
  // The stream waits on the host until |go|; the read is queued meanwhile,
  // between two fills, and must see the first.
  std::atomic<bool> go{false};
  ASSERT_EQ(cudaLaunchHostFunc(*stream, hold_stream, &go), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(t.data_ptr(), 0x11, t.nbytes(), *stream), cudaSuccess);
  // Released from another thread, so that a read_back that waited for the
  // stream would come back late instead of never.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    go = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::unique_ptr<DeviceReadback>> r = (*dev)->read_back(t);
  const double queued_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) release.join();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(cudaMemsetAsync(t.data_ptr(), 0x22, t.nbytes(), *stream), cudaSuccess);
  std::vector<uint8_t> got(t.nbytes(), 0);
  Status waited = (*r)->wait(got.data());
  release.join();
  ASSERT_TRUE(waited.ok()) << waited.to_string();
  EXPECT_LT(queued_s, 0.15) << "read_back waited for the stream";
  EXPECT_EQ(got, std::vector<uint8_t>(t.nbytes(), 0x11));
  // wait() again hands over the same bytes.
  std::fill(got.begin(), got.end(), 0);
  ASSERT_TRUE((*r)->wait(got.data()).ok());
  EXPECT_EQ(got, std::vector<uint8_t>(t.nbytes(), 0x11));
  ASSERT_EQ(cudaStreamSynchronize(*stream), cudaSuccess);
}

TEST_F(CudaReadbackTest, LargeReadsAreCopiedAndThePoolStaysBounded) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok());
  // Past a slot's bytes: the plain copy.
  TensorImpl big = to_device(host_random(DimVector{1000}, DType::kFloat32, 3));
  Result<std::unique_ptr<DeviceReadback>> r = (*dev)->read_back(big);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<float> got(1000), want(1000);
  ASSERT_TRUE((*r)->wait(got.data()).ok());
  TensorImpl host = to_host(big);
  std::memcpy(want.data(), host.data_ptr(), host.nbytes());
  EXPECT_EQ(got, want);
  // Many reads at once take slots of their own; once done, the pool keeps
  // at most kMaxFree of them.
  TensorImpl small = to_device(host_random(DimVector{2}, DType::kInt64, 4, 0, 1000));
  std::vector<std::unique_ptr<DeviceReadback>> reads;
  for (size_t i = 0; i < CudaReadbackPool::kMaxFree + 5; ++i) {
    Result<std::unique_ptr<DeviceReadback>> one = (*dev)->read_back(small);
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    reads.push_back(std::move(one).value());
  }
  int64_t a[2] = {}, b[2] = {};
  ASSERT_TRUE(reads.front()->wait(a).ok());
  ASSERT_TRUE(reads.back()->wait(b).ok());
  EXPECT_EQ(std::memcmp(a, b, sizeof(a)), 0);
  reads.clear();  // some not waited for: their destructors wait
  EXPECT_EQ((*dev)->readback_pool().free_slots(), CudaReadbackPool::kMaxFree);
}

TEST_F(CudaReadbackTest, ReadsOfOtherTensorsAreRefused) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok());
  TensorImpl host = host_empty(DimVector{2}, DType::kInt64);
  Result<std::unique_ptr<DeviceReadback>> r = (*dev)->read_back(host);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("cpu"), std::string::npos) << r.status().to_string();
  TensorImpl t = device_empty(DimVector{4, 2}, DType::kInt64);
  EXPECT_EQ((*dev)->read_back(transposed(t, 0, 1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*dev)->read_back(TensorImpl()).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace aotirt
