// The random ops' generator and bad input (tests/ops/test_random_ops.py
// checks their distributions against torch): Philox4x32-10 against the
// published known-answer vectors, and each refusal's code and message.
#include <gtest/gtest.h>

#include <vector>

#include "ops/random_args.h"
#include "shim/abi/cpu_random.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

// expect_failure plus the status code.
void expect_code(AOTITorchError rc, const std::string& needle, StatusCode code) {
  expect_failure(rc, needle);
  EXPECT_EQ(get_last_error().code(), code) << get_last_error().message();
}

void make(void* data, int64_t rows, int64_t cols, int32_t dtype, Handle* t) {
  const int64_t sizes[] = {rows, cols}, strides[] = {cols, 1};
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, 2, sizes, strides, 0, dtype, 0, 0, t->out()), 0);
}

TEST(ShimRandomTest, PhiloxMatchesKnownAnswers) {
  // The Random123 known-answer vectors for philox4x32 with 10 rounds.
  EXPECT_EQ(ops::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (ops::PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(ops::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (ops::PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(ops::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (ops::PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(ShimRandomTest, GeneratorObjectsAreUnimplemented) {
  const int64_t size[] = {4};
  Handle out;
  // A pointer to a null handle is torch's None; a real handle is refused.
  AtenGeneratorHandle none = nullptr;
  ASSERT_EQ(aoti_torch_cpu_rand_generator(size, 1, &none, nullptr, nullptr, nullptr, 0, nullptr, out.out()), 0);
  AtenGeneratorHandle gen = reinterpret_cast<AtenGeneratorHandle>(&none);
  Handle bad;
  expect_code(aoti_torch_cpu_randn_generator(size, 1, &gen, nullptr, nullptr, nullptr, 0, nullptr, bad.out()),
              "'generator'", StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_uniform(out, 0.0, 1.0, &gen, bad.out()), "'generator'", StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_bernoulli__float(out, 0.5, &gen), "'generator'", StatusCode::kUnimplemented);
  EXPECT_EQ(bad.h, nullptr);
}

TEST(ShimRandomTest, FactoryOptionsAreChecked) {
  const int64_t size[] = {2, 3};
  Handle out;
  int32_t sparse = 1, cuda = 1, pin = 1, int64 = 4, f8 = 24, bogus = 99, boolean = 11, c64 = 9;
  expect_code(aoti_torch_cpu_rand(size, 2, nullptr, &sparse, nullptr, 0, nullptr, out.out()), "'layout' is 1",
              StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_rand(size, 2, nullptr, nullptr, &cuda, 0, nullptr, out.out()), "'device' is cuda",
              StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_randn(size, 2, nullptr, nullptr, nullptr, 0, &pin, out.out()), "'pin_memory'",
              StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_rand(size, 2, &int64, nullptr, nullptr, 0, nullptr, out.out()), "dtype int64",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randn(size, 2, &f8, nullptr, nullptr, 0, nullptr, out.out()), "float8_e4m3fn",
              StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu_rand(size, 2, &bogus, nullptr, nullptr, 0, nullptr, out.out()), "invalid dtype code 99",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randperm(4, &boolean, nullptr, nullptr, 0, nullptr, out.out()), "dtype bool",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randint(4, size, 2, &c64, nullptr, nullptr, 0, nullptr, out.out()), "complex64",
              StatusCode::kUnimplemented);
  const int64_t negative[] = {2, -1};
  expect_code(aoti_torch_cpu_rand(negative, 2, nullptr, nullptr, nullptr, 0, nullptr, out.out()),
              "negative dimension -1", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_rand(size, 2, nullptr, nullptr, nullptr, 0, nullptr, nullptr), "output pointer",
              StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimRandomTest, RangesAreChecked) {
  const int64_t size[] = {3};
  Handle out;
  int32_t u8 = 0, f16 = 5;
  expect_code(aoti_torch_cpu_randint_low(5, 5, size, 1, nullptr, nullptr, nullptr, 0, nullptr, out.out()),
              "low=5 >= high=5", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randint(300, size, 1, &u8, nullptr, nullptr, 0, nullptr, out.out()),
              "high - 1 = 299 is out of bounds for uint8", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randint_low(-1, 3, size, 1, &u8, nullptr, nullptr, 0, nullptr, out.out()),
              "low=-1 is out of bounds for uint8", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randperm(-1, nullptr, nullptr, nullptr, 0, nullptr, out.out()), "n=-1",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_randperm(2050, &f16, nullptr, nullptr, 0, nullptr, out.out()),
              "n=2050 is too large for dtype float16", StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);

  std::vector<float> data(6, 0.5f);
  std::vector<int64_t> ints(6, 0);
  Handle t, i64, res;
  make(data.data(), 2, 3, 6, &t);
  make(ints.data(), 2, 3, 4, &i64);
  expect_code(aoti_torch_cpu_uniform(t, 2.0, 1.0, nullptr, res.out()), "from=2 > to=1",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_normal_functional(t, 0.0, -1.0, nullptr, res.out()), "std >= 0.0",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_exponential(t, 0.0, nullptr, res.out()), "lambda > 0.0",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_exponential(i64, 1.0, nullptr, res.out()), "dtype int64",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_normal_functional(nullptr, 0.0, 1.0, nullptr, res.out()), "null tensor handle",
              StatusCode::kInvalidArgument);
  EXPECT_EQ(res.h, nullptr);
}

TEST(ShimRandomTest, BernoulliRefusesBadProbabilitiesBeforeWriting) {
  std::vector<float> data(6, 0.5f), bad_p = {0.5f, 1.5f, 0.5f}, wide(8, 0.5f);
  std::vector<int64_t> int_p(3, 0);
  Handle t, p_bad, p_int, p_wide;
  make(data.data(), 2, 3, 6, &t);
  make(bad_p.data(), 1, 3, 6, &p_bad);
  make(int_p.data(), 1, 3, 4, &p_int);
  make(wide.data(), 2, 4, 6, &p_wide);
  expect_code(aoti_torch_cpu_bernoulli__float(t, 1.5, nullptr), "p to be in [0, 1]", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_bernoulli__Tensor(t, p_bad, nullptr), "every element of 'p' to be in [0, 1]",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_bernoulli__Tensor(t, p_int, nullptr), "'p' has dtype int64",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_bernoulli__Tensor(t, p_wide, nullptr), "cannot be expanded",
              StatusCode::kInvalidArgument);
  for (float v : data) EXPECT_EQ(v, 0.5f);
}

TEST(ShimRandomTest, DropoutChecksDtypeAndP) {
  std::vector<int64_t> ints(6, 1);
  std::vector<float> data(6, 1.0f);
  Handle i64, t, out, mask;
  make(ints.data(), 2, 3, 4, &i64);
  make(data.data(), 2, 3, 6, &t);
  int32_t train = 1, eval = 0;
  expect_code(aoti_torch_cpu_native_dropout(i64, 0.5, &train, out.out(), mask.out()), "needs a floating input",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_native_dropout(t, -0.5, nullptr, out.out(), mask.out()), "p=-0.5",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu_native_dropout(t, 0.5, &train, out.out(), nullptr), "output pointer",
              StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
  // Evaluation takes any dtype.
  ASSERT_EQ(aoti_torch_cpu_native_dropout(i64, 0.5, &eval, out.out(), mask.out()), 0);
  EXPECT_EQ(shim_test::data_of<int64_t>(out)[5], 1);
  EXPECT_EQ(shim_test::data_of<bool>(mask)[5], true);
}

TEST(ShimRandomTest, FftRefusalsNameTheProblem) {
  std::vector<float> data(24, 1.0f);
  Handle c64, f32, f16, out;
  make(data.data(), 3, 4, 9, &c64);  // complex64 over 24 floats
  make(data.data(), 3, 4, 6, &f32);
  make(data.data(), 3, 4, 5, &f16);
  const int64_t d1[] = {1}, d2[] = {2}, twice[] = {1, 1}, neg[] = {-1};
  expect_code(aoti_torch_cpu__fft_c2c(c64, d2, 1, 0, 1, out.out()), "out of range", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_c2c(c64, neg, 1, 0, 1, out.out()), "wrapped dims expected",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_c2c(c64, twice, 2, 0, 1, out.out()), "repeats dimension 1",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_c2c(c64, d1, 1, 3, 1, out.out()), "'normalization' is 3",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_c2c(f32, d1, 1, 0, 1, out.out()), "complex tensors only",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch__fft_c2c(f32, d1, 1, 0, 1, out.out()), "complex tensors only",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_r2c(c64, d1, 1, 0, 1, out.out()), "real floating tensors only",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_r2c(f16, d1, 1, 0, 1, out.out()), "dtype float16", StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu__fft_r2c(f32, d1, 0, 0, 1, out.out()), "needs at least one dimension",
              StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__fft_c2c(c64, d1, 1, 0, 1, nullptr), "output pointer", StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

}  // namespace
}  // namespace aotirt
