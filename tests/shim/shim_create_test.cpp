// Tensor creation shims called through their C entry points: empty_strided,
// create_tensor_from_blob(_v2), new_tensor_handle, new_uninitialized_tensor,
// assign_tensors(_out) and delete_tensor_object.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "device/device.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::Handle;
using shim_test::expect_failure;
using shim_test::data_of;

const int32_t kEveryDTypeCode[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 23, 24, 25, 26, 27, 28, 29};

size_t active_cpu_bytes() {
  return get_device(DeviceId{}).value()->allocator().stats().active_bytes;
}

TEST(ShimEmptyStridedTest, ContiguousEveryDType) {
  const int64_t sizes[] = {3, 4};
  for (int32_t code : kEveryDTypeCode) {
    SCOPED_TRACE(code);
    Handle t;
    ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, code, aoti_torch_device_type_cpu(), 0, t.out()), 0);
    int32_t dtype = -1, dev_type = -1, dev_index = 0;
    int64_t dim = 0, numel = 0, storage = 0;
    int64_t* strides = nullptr;
    void* data = nullptr;
    bool contiguous = false;
    ASSERT_EQ(aoti_torch_get_dtype(t, &dtype), 0);
    EXPECT_EQ(dtype, code);
    ASSERT_EQ(aoti_torch_get_dim(t, &dim), 0);
    EXPECT_EQ(dim, 2);
    ASSERT_EQ(aoti_torch_get_numel(t, &numel), 0);
    EXPECT_EQ(numel, 12);
    ASSERT_EQ(aoti_torch_get_strides(t, &strides), 0);
    EXPECT_EQ(strides[0], 4);
    EXPECT_EQ(strides[1], 1);
    ASSERT_EQ(aoti_torch_get_storage_size(t, &storage), 0);
    EXPECT_EQ(storage, static_cast<int64_t>(12 * aoti_torch_dtype_element_size(code)));
    ASSERT_EQ(aoti_torch_is_contiguous(t, &contiguous), 0);
    EXPECT_TRUE(contiguous);
    ASSERT_EQ(aoti_torch_get_device_type(t, &dev_type), 0);
    EXPECT_EQ(dev_type, 0);
    ASSERT_EQ(aoti_torch_get_device_index(t, &dev_index), 0);
    EXPECT_EQ(dev_index, -1);
    ASSERT_EQ(aoti_torch_get_data_ptr(t, &data), 0);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
    std::memset(data, 0x5A, static_cast<size_t>(storage));
  }
}

TEST(ShimEmptyStridedTest, GivenStrides) {
  const int64_t sizes[] = {3, 4};
  const int64_t col_major[] = {1, 3};
  const int64_t padded[] = {8, 1};
  Handle a, b;
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, col_major, 6, 0, 0, a.out()), 0);
  int64_t* s = nullptr;
  ASSERT_EQ(aoti_torch_get_strides(a, &s), 0);
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[1], 3);
  bool contiguous = true;
  ASSERT_EQ(aoti_torch_is_contiguous(a, &contiguous), 0);
  EXPECT_FALSE(contiguous);
  int64_t storage = 0;
  ASSERT_EQ(aoti_torch_get_storage_size(a, &storage), 0);
  EXPECT_EQ(storage, 48);
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, padded, 7, 0, 0, b.out()), 0);
  ASSERT_EQ(aoti_torch_get_storage_size(b, &storage), 0);
  EXPECT_EQ(storage, (2 * 8 + 3 + 1) * 8);
  int64_t storage_numel = 0;
  ASSERT_EQ(aoti_torch_get_storage_numel(b, &storage_numel), 0);
  EXPECT_EQ(storage_numel, 20);
}

TEST(ShimEmptyStridedTest, ZeroDimAndEmptyTensors) {
  Handle scalar, empty, pinned;
  ASSERT_EQ(aoti_torch_empty_strided(0, nullptr, nullptr, 6, 0, 0, scalar.out()), 0);
  int64_t numel = 0, storage = 0, dim = -1;
  ASSERT_EQ(aoti_torch_get_numel(scalar, &numel), 0);
  EXPECT_EQ(numel, 1);
  ASSERT_EQ(aoti_torch_get_dim(scalar, &dim), 0);
  EXPECT_EQ(dim, 0);
  ASSERT_EQ(aoti_torch_get_storage_size(scalar, &storage), 0);
  EXPECT_EQ(storage, 4);
  const int64_t sizes[] = {0, 5};
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, 6, 0, 0, empty.out()), 0);
  ASSERT_EQ(aoti_torch_get_numel(empty, &numel), 0);
  EXPECT_EQ(numel, 0);
  ASSERT_EQ(aoti_torch_get_storage_size(empty, &storage), 0);
  EXPECT_EQ(storage, 0);
  const int64_t one[] = {16};
  ASSERT_EQ(aoti_torch_empty_strided_pinned(1, one, nullptr, 15, 0, 0, pinned.out()), 0);
  int32_t dtype = 0;
  ASSERT_EQ(aoti_torch_get_dtype(pinned, &dtype), 0);
  EXPECT_EQ(dtype, 15);
}

TEST(ShimEmptyStridedTest, BadArgumentsReturnOneWithAMessage) {
  const int64_t sizes[] = {2, 3};
  const int64_t neg[] = {2, -1};
  const int64_t neg_stride[] = {-3, 1};
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
  AtenTensorHandle t = nullptr;
  for (int32_t bad_dtype : {-1, 12, 13, 14, 16, 22, 30, 100}) {
    clear_last_error();
    expect_failure(aoti_torch_empty_strided(2, sizes, nullptr, bad_dtype, 0, 0, &t),
                   "invalid dtype code " + std::to_string(bad_dtype));
    EXPECT_EQ(t, nullptr);
  }
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, sizes, nullptr, 6, 99, 0, &t), "device type 99");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, neg, nullptr, 6, 0, 0, &t), "negative size -1 in dim 1");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, sizes, neg_stride, 6, 0, 0, &t), "negative stride");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(-1, sizes, nullptr, 6, 0, 0, &t), "bad ndim -1");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, nullptr, nullptr, 6, 0, 0, &t), "sizes is null");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, sizes, nullptr, 6, 0, 0, nullptr), "output pointer");
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(2, huge, nullptr, 6, 0, 0, &t), "too large");
  EXPECT_EQ(t, nullptr);
  // Every message names the entry point.
  EXPECT_EQ(get_last_error().message().rfind("aoti_torch_empty_strided", 0), 0u) << get_last_error().message();
}

TEST(ShimEmptyStridedTest, CudaWithoutACudaBuildIsAnError) {
  if (device_count(DeviceType::kCuda).ok()) GTEST_SKIP() << "this build has CUDA";
  const int64_t sizes[] = {2};
  AtenTensorHandle t = nullptr;
  clear_last_error();
  expect_failure(aoti_torch_empty_strided(1, sizes, nullptr, 6, aoti_torch_device_type_cuda(), 0, &t), "CUDA");
  EXPECT_EQ(get_last_error().code(), StatusCode::kUnavailable);
}

TEST(ShimEmptyStridedTest, DeletingReturnsTheMemory) {
  const size_t before = active_cpu_bytes();
  const int64_t sizes[] = {1000};
  {
    std::vector<Handle> handles(10);
    for (auto& h : handles) ASSERT_EQ(aoti_torch_empty_strided(1, sizes, nullptr, 6, 0, 0, h.out()), 0);
    EXPECT_GE(active_cpu_bytes(), before + 10 * 4000);
  }
  EXPECT_EQ(active_cpu_bytes(), before);
  clear_last_error();
  expect_failure(aoti_torch_delete_tensor_object(nullptr), "null tensor handle");
}

TEST(ShimEmptyStridedTest, ConcurrentCreateShareAndDelete) {
  const size_t before = active_cpu_bytes();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 500; ++i) {
        const int64_t sizes[] = {1 + (i * 7 + t) % 300};
        AtenTensorHandle a = nullptr, b = nullptr;
        if (aoti_torch_empty_strided(1, sizes, nullptr, 6, 0, 0, &a) != 0 ||
            aoti_torch_new_tensor_handle(a, &b) != 0) {
          ++failures[t];
          continue;
        }
        void* p = nullptr;
        aoti_torch_get_data_ptr(b, &p);
        static_cast<float*>(p)[sizes[0] - 1] = 1.0f;
        // Delete in either order: the last one frees the storage.
        if (i % 2) std::swap(a, b);
        aoti_torch_delete_tensor_object(a);
        aoti_torch_delete_tensor_object(b);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  EXPECT_EQ(active_cpu_bytes(), before);
}

TEST(ShimFromBlobTest, BorrowsTheCallersMemory) {
  // Stack memory: if the runtime ever freed it, the test would crash.
  alignas(16) float buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = static_cast<float>(i);
  const int64_t sizes[] = {3, 4};
  const int64_t strides[] = {4, 1};
  {
    Handle t;
    ASSERT_EQ(aoti_torch_create_tensor_from_blob(buf, 2, sizes, strides, 2, 6, 0, 0, t.out()), 0);
    void* data = nullptr;
    ASSERT_EQ(aoti_torch_get_data_ptr(t, &data), 0);
    EXPECT_EQ(data, buf + 2);
    int64_t offset = -1, storage = 0;
    ASSERT_EQ(aoti_torch_get_storage_offset(t, &offset), 0);
    EXPECT_EQ(offset, 2);
    ASSERT_EQ(aoti_torch_get_storage_size(t, &storage), 0);
    EXPECT_EQ(storage, 14 * 4);
    static_cast<float*>(data)[0] = 99.0f;  // writes land in the caller's buffer
    Handle copy;
    ASSERT_EQ(aoti_torch_new_tensor_handle(t, copy.out()), 0);
  }
  EXPECT_EQ(buf[2], 99.0f);
  EXPECT_EQ(buf[15], 15.0f);
}

TEST(ShimFromBlobTest, V2WithStridedLayout) {
  std::vector<int64_t> buf(6, 7);
  const int64_t sizes[] = {2, 3};
  Handle t;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob_v2(buf.data(), 2, sizes, nullptr, 0, 4, 0, 0, t.out(),
                                                  aoti_torch_layout_strided(), nullptr, 0),
            0);
  int64_t* strides = nullptr;
  ASSERT_EQ(aoti_torch_get_strides(t, &strides), 0);
  EXPECT_EQ(strides[0], 3);
  EXPECT_EQ(strides[1], 1);
  int32_t dtype = 0;
  ASSERT_EQ(aoti_torch_get_dtype(t, &dtype), 0);
  EXPECT_EQ(dtype, 4);
}

TEST(ShimFromBlobTest, RefusesOtherLayoutsAndBadArguments) {
  float buf[8] = {0};
  const int64_t sizes[] = {2, 4};
  const int64_t empty_sizes[] = {0, 4};
  const uint8_t meta[4] = {1, 2, 3, 4};
  AtenTensorHandle t = nullptr;
  clear_last_error();
  // _mkldnn (frozen oneDNN weights) needs its descriptor, and only on the CPU.
  expect_failure(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, nullptr, 0, 6, 0, 0, &t,
                                                       aoti_torch_layout__mkldnn(), nullptr, 0),
                 "descriptor");
  EXPECT_EQ(get_last_error().code(), StatusCode::kInvalidArgument);
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, nullptr, 0, 6, 1, 0, &t,
                                                       aoti_torch_layout__mkldnn(), meta, 4),
                 "only on the CPU");
  EXPECT_EQ(get_last_error().code(), StatusCode::kUnimplemented);
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, nullptr, 0, 6, 0, 0, &t, 9, meta, 4),
                 "layout 9");
  EXPECT_EQ(get_last_error().code(), StatusCode::kUnimplemented);
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, nullptr, 0, 6, 0, 0, &t,
                                                       aoti_torch_layout_sparse_coo(), nullptr, 0),
                 "layout 1");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob_v2(buf, 2, sizes, nullptr, 0, 6, 0, 0, &t, 0, meta, 4),
                 "opaque");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob(nullptr, 2, sizes, nullptr, 0, 6, 0, 0, &t), "data is null");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob(buf, 2, sizes, nullptr, -1, 6, 0, 0, &t), "negative storage offset");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob(buf, 2, sizes, nullptr, 0, 77, 0, 0, &t), "invalid dtype code 77");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob(buf, 2, sizes, nullptr, 0, 6, 99, 0, &t), "device type 99");
  clear_last_error();
  expect_failure(aoti_torch_create_tensor_from_blob(buf, 2, sizes, nullptr, 0, 6, 0, 0, nullptr), "output pointer");
  EXPECT_EQ(t, nullptr);
  // A null pointer is fine for an empty tensor.
  Handle e;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(nullptr, 2, empty_sizes, nullptr, 0, 6, 0, 0, e.out()), 0);
}

TEST(ShimHandleTest, NewHandleSharesStorageThatOutlivesTheOriginal) {
  const size_t before = active_cpu_bytes();
  const int64_t sizes[] = {256};
  AtenTensorHandle orig = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(1, sizes, nullptr, 6, 0, 0, &orig), 0);
  Handle copy;
  ASSERT_EQ(aoti_torch_new_tensor_handle(orig, copy.out()), 0);
  EXPECT_NE(copy.h, orig);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(orig, &a), 0);
  ASSERT_EQ(aoti_torch_get_data_ptr(copy, &b), 0);
  EXPECT_EQ(a, b);
  static_cast<float*>(a)[10] = 3.5f;
  ASSERT_EQ(aoti_torch_delete_tensor_object(orig), 0);
  EXPECT_GT(active_cpu_bytes(), before) << "the storage must survive while the copy lives";
  EXPECT_EQ(static_cast<float*>(b)[10], 3.5f);
  static_cast<float*>(b)[255] = 1.0f;  // still writable
  int64_t numel = 0;
  ASSERT_EQ(aoti_torch_get_numel(copy, &numel), 0);
  EXPECT_EQ(numel, 256);
  clear_last_error();
  AtenTensorHandle none = nullptr;
  expect_failure(aoti_torch_new_tensor_handle(nullptr, &none), "null tensor handle");
  expect_failure(aoti_torch_new_tensor_handle(copy, nullptr), "output pointer");
}

TEST(ShimHandleTest, NewHandleReleasesStorageWhenBothAreDeleted) {
  const size_t before = active_cpu_bytes();
  const int64_t sizes[] = {1000};
  AtenTensorHandle a = nullptr, b = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(1, sizes, nullptr, 6, 0, 0, &a), 0);
  ASSERT_EQ(aoti_torch_new_tensor_handle(a, &b), 0);
  ASSERT_EQ(aoti_torch_delete_tensor_object(a), 0);
  ASSERT_EQ(aoti_torch_delete_tensor_object(b), 0);
  EXPECT_EQ(active_cpu_bytes(), before);
}

TEST(ShimHandleTest, UninitializedTensorIsUndefined) {
  Handle u;
  ASSERT_EQ(aoti_torch_new_uninitialized_tensor(u.out()), 0);
  bool defined = true;
  ASSERT_EQ(aoti_torch_is_defined(u, &defined), 0);
  EXPECT_FALSE(defined);
  void* data = reinterpret_cast<void*>(1);
  ASSERT_EQ(aoti_torch_get_data_ptr(u, &data), 0);
  EXPECT_EQ(data, nullptr);
  int64_t storage = -1;
  ASSERT_EQ(aoti_torch_get_storage_size(u, &storage), 0);
  EXPECT_EQ(storage, 0);
  // is_defined of a real tensor, and of a null handle.
  Handle t;
  const int64_t sizes[] = {2};
  ASSERT_EQ(aoti_torch_empty_strided(1, sizes, nullptr, 6, 0, 0, t.out()), 0);
  ASSERT_EQ(aoti_torch_is_defined(t, &defined), 0);
  EXPECT_TRUE(defined);
  ASSERT_EQ(aoti_torch_is_defined(nullptr, &defined), 0);
  EXPECT_FALSE(defined);
  clear_last_error();
  expect_failure(aoti_torch_new_uninitialized_tensor(nullptr), "output pointer");
  expect_failure(aoti_torch_is_defined(t, nullptr), "output pointer");
  // An uninitialized tensor becomes defined by assignment.
  ASSERT_EQ(aoti_torch_assign_tensors(t, u), 0);
  ASSERT_EQ(aoti_torch_is_defined(u, &defined), 0);
  EXPECT_TRUE(defined);
}

TEST(ShimHandleTest, AssignTensors) {
  const int64_t sizes[] = {2, 3};
  const int64_t other_sizes[] = {5};
  Handle src, dst, out;
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, 4, 0, 0, src.out()), 0);
  ASSERT_EQ(aoti_torch_empty_strided(1, other_sizes, nullptr, 6, 0, 0, dst.out()), 0);
  ASSERT_EQ(aoti_torch_assign_tensors(src, dst), 0);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(src, &a), 0);
  ASSERT_EQ(aoti_torch_get_data_ptr(dst, &b), 0);
  EXPECT_EQ(a, b);
  int64_t* dst_sizes = nullptr;
  ASSERT_EQ(aoti_torch_get_sizes(dst, &dst_sizes), 0);
  EXPECT_EQ(dst_sizes[0], 2);
  EXPECT_EQ(dst_sizes[1], 3);
  int32_t dtype = 0;
  ASSERT_EQ(aoti_torch_get_dtype(dst, &dtype), 0);
  EXPECT_EQ(dtype, 4);
  ASSERT_EQ(aoti_torch_assign_tensors_out(src, out.out()), 0);
  ASSERT_EQ(aoti_torch_get_data_ptr(out, &b), 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(out.h, src.h);
  clear_last_error();
  expect_failure(aoti_torch_assign_tensors(nullptr, dst), "src is a null tensor handle");
  expect_failure(aoti_torch_assign_tensors(src, nullptr), "dst is a null tensor handle");
  expect_failure(aoti_torch_assign_tensors_out(src, nullptr), "output pointer");
}

}  // namespace
}  // namespace aotirt
