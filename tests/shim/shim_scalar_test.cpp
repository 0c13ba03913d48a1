// item_* and scalar_to_tensor_* shims called through their C entry points:
// round trips for every type, conversions on read, and the one-element rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "base/status.h"
#include "core/dtype.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::Handle;
using shim_test::expect_failure;
using shim_test::data_of;

void expect_scalar_of(AtenTensorHandle t, int32_t dtype) {
  int32_t got = -1;
  int64_t dim = -1, numel = 0;
  ASSERT_EQ(aoti_torch_get_dtype(t, &got), 0);
  EXPECT_EQ(got, dtype);
  ASSERT_EQ(aoti_torch_get_dim(t, &dim), 0);
  EXPECT_EQ(dim, 0);
  ASSERT_EQ(aoti_torch_get_numel(t, &numel), 0);
  EXPECT_EQ(numel, 1);
}

// scalar_to_tensor_X then item_X gives the value back bit for bit.
#define AOTIRT_ROUND_TRIP(suffix, ctype, dtype_fn, value)            \
  {                                                                  \
    SCOPED_TRACE(#suffix);                                           \
    Handle t;                                                        \
    ctype in = value;                                                \
    ASSERT_EQ(aoti_torch_scalar_to_tensor_##suffix(in, t.out()), 0); \
    expect_scalar_of(t, dtype_fn());                                 \
    ctype out{};                                                     \
    ASSERT_EQ(aoti_torch_item_##suffix(t, &out), 0);                 \
    EXPECT_EQ(0, std::memcmp(&in, &out, sizeof(ctype)));             \
  }

TEST(ShimScalarTest, RoundTripEveryType) {
  AOTIRT_ROUND_TRIP(float32, float, aoti_torch_dtype_float32, -1.25e-7f)
  AOTIRT_ROUND_TRIP(float64, double, aoti_torch_dtype_float64, 3.141592653589793)
  AOTIRT_ROUND_TRIP(uint8, uint8_t, aoti_torch_dtype_uint8, 250)
  AOTIRT_ROUND_TRIP(uint16, uint16_t, aoti_torch_dtype_uint16, 65000)
  AOTIRT_ROUND_TRIP(uint32, uint32_t, aoti_torch_dtype_uint32, 4000000000u)
  AOTIRT_ROUND_TRIP(uint64, uint64_t, aoti_torch_dtype_uint64, (uint64_t{1} << 63) + 12345)
  AOTIRT_ROUND_TRIP(int8, int8_t, aoti_torch_dtype_int8, -128)
  AOTIRT_ROUND_TRIP(int16, int16_t, aoti_torch_dtype_int16, -30000)
  AOTIRT_ROUND_TRIP(int32, int32_t, aoti_torch_dtype_int32, -2000000000)
  AOTIRT_ROUND_TRIP(int64, int64_t, aoti_torch_dtype_int64, (int64_t{1} << 62) + 1)
  AOTIRT_ROUND_TRIP(bool, bool, aoti_torch_dtype_bool, true)
  AOTIRT_ROUND_TRIP(bool, bool, aoti_torch_dtype_bool, false)
}

TEST(ShimScalarTest, ComplexScalars) {
  Handle c64, c128;
  AotirtComplex64 v{1.5f, -2.25f};
  ASSERT_EQ(aoti_torch_scalar_to_tensor_complex64(v, c64.out()), 0);
  expect_scalar_of(c64, aoti_torch_dtype_complex64());
  AotirtComplex64 back{0, 0};
  ASSERT_EQ(aoti_torch_item_complex64(c64, &back), 0);
  EXPECT_EQ(back.real, 1.5f);
  EXPECT_EQ(back.imag, -2.25f);
  AotirtComplex128 w{-3.0, 4.5};
  ASSERT_EQ(aoti_torch_scalar_to_tensor_complex128(w, c128.out()), 0);
  expect_scalar_of(c128, aoti_torch_dtype_complex128());
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(c128, &p), 0);
  EXPECT_EQ(static_cast<double*>(p)[0], -3.0);
  EXPECT_EQ(static_cast<double*>(p)[1], 4.5);
}

TEST(ShimScalarTest, HalfAndBFloat16Items) {
  Handle f;
  ASSERT_EQ(aoti_torch_scalar_to_tensor_float32(-2.5f, f.out()), 0);
  AotirtHalf h{0};
  AotirtBFloat16 b{0};
  ASSERT_EQ(aoti_torch_item_float16(f, &h), 0);
  ASSERT_EQ(aoti_torch_item_bfloat16(f, &b), 0);
  EXPECT_EQ(h.bits, 0xC100);
  EXPECT_EQ(b.bits, 0xC020);
  // Read back from half and bfloat16 tensors.
  Handle ht, bt;
  const int64_t one = 1;
  ASSERT_EQ(aoti_torch_empty_strided(1, &one, nullptr, aoti_torch_dtype_float16(), 0, 0, ht.out()), 0);
  ASSERT_EQ(aoti_torch_empty_strided(1, &one, nullptr, aoti_torch_dtype_bfloat16(), 0, 0, bt.out()), 0);
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(ht, &p), 0);
  *static_cast<uint16_t*>(p) = 0x3555;  // 0.333251953125
  ASSERT_EQ(aoti_torch_get_data_ptr(bt, &p), 0);
  *static_cast<uint16_t*>(p) = 0x4049;  // 3.140625
  float fv = 0;
  ASSERT_EQ(aoti_torch_item_float32(ht, &fv), 0);
  EXPECT_EQ(fv, 0.333251953125f);
  ASSERT_EQ(aoti_torch_item_float32(bt, &fv), 0);
  EXPECT_EQ(fv, 3.140625f);
  ASSERT_EQ(aoti_torch_item_float16(ht, &h), 0);
  EXPECT_EQ(h.bits, 0x3555);
}

TEST(ShimScalarTest, ItemConvertsFromTheTensorsDType) {
  Handle f, l, d;
  ASSERT_EQ(aoti_torch_scalar_to_tensor_float32(-7.75f, f.out()), 0);
  ASSERT_EQ(aoti_torch_scalar_to_tensor_int64((int64_t{1} << 40) + 3, l.out()), 0);
  ASSERT_EQ(aoti_torch_scalar_to_tensor_float64(0.5, d.out()), 0);
  int64_t i = 0;
  ASSERT_EQ(aoti_torch_item_int64(f, &i), 0);
  EXPECT_EQ(i, -7);
  int32_t i32 = 0;
  ASSERT_EQ(aoti_torch_item_int32(f, &i32), 0);
  EXPECT_EQ(i32, -7);
  double dv = 0;
  ASSERT_EQ(aoti_torch_item_float64(l, &dv), 0);
  EXPECT_EQ(dv, static_cast<double>((int64_t{1} << 40) + 3));
  uint64_t u = 0;
  ASSERT_EQ(aoti_torch_item_uint64(l, &u), 0);
  EXPECT_EQ(u, (uint64_t{1} << 40) + 3);
  bool b = false;
  ASSERT_EQ(aoti_torch_item_bool(d, &b), 0);
  EXPECT_TRUE(b);
  float fv = 0;
  ASSERT_EQ(aoti_torch_item_float32(l, &fv), 0);
  EXPECT_EQ(fv, static_cast<float>((int64_t{1} << 40) + 3));
  uint8_t u8 = 0;
  ASSERT_EQ(aoti_torch_item_uint8(d, &u8), 0);
  EXPECT_EQ(u8, 0);
}

TEST(ShimScalarTest, ItemOfAViewReadsTheRightElement) {
  Handle base, scalar, one_by_one;
  const int64_t n = 12;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n, nullptr, aoti_torch_dtype_int16(), 0, 0, base.out()), 0);
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_get_data_ptr(base, &p), 0);
  for (int i = 0; i < 12; ++i) static_cast<int16_t*>(p)[i] = static_cast<int16_t>(100 + i);
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 0, nullptr, nullptr, 5, scalar.out()), 0);
  int16_t v = 0;
  ASSERT_EQ(aoti_torch_item_int16(scalar, &v), 0);
  EXPECT_EQ(v, 105);
  const int64_t sizes[] = {1, 1};
  const int64_t strides[] = {7, 3};
  ASSERT_EQ(aoti_torch__reinterpret_tensor(base, 2, sizes, strides, 11, one_by_one.out()), 0);
  float f = 0;
  ASSERT_EQ(aoti_torch_item_float32(one_by_one, &f), 0);
  EXPECT_EQ(f, 111.0f);
}

TEST(ShimScalarTest, ItemNeedsExactlyOneElement) {
  Handle two, empty, u;
  const int64_t n2 = 2, n0 = 0;
  ASSERT_EQ(aoti_torch_empty_strided(1, &n2, nullptr, 6, 0, 0, two.out()), 0);
  ASSERT_EQ(aoti_torch_empty_strided(1, &n0, nullptr, 6, 0, 0, empty.out()), 0);
  ASSERT_EQ(aoti_torch_new_uninitialized_tensor(u.out()), 0);
  float f = 0;
  clear_last_error();
  expect_failure(aoti_torch_item_float32(two, &f), "one element, got shape [2]");
  expect_failure(aoti_torch_item_float32(empty, &f), "got shape [0]");
  expect_failure(aoti_torch_item_float32(u, &f), "undefined");
  expect_failure(aoti_torch_item_float32(nullptr, &f), "null tensor handle");
  Handle s;
  ASSERT_EQ(aoti_torch_scalar_to_tensor_float32(1.0f, s.out()), 0);
  expect_failure(aoti_torch_item_float32(s, nullptr), "ret_value is null");
  expect_failure(aoti_torch_scalar_to_tensor_float32(1.0f, nullptr), "output pointer");
  // A complex item from a real tensor needs a conversion aotirt does not do.
  AotirtComplex64 c{0, 0};
  expect_failure(aoti_torch_item_complex64(s, &c), "float32 to complex64");
}

}  // namespace
}  // namespace aotirt
