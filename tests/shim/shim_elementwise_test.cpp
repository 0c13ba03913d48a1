// Bad input to the elementwise ops and amax (tests/ops checks their values
// against torch): what torch refuses is INVALID_ARGUMENT with the reason,
// what aotirt does not compute is UNIMPLEMENTED naming the dtype or device,
// and no result is returned either way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/ops/cpu_elementwise_types.h"
#include "core/dtype.h"
#include "shim/abi/cpu_elementwise.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kUInt8 = 0, kInt8 = 1, kInt32 = 3, kInt64 = 4, kFloat16 = 5, kFloat32 = 6, kFloat64 = 7,
                  kComplex64 = 9, kComplex128 = 10, kBool = 11, kUInt16 = 27;

// A tensor of |sizes| (contiguous) and |dtype| over |data| on |device_type|.
void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t, int32_t device_type = 0) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, device_type, 0, t->out()),
            0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code) << get_last_error().message(); }

TEST(ShimElementwiseTest, DtypesAotirtDoesNotComputeAreUnimplemented) {
  std::vector<double> data(16, 1.0);
  Handle u16, half, c128, out;
  make(data.data(), {4}, kUInt16, &u16);
  expect_failure(aoti_torch_cpu_abs(u16, out.out()), "'self' has dtype uint16");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_add_Scalar(u16, 1.0, 1.0, out.out()), "uint16");
  expect_code(StatusCode::kUnimplemented);
  // float16 with a 0-d complex128 promotes to complex32, which torch has and
  // aotirt does not.
  make(data.data(), {4}, kFloat16, &half);
  make(data.data(), {}, kComplex128, &c128);
  expect_failure(aoti_torch_cpu_mul_Tensor(half, c128, out.out()), "complex32");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_fill__Scalar(u16, 1.0), "uint16");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, WhatTorchRefusesIsInvalid) {
  std::vector<double> data(16, 1.0);
  Handle b, i32, i64, f32, f64, out;
  make(data.data(), {4}, kBool, &b);
  make(data.data(), {4}, kInt32, &i32);
  make(data.data(), {4}, kInt64, &i64);
  make(data.data(), {4}, kFloat32, &f32);
  make(data.data(), {4}, kFloat64, &f64);
  expect_failure(aoti_torch_cpu_abs(b, out.out()), "abs is not implemented for bool");
  expect_code(StatusCode::kInvalidArgument);
  // The shim's alpha is a double, which torch refuses for integral results.
  expect_failure(aoti_torch_cpu_add_Tensor(i32, i64, 1.0, out.out()), "argument alpha must not be a floating point");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_aten_subtract_Tensor(b, b, 1.0, out.out()), "with two bool tensors");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_aten_subtract_Tensor(b, f32, 1.0, out.out()), "with a bool tensor");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_gcd(f32, i32, out.out()), "gcd is implemented for integer dtypes only, got float32");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_pow_Tensor_Tensor(b, b, out.out()), "pow is not implemented for bool");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_polar(f32, f64, out.out()), "'abs' is float32 but 'angle' is float64");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_polar(i32, i32, out.out()), "float32 or float64");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, ShapesThatDoNotBroadcastAreNamed) {
  std::vector<float> data(12, 1.0f);
  Handle a, b, out;
  make(data.data(), {3, 4}, kFloat32, &a);
  make(data.data(), {3}, kFloat32, &b);
  expect_failure(aoti_torch_cpu_mul_Tensor(a, b, out.out()), "the size of tensor a (4) must match the size of tensor b (3)");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, FillValuesThatOverflowAreRefused) {
  std::vector<int64_t> data(4, 7);
  Handle i8, u8, i64, half, f32;
  make(data.data(), {4}, kInt8, &i8);
  make(data.data(), {4}, kUInt8, &u8);
  make(data.data(), {4}, kInt64, &i64);
  make(data.data(), {4}, kFloat16, &half);
  make(data.data(), {2}, kFloat32, &f32);
  expect_failure(aoti_torch_cpu_fill__Scalar(i8, 300.0), "value 300 cannot be converted to type int8 without overflow");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_fill__Scalar(u8, -1.0), "to type uint8");
  expect_failure(aoti_torch_cpu_fill__Scalar(i64, std::nan("")), "to type int64");
  expect_failure(aoti_torch_cpu_fill__Scalar(half, 1e10), "to type float16");
  expect_failure(aoti_torch_aten_fill__Scalar(f32, 1e300), "to type float32");
  // Nothing was written.
  EXPECT_EQ(data[0], 7);
  EXPECT_EQ(aoti_torch_cpu_fill__Scalar(half, std::numeric_limits<double>::infinity()), 0);
}

TEST(ShimElementwiseTest, AmaxDimsAreChecked) {
  std::vector<float> data(12, 1.0f);
  Handle t, empty, c64, out;
  make(data.data(), {3, 4}, kFloat32, &t);
  const int64_t too_big[] = {2}, dup[] = {1, -1}, zero[] = {0};
  expect_failure(aoti_torch_aten_amax(t, too_big, 1, 0, out.out()),
                 "dimension out of range (expected to be in range of [-2, 1], but got 2)");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_aten_amax(t, dup, 2, 0, out.out()), "dim 1 appears multiple times");
  expect_failure(aoti_torch_aten_amax(t, nullptr, 1, 0, out.out()), "'dim' is null");
  make(data.data(), {0, 3}, kFloat32, &empty);
  expect_failure(aoti_torch_aten_amax(empty, zero, 1, 0, out.out()), "expected reduction dim 0 to have non-zero size");
  expect_failure(aoti_torch_aten_amax(empty, nullptr, 0, 0, out.out()), "reduction dim to be specified");
  make(data.data(), {3}, kComplex64, &c64);
  expect_failure(aoti_torch_aten_amax(c64, zero, 1, 0, out.out()), "complex");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, GenericOpsForwardToTheCpuOps) {
  // aoti_torch_aten_* reach the tensor's device's own ops (the stand-in
  // device without them: shim_tensor_ops_test.cpp).
  std::vector<float> data = {1.0f, -2.0f, 3.0f, -4.0f}, ones(4, 1.0f);
  Handle t, one, amax_out, sub_out;
  make(data.data(), {4}, kFloat32, &t);
  make(ones.data(), {4}, kFloat32, &one);
  const int64_t zero[] = {0};
  ASSERT_EQ(aoti_torch_aten_amax(t, zero, 1, 0, amax_out.out()), 0) << get_last_error().to_string();
  EXPECT_EQ(shim_test::data_of<float>(amax_out)[0], 3.0f);
  ASSERT_EQ(aoti_torch_aten_subtract_Tensor(t, one, 2.0, sub_out.out()), 0) << get_last_error().to_string();
  EXPECT_EQ(shim_test::data_of<float>(sub_out)[1], -4.0f);
  ASSERT_EQ(aoti_torch_aten_fill__Scalar(one, 0.5), 0) << get_last_error().to_string();
  EXPECT_EQ(ones[3], 0.5f);
  // The CPU-only shims refuse a device tensor as a wrong argument (a
  // borrowed blob tagged cuda:0, never dereferenced).
  Handle gpu, out;
  make(data.data(), {4}, kFloat32, &gpu, /*device_type=*/1);
  expect_failure(aoti_torch_cpu_abs(gpu, out.out()), "'self' is on cuda:0, expected a CPU tensor");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_aotirt_amax(gpu, zero, 1, 0, out.out()), "'self' is on cuda:0, expected a CPU tensor");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, NullArgumentsAreRefused) {
  std::vector<float> data(4, 1.0f);
  Handle t, out;
  make(data.data(), {4}, kFloat32, &t);
  expect_failure(aoti_torch_cpu_abs(nullptr, out.out()), "'self' is a null tensor handle");
  expect_failure(aoti_torch_cpu_mul_Tensor(t, nullptr, out.out()), "'other' is a null tensor handle");
  expect_failure(aoti_torch_cpu_pow_Scalar(2.0, nullptr, out.out()), "'exponent' is a null tensor handle");
  expect_failure(aoti_torch_cpu_add_Tensor(t, t, 1.0, nullptr), "output pointer");
  expect_failure(aoti_torch_cpu_fill__Scalar(nullptr, 1.0), "null tensor handle");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimElementwiseTest, ResultsAreReturned) {
  // A sanity check that the success path hands back a tensor (values are
  // tests/ops's job).
  std::vector<float> data = {1.0f, -2.0f, 3.0f, -4.0f};
  Handle t, out;
  make(data.data(), {4}, kFloat32, &t);
  ASSERT_EQ(aoti_torch_cpu_abs(t, out.out()), 0);
  ASSERT_NE(out.h, nullptr);
  EXPECT_EQ(shim_test::data_of<float>(out)[3], 4.0f);
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(ShimElementwiseTest, InlineHalfConversionsMatchTheCore) {
  using cpu_ops::ew::float_to_half_bits;
  using cpu_ops::ew::half_bits_to_float;
  int mismatches = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    if (bits_of(half_bits_to_float(static_cast<uint16_t>(h))) != bits_of(half_to_float(static_cast<uint16_t>(h))))
      ++mismatches;
    // Each half, and the float halfway to the next one (ties round to even).
    const float v = half_to_float(static_cast<uint16_t>(h));
    if (float_to_half_bits(v) != float_to_half(v)) ++mismatches;
    if ((h & 0x7fffu) < 0x7c00u) {
      const float mid = static_cast<float>((static_cast<double>(v) +
                                            static_cast<double>(half_to_float(static_cast<uint16_t>(h + 1)))) / 2);
      for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), std::nextafter(mid, -1e30f)})
        if (float_to_half_bits(f) != float_to_half(f)) ++mismatches;
    }
  }
  // A sweep over every float's bit patterns.
  for (uint64_t x = 0; x < (uint64_t{1} << 32); x += 4093) {
    const float f = float_of(static_cast<uint32_t>(x));
    if (float_to_half_bits(f) != float_to_half(f)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace aotirt
