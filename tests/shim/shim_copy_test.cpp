// Copy and fill shims called through their C entry points: copy_ and
// tensor_copy_ (strided, broadcast, dtype conversion), clone,
// clone_preserve_strides and zero_.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/dtype.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::Handle;
using shim_test::expect_failure;
using shim_test::data_of;

void make(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype, Handle* out) {
  ASSERT_EQ(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(),
                                     strides.empty() ? nullptr : strides.data(), dtype, 0, 0, out->out()),
            0);
}

std::vector<int64_t> strides_of(AtenTensorHandle t) {
  int64_t dim = 0;
  int64_t* s = nullptr;
  EXPECT_EQ(aoti_torch_get_dim(t, &dim), 0);
  EXPECT_EQ(aoti_torch_get_strides(t, &s), 0);
  return std::vector<int64_t>(s, s + dim);
}

TEST(ShimCopyTest, StridedDestination) {
  Handle src, dst;
  make({2, 3}, {}, 6, &src);
  make({2, 3}, {1, 2}, 6, &dst);  // column-major
  float* s = data_of<float>(src);
  for (int i = 0; i < 6; ++i) s[i] = static_cast<float>(i + 1);
  ASSERT_EQ(aoti_torch_copy_(dst, src, 0), 0);
  float* d = data_of<float>(dst);
  EXPECT_EQ((std::vector<float>(d, d + 6)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(ShimCopyTest, BroadcastSource) {
  Handle row, dst;
  make({4}, {}, 6, &row);
  make({3, 4}, {}, 6, &dst);
  float* r = data_of<float>(row);
  for (int i = 0; i < 4; ++i) r[i] = static_cast<float>(10 * i);
  ASSERT_EQ(aoti_torch_copy_(dst, row, 1), 0);  // non_blocking is fine on the CPU
  float* d = data_of<float>(dst);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(d[i * 4 + j], 10.0f * j);
}

TEST(ShimCopyTest, DTypeConversion) {
  Handle f, b, l;
  make({3}, {}, aoti_torch_dtype_float32(), &f);
  make({3}, {}, aoti_torch_dtype_bfloat16(), &b);
  make({3}, {}, aoti_torch_dtype_int64(), &l);
  float* fp = data_of<float>(f);
  fp[0] = 1.0f;
  fp[1] = -2.5f;
  fp[2] = 3.140625f;
  ASSERT_EQ(aoti_torch_copy_(b, f, 0), 0);
  uint16_t* bp = data_of<uint16_t>(b);
  EXPECT_EQ(bp[0], 0x3F80);
  EXPECT_EQ(bp[1], 0xC020);
  EXPECT_EQ(bp[2], 0x4049);
  ASSERT_EQ(aoti_torch_copy_(l, b, 0), 0);
  int64_t* lp = data_of<int64_t>(l);
  EXPECT_EQ((std::vector<int64_t>(lp, lp + 3)), (std::vector<int64_t>{1, -2, 3}));
}

TEST(ShimCopyTest, TensorCopyTakesSourceFirst) {
  Handle a, b;
  make({2}, {}, 3, &a);
  make({2}, {}, 3, &b);
  data_of<int32_t>(a)[0] = 5;
  data_of<int32_t>(a)[1] = 6;
  data_of<int32_t>(b)[0] = 0;
  data_of<int32_t>(b)[1] = 0;
  ASSERT_EQ(aoti_torch_tensor_copy_(a, b), 0);
  EXPECT_EQ(data_of<int32_t>(b)[1], 6);
}

TEST(ShimCopyTest, ErrorsNameTheProblem) {
  Handle a, b, u;
  make({3}, {}, 6, &a);
  make({4}, {}, 6, &b);
  ASSERT_EQ(aoti_torch_new_uninitialized_tensor(u.out()), 0);
  clear_last_error();
  expect_failure(aoti_torch_copy_(b, a, 0), "cannot broadcast shape [3] to [4]");
  EXPECT_EQ(get_last_error().message().rfind("aoti_torch_copy_", 0), 0u);
  expect_failure(aoti_torch_copy_(u, a, 0), "undefined");
  expect_failure(aoti_torch_copy_(a, u, 0), "undefined");
  expect_failure(aoti_torch_copy_(nullptr, a, 0), "self is a null tensor handle");
  expect_failure(aoti_torch_copy_(a, nullptr, 0), "src is a null tensor handle");
  expect_failure(aoti_torch_tensor_copy_(a, b), "cannot broadcast");
}

TEST(ShimCloneTest, CloneIsContiguous) {
  Handle src, c;
  make({2, 3}, {1, 2}, 4, &src);
  int64_t* s = data_of<int64_t>(src);
  for (int i = 0; i < 6; ++i) s[i] = i;  // memory order is column-major
  ASSERT_EQ(aoti_torch_clone(src, c.out()), 0);
  EXPECT_EQ(strides_of(c), (std::vector<int64_t>{3, 1}));
  int64_t* d = data_of<int64_t>(c);
  EXPECT_NE(d, s);
  EXPECT_EQ((std::vector<int64_t>(d, d + 6)), (std::vector<int64_t>{0, 2, 4, 1, 3, 5}));
  int32_t dtype = 0;
  ASSERT_EQ(aoti_torch_get_dtype(c, &dtype), 0);
  EXPECT_EQ(dtype, 4);
  s[0] = 100;  // independent storage
  EXPECT_EQ(d[0], 0);
}

TEST(ShimCloneTest, ClonePreserveStrides) {
  for (std::vector<int64_t> strides : {std::vector<int64_t>{1, 2}, std::vector<int64_t>{8, 1},
                                       std::vector<int64_t>{3, 1}}) {
    SCOPED_TRACE(strides[0]);
    Handle src, c;
    make({2, 3}, strides, 6, &src);
    float* s = data_of<float>(src);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) s[i * strides[0] + j * strides[1]] = static_cast<float>(10 * i + j);
    ASSERT_EQ(aoti_torch_clone_preserve_strides(src, c.out()), 0);
    EXPECT_EQ(strides_of(c), strides);
    float* d = data_of<float>(c);
    EXPECT_NE(d, s);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(d[i * strides[0] + j * strides[1]], 10.0f * i + j);
  }
}

TEST(ShimCloneTest, ClonesOfAViewWithAnOffset) {
  Handle base, view, c, cp;
  make({10}, {}, 6, &base);
  float* b = data_of<float>(base);
  for (int i = 0; i < 10; ++i) b[i] = static_cast<float>(i);
  const int64_t sizes[] = {2, 2};
  const int64_t strides[] = {1, 3};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 5, view.out()), 0);
  ASSERT_EQ(aoti_torch_clone(view, c.out()), 0);
  float* d = data_of<float>(c);
  EXPECT_EQ((std::vector<float>(d, d + 4)), (std::vector<float>{5, 8, 6, 9}));
  ASSERT_EQ(aoti_torch_clone_preserve_strides(view, cp.out()), 0);
  EXPECT_EQ(strides_of(cp), (std::vector<int64_t>{1, 3}));
  int64_t offset = -1;
  ASSERT_EQ(aoti_torch_get_storage_offset(cp, &offset), 0);
  EXPECT_EQ(offset, 0);
  float* e = data_of<float>(cp);
  EXPECT_EQ(e[0], 5.0f);
  EXPECT_EQ(e[3], 8.0f);
  EXPECT_EQ(e[1], 6.0f);
  EXPECT_EQ(e[4], 9.0f);
}

TEST(ShimCloneTest, Errors) {
  Handle u, t;
  ASSERT_EQ(aoti_torch_new_uninitialized_tensor(u.out()), 0);
  make({2}, {}, 6, &t);
  AtenTensorHandle out = nullptr;
  clear_last_error();
  expect_failure(aoti_torch_clone(u, &out), "undefined");
  expect_failure(aoti_torch_clone_preserve_strides(u, &out), "undefined");
  expect_failure(aoti_torch_clone(nullptr, &out), "null tensor handle");
  expect_failure(aoti_torch_clone(t, nullptr), "output pointer");
  expect_failure(aoti_torch_clone_preserve_strides(t, nullptr), "output pointer");
  EXPECT_EQ(out, nullptr);
}

TEST(ShimZeroTest, ContiguousEveryDType) {
  for (int32_t code : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 23, 24, 25, 26, 27, 28, 29}) {
    SCOPED_TRACE(code);
    Handle t;
    make({5, 3}, {}, code, &t);
    int64_t nbytes = 0;
    ASSERT_EQ(aoti_torch_get_storage_size(t, &nbytes), 0);
    unsigned char* p = data_of<unsigned char>(t);
    std::memset(p, 0xEE, static_cast<size_t>(nbytes));
    ASSERT_EQ(aoti_torch_zero_(t), 0);
    for (int64_t i = 0; i < nbytes; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
  }
}

TEST(ShimZeroTest, StridedEveryDTypeLeavesTheGaps) {
  for (int32_t code : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 23, 24, 25, 26, 27, 28, 29}) {
    SCOPED_TRACE(code);
    const size_t es = aoti_torch_dtype_element_size(code);
    Handle base, view;
    make({12}, {}, code, &base);
    unsigned char* p = data_of<unsigned char>(base);
    std::memset(p, 0xEE, 12 * es);
    const int64_t sizes[] = {2, 3};
    const int64_t strides[] = {6, 2};  // even elements
    ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 0, view.out()), 0);
    ASSERT_EQ(aoti_torch_zero_(view), 0);
    for (size_t e = 0; e < 12; ++e)
      for (size_t b = 0; b < es; ++b) ASSERT_EQ(p[e * es + b], e % 2 == 0 ? 0 : 0xEE) << "element " << e;
  }
}

TEST(ShimZeroTest, ScalarEmptyAndUndefined) {
  Handle s, e, u;
  make({}, {}, 7, &s);
  data_of<double>(s)[0] = 4.0;
  ASSERT_EQ(aoti_torch_zero_(s), 0);
  EXPECT_EQ(data_of<double>(s)[0], 0.0);
  make({0, 4}, {}, 7, &e);
  EXPECT_EQ(aoti_torch_zero_(e), 0);
  ASSERT_EQ(aoti_torch_new_uninitialized_tensor(u.out()), 0);
  clear_last_error();
  expect_failure(aoti_torch_zero_(u), "undefined");
  expect_failure(aoti_torch_zero_(nullptr), "null tensor handle");
}

}  // namespace
}  // namespace aotirt
