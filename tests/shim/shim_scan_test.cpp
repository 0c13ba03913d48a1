// Bad input to the scans, sort and topk (tests/ops checks their values
// against torch): each refusal names the problem, and nothing is returned.
#include <gtest/gtest.h>

#include <vector>

#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

// A [rows, cols] tensor of |dtype| (c10 code) over |data|.
void make(void* data, int64_t rows, int64_t cols, int32_t dtype, Handle* t) {
  const int64_t sizes[] = {rows, cols}, strides[] = {cols, 1};
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, 2, sizes, strides, 0, dtype, 0, 0, t->out()), 0);
}

TEST(ShimScanTest, DimOutOfRangeIsNamed) {
  std::vector<float> data(12, 1.0f);
  Handle t, out;
  make(data.data(), 3, 4, 6, &t);
  expect_failure(aoti_torch_cpu_cumsum(t, 2, nullptr, out.out()), "dim 2 is out of range");
  expect_failure(aoti_torch_cpu_cumsum(t, -3, nullptr, out.out()), "expected in [-2, 1]");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimScanTest, UnsupportedDtypesAreUnimplemented) {
  std::vector<float> data(24, 1.0f);
  Handle complex, ints, out, values, indices;
  make(data.data(), 3, 4, 9, &complex);  // complex64
  expect_failure(aoti_torch_cpu_cumsum(complex, 0, nullptr, out.out()), "complex64");
  EXPECT_EQ(get_last_error().code(), StatusCode::kUnimplemented);
  make(data.data(), 3, 4, 3, &ints);  // int32
  expect_failure(aoti_torch_cpu_logcumsumexp(ints, 0, out.out()), "floating dtypes only");
  int32_t bad_dtype = 99;
  expect_failure(aoti_torch_cpu_cumprod(ints, 0, &bad_dtype, out.out()), "invalid dtype code 99");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimScanTest, NullArgumentsAreRefused) {
  std::vector<float> data(12, 1.0f);
  Handle t, out, values;
  make(data.data(), 3, 4, 6, &t);
  expect_failure(aoti_torch_cpu_cumsum(nullptr, 0, nullptr, out.out()), "null tensor handle");
  expect_failure(aoti_torch_cpu_cumsum(t, 0, nullptr, nullptr), "output pointer");
  expect_failure(aoti_torch_cpu_cummax(t, 0, values.out(), nullptr), "output pointer");
  EXPECT_EQ(values.h, nullptr);
}

TEST(ShimScanTest, TopkAndSortRefuseWhatTorchRefuses) {
  std::vector<float> data(12, 1.0f);
  Handle t, values, indices;
  make(data.data(), 3, 4, 6, &t);
  expect_failure(aoti_torch_cpu_topk(t, 5, 1, 1, 1, values.out(), indices.out()), "k 5 is out of range");
  expect_failure(aoti_torch_cpu_topk(t, -1, 1, 1, 1, values.out(), indices.out()), "k -1 is out of range");
  expect_failure(aoti_torch_cpu_sort(t, 3, 0, values.out(), indices.out()), "dim 3 is out of range");
  expect_failure(aoti_torch_cpu_sort(t, 0, 0, values.out(), nullptr), "output pointer");
  EXPECT_EQ(values.h, nullptr);
  EXPECT_EQ(indices.h, nullptr);
}

}  // namespace
}  // namespace aotirt
