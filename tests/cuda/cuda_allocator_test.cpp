// The CUDA allocator: statistics, the memory limit (allocations past it fail
// with RESOURCE_EXHAUSTED and later ones still work), device out-of-memory
// handled the same way, trim, zero-byte requests, and blocks freed after
// their stream's guard is gone. Skipped without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_allocator.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaAllocatorTest : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    Result<CudaDevice*> dev = cuda_device(0);
    ASSERT_TRUE(dev.ok()) << dev.status().to_string();
    alloc_ = &dev.value()->cuda_allocator();
  }
  void TearDown() override {
    if (alloc_) alloc_->set_limit(0);
  }
  CudaAllocator* alloc_ = nullptr;
};

TEST_F(CudaAllocatorTest, TracksActiveAndPeakBytes) {
  const MemoryStats s0 = alloc_->stats();
  alloc_->reset_peak();
  Result<void*> a = alloc_->allocate(1 << 20);
  Result<void*> b = alloc_->allocate(3 << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  MemoryStats s1 = alloc_->stats();
  EXPECT_EQ(s1.active_bytes, s0.active_bytes + (4 << 20));
  EXPECT_GE(s1.peak_bytes, s1.active_bytes);
  EXPECT_EQ(s1.alloc_count, s0.alloc_count + 2);
  EXPECT_TRUE(alloc_->owns(a.value()));
  alloc_->deallocate(a.value(), 1 << 20);
  alloc_->deallocate(b.value(), 3 << 20);
  MemoryStats s2 = alloc_->stats();
  EXPECT_EQ(s2.active_bytes, s0.active_bytes);
  EXPECT_EQ(s2.peak_bytes, s1.peak_bytes);
  EXPECT_FALSE(alloc_->owns(a.value()));
  alloc_->reset_peak();
  EXPECT_EQ(alloc_->stats().peak_bytes, s0.active_bytes);
}

TEST_F(CudaAllocatorTest, LimitRefusesAllocationsAndTheAllocatorKeepsWorking) {
  const size_t active = alloc_->stats().active_bytes;
  alloc_->set_limit(active + (8 << 20));
  EXPECT_EQ(alloc_->stats().limit_bytes, active + (8 << 20));
  Result<void*> big = alloc_->allocate(16 << 20);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("limit"), std::string::npos) << big.status().message();
  EXPECT_EQ(alloc_->stats().active_bytes, active);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // Through the shim: a clean error, then business as usual.
  const int64_t sizes[1] = {int64_t{16} << 20}, strides[1] = {1};
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(aoti_torch_empty_strided(1, sizes, strides, 0, 1, 0, &h), 1);
  EXPECT_NE(last_error_text().find("RESOURCE_EXHAUSTED"), std::string::npos) << last_error_text();

  Result<void*> small = alloc_->allocate(4 << 20);
  ASSERT_TRUE(small.ok()) << small.status().to_string();
  EXPECT_EQ(cudaMemset(small.value(), 0, 4 << 20), cudaSuccess);
  alloc_->deallocate(small.value(), 4 << 20);
  alloc_->set_limit(0);
  Result<void*> again = alloc_->allocate(16 << 20);
  ASSERT_TRUE(again.ok());
  alloc_->deallocate(again.value(), 16 << 20);
}

TEST_F(CudaAllocatorTest, DeviceOutOfMemoryIsResourceExhaustedAndRecoverable) {
  // Far more than any GPU has.
  Result<void*> huge = alloc_->allocate(size_t{1} << 50);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted) << huge.status().to_string();
  // No stale error for the model library's next check, and memory still works.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  Result<void*> ok = alloc_->allocate(1 << 20);
  ASSERT_TRUE(ok.ok());
  alloc_->deallocate(ok.value(), 1 << 20);
}

// The cache hands out its lowest address first, whatever order blocks came
// back in, so a model run reuses the addresses an earlier run had (what
// replays of library calls key on).
TEST_F(CudaAllocatorTest, CacheHandsOutLowestAddressFirst) {
  if (!alloc_->uses_pool()) GTEST_SKIP() << "this device has no memory pools: nothing is cached";
  const size_t n = 3 << 20;
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) {
    Result<void*> p = alloc_->allocate(n);
    ASSERT_TRUE(p.ok());
    blocks.push_back(p.value());
  }
  std::vector<void*> sorted = blocks;
  std::sort(sorted.begin(), sorted.end());
  for (int i : {2, 0, 3, 1}) alloc_->deallocate(blocks[i], n);
  for (int i = 0; i < 4; ++i) {
    Result<void*> p = alloc_->allocate(n);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p.value(), sorted[i]) << "allocation " << i;
  }
  for (void* p : sorted) alloc_->deallocate(p, n);
}

TEST_F(CudaAllocatorTest, TrimReturnsCachedMemory) {
  if (!alloc_->uses_pool()) GTEST_SKIP() << "this device has no memory pools: nothing is cached";
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) {
    Result<void*> p = alloc_->allocate(8 << 20);
    ASSERT_TRUE(p.ok());
    blocks.push_back(p.value());
  }
  for (void* p : blocks) alloc_->deallocate(p, 8 << 20);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const size_t cached = alloc_->stats().cached_bytes;
  EXPECT_GE(cached, size_t{8} << 20);
  alloc_->trim();
  // Only chunks that still hold a live block (from elsewhere) may stay.
  EXPECT_LT(alloc_->stats().cached_bytes, size_t{4} << 20);
  // Freed blocks are reused without growing the pool.
  Result<void*> p = alloc_->allocate(8 << 20);
  ASSERT_TRUE(p.ok());
  alloc_->deallocate(p.value(), 8 << 20);
}

// The default stream's blocks come from cudaMalloc (the host cache keeps
// them), so the pool, whose first allocation is slow, stays untouched by a
// model on it; a host's own stream still draws on the pool.
TEST_F(CudaAllocatorTest, DefaultStreamBlocksAreMallocedOtherStreamsPooled) {
  if (!alloc_->uses_pool()) GTEST_SKIP() << "this device has no memory pools";
  alloc_->trim();
  const size_t reserved = alloc_->pool_reserved_bytes();
  Result<void*> a = alloc_->allocate(size_t{8} << 20);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(alloc_->pool_reserved_bytes(), reserved);

  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  CUDAStreamGuardHandle g = nullptr;
  ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s, 0, &g), 0);
  Result<void*> b = alloc_->allocate(size_t{8} << 20);
  ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g), 0);
  ASSERT_TRUE(b.ok());
  EXPECT_GE(alloc_->pool_reserved_bytes(), reserved + (size_t{8} << 20));
  alloc_->deallocate(b.value(), size_t{8} << 20);
  alloc_->deallocate(a.value(), size_t{8} << 20);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  alloc_->trim();
  EXPECT_LT(alloc_->stats().cached_bytes, size_t{4} << 20);
}

TEST_F(CudaAllocatorTest, ZeroByteRequestsGetDistinctPointers) {
  std::set<void*> seen;
  std::vector<void*> held;
  for (int i = 0; i < 4; ++i) {
    Result<void*> p = alloc_->allocate(0);
    ASSERT_TRUE(p.ok());
    ASSERT_NE(p.value(), nullptr);
    EXPECT_TRUE(seen.insert(p.value()).second);
    held.push_back(p.value());
  }
  for (void* p : held) alloc_->deallocate(p, 0);
}

TEST_F(CudaAllocatorTest, BlocksAreFreedOnTheirOwnStream) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  CUDAStreamGuardHandle g = nullptr;
  ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s, 0, &g), 0);
  TensorImpl t = device_empty(DimVector{1 << 20}, DType::kFloat32);
  ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g), 0);
  // Released outside the guard: still freed in order on stream s.
  ASSERT_EQ(cudaMemsetAsync(t.data_ptr(), 0, t.nbytes(), s), cudaSuccess);
  t = TensorImpl();
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaAllocatorTest, ReleaseOfAForeignPointerIsNotFound) {
  int x = 0;
  Status s = alloc_->release(&x);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace aotirt
