// Bad input to the pooling ops and embedding_bag (tests/ops checks their
// values against torch): each refusal names the problem with the right
// code (INVALID_ARGUMENT for what torch refuses, UNIMPLEMENTED for what
// aotirt does not compute), and nothing is returned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "shim/abi/cpu_pooling.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kInt32 = 3, kInt64 = 4, kFloat32 = 6, kBool = 11, kBFloat16 = 15;

// A contiguous tensor of |sizes| and |dtype| (c10 code) over |data|.
void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, 0, 0, t->out()),
            0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code) << get_last_error().message(); }

TEST(ShimPoolingTest, AvgPoolRefusesBadWindows) {
  std::vector<float> data(2 * 3 * 6 * 5, 1.0f);
  Handle x, out;
  make(data.data(), {2, 3, 6, 5}, kFloat32, &x);
  const int64_t k3[] = {2, 2, 2}, k2[] = {2, 2}, k7[] = {7, 2}, p0[] = {0, 0}, p2[] = {2, 1}, s1[] = {1, 1};
  expect_failure(aoti_torch_cpu_avg_pool2d(x, k3, 3, nullptr, 0, p0, 2, 0, 1, nullptr, out.out()),
                 "kernel_size must be a single int or a list of 2 ints");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_avg_pool2d(x, k2, 2, s1, 2, p2, 2, 0, 1, nullptr, out.out()),
                 "pad should be at most half of kernel size");
  int64_t zero = 0;
  expect_failure(aoti_torch_cpu_avg_pool2d(x, k2, 2, s1, 2, p0, 2, 0, 1, &zero, out.out()), "divisor must be not zero");
  expect_failure(aoti_torch_cpu_avg_pool2d(x, k7, 2, nullptr, 0, p0, 2, 0, 1, nullptr, out.out()), "is too small");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimPoolingTest, EmptyDimsAndRanksFollowTorch) {
  std::vector<float> data(64, 1.0f);
  Handle no_channels, flat, out, idx;
  make(data.data(), {2, 0, 4, 4}, kFloat32, &no_channels);
  make(data.data(), {4, 4}, kFloat32, &flat);
  const int64_t k2[] = {2, 2}, p0[] = {0, 0}, d1[] = {1, 1}, o2[] = {2, 2};
  expect_failure(aoti_torch_cpu_max_pool2d_with_indices(no_channels, k2, 2, nullptr, 0, p0, 2, d1, 2, 0, out.out(),
                                                        idx.out()),
                 "dimension 1 empty");
  expect_failure(aoti_torch_cpu_adaptive_max_pool2d(no_channels, o2, 2, out.out(), idx.out()), "dimension 1 empty");
  // adaptive_avg_pool2d alone lets the channels be empty, as torch does.
  {
    Handle ok;
    EXPECT_EQ(aoti_torch_cpu__adaptive_avg_pool2d(no_channels, o2, 2, ok.out()), 0);
  }
  expect_failure(aoti_torch_cpu__adaptive_avg_pool2d(flat, o2, 2, out.out()), "expected a 3-d (unbatched) or 4-d");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(idx.h, nullptr);
}

TEST(ShimPoolingTest, UnsupportedDtypesAreUnimplemented) {
  std::vector<uint8_t> bytes(2 * 3 * 4 * 4 * 4 * 4, 0);
  Handle ints, bools, bf16_5d, out, idx;
  make(bytes.data(), {2, 3, 4, 4}, kInt32, &ints);
  make(bytes.data(), {2, 3, 4, 4}, kBool, &bools);
  make(bytes.data(), {2, 3, 4, 4, 4}, kBFloat16, &bf16_5d);
  const int64_t k2[] = {2, 2}, k3[] = {2, 2, 2}, p0[] = {0, 0}, p3[] = {0, 0, 0}, d1[] = {1, 1}, o2[] = {2, 2};
  expect_failure(aoti_torch_cpu_avg_pool2d(ints, k2, 2, nullptr, 0, p0, 2, 0, 1, nullptr, out.out()), "int32");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_avg_pool3d(bf16_5d, k3, 3, nullptr, 0, p3, 3, 0, 1, nullptr, out.out()),
                 "bfloat16");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(
      aoti_torch_cpu_max_pool2d_with_indices(bools, k2, 2, nullptr, 0, p0, 2, d1, 2, 0, out.out(), idx.out()), "bool");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu__adaptive_avg_pool2d(ints, o2, 2, out.out()), "int32");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimPoolingTest, MaxPoolAndAdaptiveArguments) {
  std::vector<float> data(2 * 3 * 6 * 5, 1.0f);
  Handle x, out, idx;
  make(data.data(), {2, 3, 6, 5}, kFloat32, &x);
  const int64_t k2[] = {2, 2}, p0[] = {0, 0}, d0[] = {0, 1}, o1[] = {2}, oneg[] = {-1, 2};
  expect_failure(aoti_torch_cpu_max_pool2d_with_indices(x, k2, 2, nullptr, 0, p0, 2, d0, 2, 0, out.out(), idx.out()),
                 "dilation should be greater than zero");
  expect_failure(aoti_torch_cpu_max_pool2d_with_indices(x, k2, 2, nullptr, 0, p0, 2, d0, 2, 0, out.out(), nullptr),
                 "output pointer");
  expect_failure(aoti_torch_cpu_adaptive_max_pool2d(x, o1, 1, out.out(), idx.out()),
                 "output_size must have 2 elements");
  expect_failure(aoti_torch_cpu__adaptive_avg_pool2d(x, oneg, 2, out.out()), "elements of output_size must be >= 0");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu__adaptive_avg_pool3d(nullptr, o1, 1, out.out()), "null tensor handle");
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(idx.h, nullptr);
}

TEST(ShimPoolingTest, FractionalMaxPoolChecksItsSamples) {
  std::vector<float> data(2 * 3 * 6 * 5, 1.0f);
  std::vector<float> samples(2 * 3 * 2, 0.5f);
  std::vector<double> samples64(2 * 3 * 2, 0.5);
  Handle x, rs, rs64, rs3, out, idx;
  make(data.data(), {2, 3, 6, 5}, kFloat32, &x);
  make(samples.data(), {2, 3, 2}, kFloat32, &rs);
  make(samples64.data(), {2, 3, 2}, 7, &rs64);
  make(samples.data(), {2, 2, 3}, kFloat32, &rs3);
  const int64_t k2[] = {2, 2}, o3[] = {3, 3}, o5[] = {3, 5}, k4[] = {2, 2};
  expect_failure(aoti_torch_cpu_fractional_max_pool2d(x, k2, 2, o3, 2, rs64, out.out(), idx.out()),
                 "'random_samples' has dtype float64 but 'self' has float32");
  expect_failure(aoti_torch_cpu_fractional_max_pool2d(x, k2, 2, o3, 2, rs3, out.out(), idx.out()),
                 "must have size(1) equal to the input's 3 channels");
  expect_failure(aoti_torch_cpu_fractional_max_pool2d(x, k4, 2, o5, 2, rs, out.out(), idx.out()),
                 "pool width 2 too large relative to input width 5");
  expect_code(StatusCode::kInvalidArgument);
  // Samples torch's interval arithmetic cannot place (NaN, or beyond int)
  // are refused rather than read past the input.
  samples[4] = std::nanf("");
  expect_failure(aoti_torch_cpu_fractional_max_pool2d(x, k2, 2, o3, 2, rs, out.out(), idx.out()),
                 "random_samples[0, 2, 0] = nan places a pooling window outside the input");
  expect_code(StatusCode::kInvalidArgument);
  samples[4] = 3e9f;
  expect_failure(aoti_torch_cpu_fractional_max_pool2d(x, k2, 2, o3, 2, rs, out.out(), idx.out()),
                 "places a pooling window outside the input");
  EXPECT_EQ(out.h, nullptr);
  EXPECT_EQ(idx.h, nullptr);
}

TEST(ShimPoolingTest, MaxUnpoolChecksIndices) {
  std::vector<float> data(2 * 3 * 2 * 2, 1.0f);
  std::vector<int64_t> ind(2 * 3 * 2 * 2, 1);
  std::vector<int32_t> ind32(2 * 3 * 2 * 2, 1);
  Handle x, ix, ix32, ix_shape, out;
  make(data.data(), {2, 3, 2, 2}, kFloat32, &x);
  make(ind.data(), {2, 3, 2, 2}, kInt64, &ix);
  make(ind32.data(), {2, 3, 2, 2}, kInt32, &ix32);
  make(ind.data(), {2, 3, 4}, kInt64, &ix_shape);
  const int64_t o2[] = {4, 4}, o3[] = {2, 4, 4}, s0[] = {0, 1, 1}, p3[] = {0, 0, 0};
  expect_failure(aoti_torch_cpu_max_unpool2d(x, ix32, o2, 2, out.out()), "'indices' must be int64, got int32");
  expect_failure(aoti_torch_cpu_max_unpool2d(x, ix_shape, o2, 2, out.out()), "must have the shape of 'self'");
  expect_failure(aoti_torch_cpu_max_unpool3d(x, ix, o3, 3, s0, 3, p3, 3, out.out()),
                 "strides should be greater than zero");
  ind[5] = 16;
  expect_failure(aoti_torch_cpu_max_unpool2d(x, ix, o2, 2, out.out()),
                 "found an invalid max index 16 (the output planes are of size 4x4)");
  expect_code(StatusCode::kInvalidArgument);
  ind[5] = -1;
  expect_failure(aoti_torch_cpu_max_unpool2d(x, ix, o2, 2, out.out()), "found an invalid max index -1");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimPoolingTest, EmbeddingBagRefusesWhatTorchRefuses) {
  std::vector<float> w(6 * 3, 1.0f);
  std::vector<int64_t> idx = {1, 2, 4, 5}, off = {0, 2}, bad_off = {1, 2}, big = {1, 9, 0, 0};
  std::vector<int64_t> wi(6 * 3, 1);
  std::vector<float> psw(4, 1.0f);
  Handle weight, weight_int, indices, offsets, offsets_bad, indices_big, indices_2d, weights, empty_off;
  Handle r0, r1, r2, r3;
  make(w.data(), {6, 3}, kFloat32, &weight);
  make(wi.data(), {6, 3}, kInt64, &weight_int);
  make(idx.data(), {4}, kInt64, &indices);
  make(idx.data(), {2, 2}, kInt64, &indices_2d);
  make(off.data(), {2}, kInt64, &offsets);
  make(off.data(), {0}, kInt64, &empty_off);
  make(bad_off.data(), {2}, kInt64, &offsets_bad);
  make(big.data(), {4}, kInt64, &indices_big);
  make(psw.data(), {4}, kFloat32, &weights);
  auto call = [&](AtenTensorHandle wt, AtenTensorHandle ix, AtenTensorHandle of, int64_t mode,
                  AtenTensorHandle* ps, int32_t ilo) {
    return aoti_torch_cpu__embedding_bag(wt, ix, of, 0, mode, 0, ps, ilo, -1, r0.out(), r1.out(), r2.out(), r3.out());
  };
  expect_failure(call(weight, indices, offsets, 3, nullptr, 0), "mode 3 is not one of 0 (sum), 1 (mean) and 2 (max)");
  expect_code(StatusCode::kInvalidArgument);
  AtenTensorHandle ps = weights;
  expect_failure(call(weight, indices, offsets, 1, &ps, 0), "per_sample_weights only supported with mode='sum'");
  expect_failure(call(weight, indices, offsets_bad, 0, nullptr, 0), "offsets[0] has to be 0");
  expect_failure(call(weight, indices_big, offsets, 0, nullptr, 0),
                 "indices[1] = 9 is out of range for a weight of 6 rows");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(call(weight_int, indices, offsets, 0, nullptr, 0), "'weight' must be float32");
  expect_failure(call(weight, indices, empty_off, 0, nullptr, 1), "include_last_offset needs at least 1 offset");
  expect_failure(call(weight, indices_2d, offsets, 0, nullptr, 0), "2-D 'indices'");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch__embedding_bag(nullptr, indices, offsets, 0, 0, 0, nullptr, 0, -1, r0.out(), r1.out(),
                                           r2.out(), r3.out()),
                 "'weight' is a null tensor handle");
  expect_failure(aoti_torch_cpu__embedding_bag_forward_only(weight, indices, offsets, 0, 0, 0, nullptr, 0, -1,
                                                            r0.out(), nullptr, r2.out(), r3.out()),
                 "output pointer");
  EXPECT_EQ(r0.h, nullptr);
  EXPECT_EQ(r3.h, nullptr);
}

}  // namespace
}  // namespace aotirt
