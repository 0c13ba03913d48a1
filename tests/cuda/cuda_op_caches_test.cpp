// The caches the CUDA ops keep belong to the device: bounded (least recently
// used out first, entries in use kept alive), and emptied when the last model
// on the device unloads. The loop test runs GEMMs and convolutions of several
// shapes on cuda:0 as a model would, "unloads" it, and checks that every
// cache, and the allocator's cached memory, comes back to empty each time.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "cuda_test_util.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace {

using namespace cuda_test;

struct Value {
  explicit Value(int v) : v(v) {}
  int v;
};

TEST(CudaPlanCacheTest, BoundedLeastRecentlyUsedFirst) {
  CudaPlanCache<int, Value> cache("test", 2);
  int made = 0;
  auto make = [&](int v) {
    return [&made, v]() -> Result<std::shared_ptr<Value>> {
      ++made;
      return std::make_shared<Value>(v);
    };
  };
  ASSERT_TRUE(cache.get(1, make(1)).ok());
  ASSERT_TRUE(cache.get(2, make(2)).ok());
  ASSERT_TRUE(cache.get(1, make(1)).ok());  // hit: 1 is the most recent now
  EXPECT_EQ(made, 2);
  Result<std::shared_ptr<Value>> three = cache.get(3, make(3));  // evicts 2
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(cache.size(), 2u);
  ASSERT_TRUE(cache.get(1, make(1)).ok());
  EXPECT_EQ(made, 3);
  ASSERT_TRUE(cache.get(2, make(2)).ok());  // made again
  EXPECT_EQ(made, 4);
  // An entry in use outlives its eviction and a clear.
  std::shared_ptr<Value> held = *three;
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(held->v, 3);
  // A failed make keeps nothing; a null entry ("none takes it") is kept.
  Result<std::shared_ptr<Value>> bad =
      cache.get(7, []() -> Result<std::shared_ptr<Value>> { return Status(StatusCode::kInternal, "no"); });
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(cache.get(8, []() -> Result<std::shared_ptr<Value>> { return std::shared_ptr<Value>(); }).ok());
  EXPECT_EQ(cache.size(), 1u);
}

TEST(CudaOpCachesTest, OneCacheOfEachTypeAndAClearEmptiesAll) {
  CudaOpCaches caches;
  using A = CudaPlanCache<int, Value>;
  A& a = caches.get<A>([] { return std::make_unique<A>("a", 8); });
  EXPECT_EQ(&caches.get<A>([] { return std::make_unique<A>("again", 8); }), &a);
  ASSERT_TRUE(a.get(1, [] { return Result<std::shared_ptr<Value>>(std::make_shared<Value>(1)); }).ok());
  EXPECT_EQ(caches.entries(), 1u);
  ASSERT_EQ(caches.sizes().size(), 1u);
  EXPECT_EQ(caches.sizes()[0].first, "a");
  caches.clear();
  EXPECT_EQ(caches.entries(), 0u);
}

class CudaOpCachesLoopTest : public CudaTest {};

// GEMMs and convolutions of a few shapes, as one model's runs would make them.
void run_model_like_work(int round) {
  for (int64_t n : {int64_t{8}, int64_t{96}, int64_t{256}}) {
    TensorImpl a = to_device(host_random(DimVector{n, 64 + round}, DType::kFloat32, 1));
    TensorImpl b = to_device(host_random(DimVector{64 + round, 48}, DType::kFloat32, 2));
    TensorImpl out = device_empty(DimVector{n, 48}, DType::kFloat32);
    ASSERT_EQ(aoti_torch_cuda_mm_out(handle(out), handle(a), handle(b)), 0) << last_error_text();
    TensorImpl a16 = to_device(host_random(DimVector{n, 64}, DType::kBFloat16, 3));
    TensorImpl b16 = to_device(host_random(DimVector{64, 32}, DType::kBFloat16, 4));
    TensorImpl out16 = device_empty(DimVector{n, 32}, DType::kBFloat16);
    ASSERT_EQ(aoti_torch_cuda_mm_out(handle(out16), handle(a16), handle(b16)), 0) << last_error_text();
  }
  if (!cudnn_unavailable_reason().empty()) return;
  // A grouped convolution: cuDNN's path.
  TensorImpl x = to_device(host_random(DimVector{2, 8, 12, 12}, DType::kFloat32, 5));
  TensorImpl w = to_device(host_random(DimVector{8, 2, 3, 3}, DType::kFloat32, 6));
  const int64_t stride[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1}, outpad[2] = {0, 0};
  AtenTensorHandle y = nullptr;
  ASSERT_EQ(aoti_torch_cuda_convolution(handle(x), handle(w), nullptr, stride, 2, pad, 2, dil, 2, 0, outpad, 2, 4, &y),
            0)
      << last_error_text();
  take(y);
}

TEST_F(CudaOpCachesLoopTest, CachesComeBackEmptyAfterEachLastUnload) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok()) << dev.status().to_string();
  CudaDevice& d = **dev;
  if (d.models() != 0) GTEST_SKIP() << "another model is loaded on cuda:0 in this process";
  d.release_caches();
  ASSERT_EQ(d.op_caches().entries(), 0u);
  for (int round = 0; round < 5; ++round) {
    d.add_model();
    run_model_like_work(round);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_GT(d.op_caches().entries(), 0u) << "round " << round;
    d.remove_model();
    EXPECT_EQ(d.op_caches().entries(), 0u) << "round " << round;
    for (const auto& s : d.op_caches().sizes()) EXPECT_EQ(s.second, 0u) << s.first;
    EXPECT_EQ(d.allocator().stats().cached_bytes, 0u) << "round " << round;
  }
}

}  // namespace
}  // namespace aotirt
