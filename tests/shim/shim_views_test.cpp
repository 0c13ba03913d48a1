// View shims called through their C entry points: _reinterpret_tensor,
// as_strided and _alloc_from_pool, including the bounds they must enforce.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/status.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::Handle;
using shim_test::expect_failure;
using shim_test::data_of;

// A float32 tensor [n] holding 0, 1, ..., n-1.
void make_iota(int64_t n, Handle* out) {
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, aoti_torch_dtype_float32(), 0, 0, out->out()), 0);
  float* p = data_of<float>(*out);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
}

TEST(ShimReinterpretTest, OffsetCountsElementsAndWritesReachTheBase) {
  Handle base, view;
  make_iota(12, &base);
  const int64_t sizes[] = {2, 3};
  const int64_t strides[] = {3, 1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 4, view.out()), 0);
  float* b = data_of<float>(base);
  float* v = data_of<float>(view);
  EXPECT_EQ(v, b + 4);
  EXPECT_EQ(v[1 * 3 + 2], 9.0f);
  int64_t offset = 0, storage = 0;
  ASSERT_EQ(aoti_torch_get_storage_offset(view, &offset), 0);
  EXPECT_EQ(offset, 4);
  ASSERT_EQ(aoti_torch_get_storage_size(view, &storage), 0);
  EXPECT_EQ(storage, 48);
  v[0] = 100.0f;
  EXPECT_EQ(b[4], 100.0f);
  // A view of a view: offsets are absolute in the storage.
  Handle inner;
  const int64_t one[] = {2};
  const int64_t unit[] = {1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(view, 1, one, unit, 10, inner.out()), 0);
  EXPECT_EQ(data_of<float>(inner), b + 10);
}

TEST(ShimReinterpretTest, ViewKeepsTheStorageAlive) {
  AtenTensorHandle base = nullptr;
  const int64_t n = 8;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, 6, 0, 0, &base), 0);
  data_of<float>(base)[7] = 7.0f;
  Handle view;
  const int64_t sizes[] = {1};
  const int64_t strides[] = {1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 1, sizes, strides, 7, view.out()), 0);
  ASSERT_EQ(aoti_torch_delete_tensor_object(base), 0);
  EXPECT_EQ(data_of<float>(view)[0], 7.0f);
}

TEST(ShimReinterpretTest, OutOfBoundsViewsAreRefused) {
  Handle base;
  make_iota(12, &base);
  AtenTensorHandle v = nullptr;
  const int64_t sizes[] = {2, 3};
  const int64_t strides[] = {3, 1};
  clear_last_error();
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 7, &v), "needs 52 bytes but the storage has 48");
  EXPECT_EQ(get_last_error().code(), StatusCode::kOutOfRange);
  const int64_t big[] = {4, 4};
  const int64_t big_strides[] = {4, 1};
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, big, big_strides, 0, &v), "storage has 48");
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, -1, &v), "negative storage offset");
  // A negative stride that walks below the start of the storage.
  const int64_t n3[] = {3};
  const int64_t back[] = {-1};
  expect_failure(aoti_torch__reinterpret_tensor(base, 1, n3, back, 1, &v), "before the start");
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, sizes, nullptr, 0, &v), "strides is null");
  // Sizes so large that the extent would wrap around to a small number.
  const int64_t huge[] = {int64_t{1} << 62, 4};
  const int64_t huge_strides[] = {4, 1};
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, huge, huge_strides, 0, &v), "larger than any storage");
  const int64_t wrap[] = {3, int64_t{1} << 61};
  const int64_t wrap_strides[] = {int64_t{1} << 62, 2};
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, wrap, wrap_strides, 0, &v), "larger than any storage");
  expect_failure(aoti_torch__reinterpret_tensor(nullptr, 2, sizes, strides, 0, &v), "null tensor handle");
  expect_failure(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 0, nullptr), "output pointer");
  EXPECT_EQ(v, nullptr);
  // The last element exactly at the end is fine, and so is an empty view anywhere.
  Handle ok, empty;
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 6, ok.out()), 0);
  EXPECT_EQ(data_of<float>(ok)[5], 11.0f);
  const int64_t zero[] = {0, 3};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, zero, strides, 12, empty.out()), 0);
}

TEST(ShimReinterpretTest, ReversedViewWithinBounds) {
  Handle base, rev;
  make_iota(5, &base);
  const int64_t n[] = {5};
  const int64_t back[] = {-1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 1, n, back, 4, rev.out()), 0);
  float* p = data_of<float>(rev);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p[-i], 4.0f - static_cast<float>(i));
}

TEST(ShimReinterpretTest, ZeroDimAndManyDims) {
  Handle base, scalar, deep;
  make_iota(256, &base);
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 0, nullptr, nullptr, 200, scalar.out()), 0);
  EXPECT_EQ(data_of<float>(scalar)[0], 200.0f);
  int64_t dim = -1;
  ASSERT_EQ(aoti_torch_get_dim(scalar, &dim), 0);
  EXPECT_EQ(dim, 0);
  const int64_t sizes[] = {2, 2, 2, 2, 2, 2, 2, 2};
  const int64_t strides[] = {128, 64, 32, 16, 8, 4, 2, 1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 8, sizes, strides, 0, deep.out()), 0);
  int64_t* got = nullptr;
  ASSERT_EQ(aoti_torch_get_sizes(deep, &got), 0);
  EXPECT_EQ(std::vector<int64_t>(got, got + 8), std::vector<int64_t>(sizes, sizes + 8));
  ASSERT_EQ(aoti_torch_get_strides(deep, &got), 0);
  EXPECT_EQ(std::vector<int64_t>(got, got + 8), std::vector<int64_t>(strides, strides + 8));
}

TEST(ShimAsStridedTest, ViewOfTheSameRank) {
  Handle base, view;
  const int64_t sizes[] = {3, 4};
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, 6, 0, 0, base.out()), 0);
  float* b = data_of<float>(base);
  for (int i = 0; i < 12; ++i) b[i] = static_cast<float>(i);
  const int64_t vs[] = {2, 2};
  const int64_t vst[] = {1, 4};  // transposed top-left block
  ASSERT_EQ(aoti_torch_as_strided(base, vs, vst, view.out()), 0);
  EXPECT_EQ(data_of<float>(view), b);
  int64_t s = 0;
  ASSERT_EQ(aoti_torch_get_stride(view, 0, &s), 0);
  EXPECT_EQ(s, 1);
  ASSERT_EQ(aoti_torch_get_stride(view, 1, &s), 0);
  EXPECT_EQ(s, 4);
  // The input's storage offset carries over.
  Handle shifted, from_shifted;
  const int64_t ss[] = {2, 4};
  const int64_t sst[] = {4, 1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, ss, sst, 4, shifted.out()), 0);
  ASSERT_EQ(aoti_torch_as_strided(shifted, vs, vst, from_shifted.out()), 0);
  EXPECT_EQ(data_of<float>(from_shifted), b + 4);
  int64_t offset = 0;
  ASSERT_EQ(aoti_torch_get_storage_offset(from_shifted, &offset), 0);
  EXPECT_EQ(offset, 4);
  AtenTensorHandle bad = nullptr;
  const int64_t too_big[] = {4, 4};
  clear_last_error();
  expect_failure(aoti_torch_as_strided(shifted, too_big, sst, &bad), "storage has 48");
  expect_failure(aoti_torch_as_strided(nullptr, vs, vst, &bad), "null tensor handle");
  EXPECT_EQ(bad, nullptr);
}

TEST(ShimAllocFromPoolTest, ByteOffsetAndDTypeChange) {
  Handle pool, f32, i64, bf16;
  const int64_t pool_bytes = 1024;
  ASSERT_EQ(aoti_torch_empty_strided(1, &pool_bytes, nullptr, aoti_torch_dtype_uint8(), 0, 0, pool.out()), 0);
  uint8_t* base = data_of<uint8_t>(pool);
  std::memset(base, 0, 1024);
  const int64_t sizes[] = {4, 4};
  const int64_t strides[] = {4, 1};
  ASSERT_EQ(aoti_torch__alloc_from_pool(pool, 64, aoti_torch_dtype_float32(), 2, sizes, strides, f32.out()), 0);
  float* f = data_of<float>(f32);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(f), base + 64);
  int64_t offset = 0;
  ASSERT_EQ(aoti_torch_get_storage_offset(f32, &offset), 0);
  EXPECT_EQ(offset, 16);  // elements of the new dtype
  int32_t dtype = -1;
  ASSERT_EQ(aoti_torch_get_dtype(f32, &dtype), 0);
  EXPECT_EQ(dtype, 6);
  f[0] = 1.0f;
  EXPECT_EQ(std::memcmp(base + 64, f, 4), 0);
  EXPECT_EQ(base[64 + 3], 0x3F);  // 1.0f = 0x3F800000, little-endian
  int64_t storage_numel = 0;
  ASSERT_EQ(aoti_torch_get_storage_numel(f32, &storage_numel), 0);
  EXPECT_EQ(storage_numel, 256);

  const int64_t n[] = {8};
  ASSERT_EQ(aoti_torch__alloc_from_pool(pool, 512, aoti_torch_dtype_int64(), 1, n, nullptr, i64.out()), 0);
  EXPECT_EQ(data_of<uint8_t>(i64), base + 512);
  ASSERT_EQ(aoti_torch__alloc_from_pool(pool, 2, aoti_torch_dtype_bfloat16(), 1, n, nullptr, bf16.out()), 0);
  EXPECT_EQ(data_of<uint8_t>(bf16), base + 2);

  // A pool that is itself a view with an offset.
  Handle sub, from_sub;
  const int64_t half[] = {512};
  const int64_t unit[] = {1};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(pool, 1, half, unit, 8, sub.out()), 0);
  ASSERT_EQ(aoti_torch__alloc_from_pool(sub, 8, aoti_torch_dtype_float32(), 1, n, nullptr, from_sub.out()), 0);
  EXPECT_EQ(data_of<uint8_t>(from_sub), base + 16);
  ASSERT_EQ(aoti_torch_get_storage_offset(from_sub, &offset), 0);
  EXPECT_EQ(offset, 4);
}

TEST(ShimAllocFromPoolTest, BadRequestsAreRefused) {
  Handle pool;
  const int64_t pool_bytes = 256;
  ASSERT_EQ(aoti_torch_empty_strided(1, &pool_bytes, nullptr, aoti_torch_dtype_uint8(), 0, 0, pool.out()), 0);
  const int64_t n[] = {16};
  AtenTensorHandle t = nullptr;
  clear_last_error();
  expect_failure(aoti_torch__alloc_from_pool(pool, 6, aoti_torch_dtype_float32(), 1, n, nullptr, &t), "not a multiple");
  expect_failure(aoti_torch__alloc_from_pool(pool, -4, aoti_torch_dtype_float32(), 1, n, nullptr, &t), "pool offset");
  expect_failure(aoti_torch__alloc_from_pool(pool, 208, aoti_torch_dtype_float32(), 1, n, nullptr, &t), "storage has 256");
  expect_failure(aoti_torch__alloc_from_pool(pool, 0, 31, 1, n, nullptr, &t), "invalid dtype code 31");
  expect_failure(aoti_torch__alloc_from_pool(nullptr, 0, 6, 1, n, nullptr, &t), "null tensor handle");
  expect_failure(aoti_torch__alloc_from_pool(pool, 0, 6, 1, n, nullptr, nullptr), "output pointer");
  EXPECT_EQ(t, nullptr);
  Handle last;
  ASSERT_EQ(aoti_torch__alloc_from_pool(pool, 192, aoti_torch_dtype_float32(), 1, n, nullptr, last.out()), 0);
}

}  // namespace
}  // namespace aotirt
