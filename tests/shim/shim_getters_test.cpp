// Getter shims called through their C entry points: sizes/strides pointers
// and their lifetime, per-dim getters with negative and out-of-range dims,
// and null handles or outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::Handle;
using shim_test::expect_failure;
using shim_test::data_of;

TEST(ShimGettersTest, SizesAndStridesPointersStayValid) {
  for (int64_t ndim : {int64_t{3}, int64_t{9}}) {  // inline and heap-held dims
    SCOPED_TRACE(ndim);
    std::vector<int64_t> sizes, strides(static_cast<size_t>(ndim));
    for (int64_t i = 0; i < ndim; ++i) sizes.push_back(i % 3 + 1);
    int64_t s = 1;
    for (int64_t i = ndim - 1; i >= 0; --i) {
      strides[static_cast<size_t>(i)] = s;
      s *= sizes[static_cast<size_t>(i)];
    }
    Handle t;
    ASSERT_EQ(aoti_torch_empty_strided(ndim, sizes.data(), nullptr, 6, 0, 0, t.out()), 0);
    int64_t *sz = nullptr, *st = nullptr, *sz2 = nullptr;
    ASSERT_EQ(aoti_torch_get_sizes(t, &sz), 0);
    ASSERT_EQ(aoti_torch_get_strides(t, &st), 0);
    ASSERT_EQ(aoti_torch_get_sizes(t, &sz2), 0);
    EXPECT_EQ(sz, sz2);
    // Churn other handles, then read through the old pointers.
    for (int k = 0; k < 50; ++k) {
      Handle other, view;
      ASSERT_EQ(aoti_torch_empty_strided(ndim, sizes.data(), nullptr, 6, 0, 0, other.out()), 0);
      ASSERT_EQ(aoti_torch_new_tensor_handle(t, view.out()), 0);
    }
    EXPECT_EQ(std::vector<int64_t>(sz, sz + ndim), sizes);
    EXPECT_EQ(std::vector<int64_t>(st, st + ndim), strides);
  }
}

TEST(ShimGettersTest, PerDimGettersWithNegativeDims) {
  const int64_t sizes[] = {2, 3, 5};
  const int64_t strides[] = {1, 2, 6};
  Handle t;
  ASSERT_EQ(aoti_torch_empty_strided(3, sizes, strides, 6, 0, 0, t.out()), 0);
  for (int64_t d = -3; d < 3; ++d) {
    int64_t size = -1, stride = -1;
    ASSERT_EQ(aoti_torch_get_size(t, d, &size), 0) << d;
    ASSERT_EQ(aoti_torch_get_stride(t, d, &stride), 0) << d;
    EXPECT_EQ(size, sizes[(d + 3) % 3]) << d;
    EXPECT_EQ(stride, strides[(d + 3) % 3]) << d;
  }
  int64_t v = 0;
  for (int64_t d : {int64_t{3}, int64_t{4}, int64_t{-4}, int64_t{100}, INT64_MIN}) {
    clear_last_error();
    expect_failure(aoti_torch_get_size(t, d, &v), "out of range for a 3-d tensor");
    EXPECT_EQ(get_last_error().code(), StatusCode::kOutOfRange);
    clear_last_error();
    expect_failure(aoti_torch_get_stride(t, d, &v), "out of range for a 3-d tensor");
    // The message names the dim the caller passed.
    EXPECT_NE(get_last_error().message().find("dim " + std::to_string(d) + " "), std::string::npos)
        << get_last_error().message();
  }
}

TEST(ShimGettersTest, ZeroDimTensorHasNoDims) {
  Handle t;
  ASSERT_EQ(aoti_torch_empty_strided(0, nullptr, nullptr, 6, 0, 0, t.out()), 0);
  int64_t v = 0;
  clear_last_error();
  expect_failure(aoti_torch_get_size(t, 0, &v), "out of range for a 0-d tensor");
  expect_failure(aoti_torch_get_stride(t, -1, &v), "out of range");
  int64_t* sizes = nullptr;
  ASSERT_EQ(aoti_torch_get_sizes(t, &sizes), 0);
  EXPECT_NE(sizes, nullptr);
}

TEST(ShimGettersTest, EveryGetterOnAStridedView) {
  Handle base, view;
  const int64_t n = 64;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, aoti_torch_dtype_float64(), 0, 0, base.out()), 0);
  const int64_t sizes[] = {3, 4};
  const int64_t strides[] = {1, 5};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 10, view.out()), 0);
  int64_t dim = 0, numel = 0, storage = 0, storage_numel = 0, offset = 0;
  int32_t dtype = 0, dev_type = -1, dev_index = 0, layout = -1;
  bool contiguous = true;
  void *data = nullptr, *base_data = nullptr;
  ASSERT_EQ(aoti_torch_get_dim(view, &dim), 0);
  ASSERT_EQ(aoti_torch_get_numel(view, &numel), 0);
  ASSERT_EQ(aoti_torch_get_storage_size(view, &storage), 0);
  ASSERT_EQ(aoti_torch_get_storage_numel(view, &storage_numel), 0);
  ASSERT_EQ(aoti_torch_get_storage_offset(view, &offset), 0);
  ASSERT_EQ(aoti_torch_get_dtype(view, &dtype), 0);
  ASSERT_EQ(aoti_torch_get_device_type(view, &dev_type), 0);
  ASSERT_EQ(aoti_torch_get_device_index(view, &dev_index), 0);
  ASSERT_EQ(aoti_torch_get_layout(view, &layout), 0);
  ASSERT_EQ(aoti_torch_is_contiguous(view, &contiguous), 0);
  ASSERT_EQ(aoti_torch_get_data_ptr(view, &data), 0);
  ASSERT_EQ(aoti_torch_get_data_ptr(base, &base_data), 0);
  EXPECT_EQ(dim, 2);
  EXPECT_EQ(numel, 12);
  EXPECT_EQ(storage, 64 * 8);
  EXPECT_EQ(storage_numel, 64);
  EXPECT_EQ(offset, 10);
  EXPECT_EQ(dtype, aoti_torch_dtype_float64());
  EXPECT_EQ(dev_type, aoti_torch_device_type_cpu());
  EXPECT_EQ(dev_index, -1);
  EXPECT_EQ(layout, aoti_torch_layout_strided());
  EXPECT_FALSE(contiguous);
  EXPECT_EQ(static_cast<char*>(data), static_cast<char*>(base_data) + 80);
}

TEST(ShimGettersTest, NullHandlesAndOutputsAreErrors) {
  Handle t;
  const int64_t n = 4;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, 6, 0, 0, t.out()), 0);
  int64_t i64 = 0;
  int32_t i32 = 0;
  int64_t* ptr = nullptr;
  void* data = nullptr;
  bool flag = false;
  clear_last_error();
  expect_failure(aoti_torch_get_data_ptr(nullptr, &data), "null tensor handle");
  expect_failure(aoti_torch_get_storage_size(nullptr, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_storage_numel(nullptr, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_dim(nullptr, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_numel(nullptr, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_sizes(nullptr, &ptr), "null tensor handle");
  expect_failure(aoti_torch_get_strides(nullptr, &ptr), "null tensor handle");
  expect_failure(aoti_torch_get_size(nullptr, 0, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_stride(nullptr, 0, &i64), "null tensor handle");
  expect_failure(aoti_torch_get_dtype(nullptr, &i32), "null tensor handle");
  expect_failure(aoti_torch_get_device_type(nullptr, &i32), "null tensor handle");
  expect_failure(aoti_torch_get_device_index(nullptr, &i32), "null tensor handle");
  expect_failure(aoti_torch_get_layout(nullptr, &i32), "null tensor handle");
  expect_failure(aoti_torch_get_storage_offset(nullptr, &i64), "null tensor handle");
  expect_failure(aoti_torch_is_contiguous(nullptr, &flag), "null tensor handle");
  expect_failure(aoti_torch_get_data_ptr(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_storage_size(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_storage_numel(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_dim(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_numel(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_sizes(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_strides(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_size(t, 0, nullptr), "output pointer");
  expect_failure(aoti_torch_get_stride(t, 0, nullptr), "output pointer");
  expect_failure(aoti_torch_get_dtype(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_device_type(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_device_index(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_layout(t, nullptr), "output pointer");
  expect_failure(aoti_torch_get_storage_offset(t, nullptr), "output pointer");
  expect_failure(aoti_torch_is_contiguous(t, nullptr), "output pointer");
}

TEST(ShimGettersTest, ErrorsDoNotLeakAcrossThreads) {
  clear_last_error();
  int64_t v = 0;
  EXPECT_EQ(aoti_torch_get_dim(nullptr, &v), 1);
  EXPECT_FALSE(get_last_error().ok());
  bool other_thread_clean = false;
  std::thread([&] { other_thread_clean = get_last_error().ok(); }).join();
  EXPECT_TRUE(other_thread_clean);
  clear_last_error();
}

}  // namespace
}  // namespace aotirt
