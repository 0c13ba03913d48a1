// aoti_torch_cuda_convolution against the CPU op on the same values (float64
// on the host): 1-d, 2-d and 3-d, grouped and depthwise, strided, padded,
// dilated, transposed with output padding, with and without bias, strided
// and channels-last inputs; the output layout must be the one PyTorch gives.
// float32 tolerances are tight enough that TF32 would fail them. Skipped
// without a GPU or cuDNN.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/layout.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaConvolutionTest : public ::testing::Test {
 protected:
  void SetUp() override { AOTIRT_REQUIRE_CUDNN(); }
};

struct ConvCase {
  int spatial;  // 1, 2 or 3
  int64_t n, c_in, c_out, groups;
  std::vector<int64_t> in, kernel, stride, padding, dilation, output_padding;
  bool transposed;
  bool bias;
  bool channels_last;  // input stored channels-last
  bool strided_input;  // input is a slice of a wider tensor
};

std::string describe(const ConvCase& c, DType dt) {
  std::string s = std::string(dtype_name(dt)) + " " + std::to_string(c.spatial) + "d n=" + std::to_string(c.n) +
                  " cin=" + std::to_string(c.c_in) + " cout=" + std::to_string(c.c_out) +
                  " g=" + std::to_string(c.groups) + (c.transposed ? " transposed" : "") + (c.bias ? " bias" : "") +
                  (c.channels_last ? " channels_last" : "") + (c.strided_input ? " strided" : "");
  s += " in=" + dims_to_string(c.in.data(), c.in.size()) + " k=" + dims_to_string(c.kernel.data(), c.kernel.size());
  s += " s=" + dims_to_string(c.stride.data(), c.stride.size()) + " p=" +
       dims_to_string(c.padding.data(), c.padding.size()) + " d=" + dims_to_string(c.dilation.data(), c.dilation.size());
  return s;
}

TensorImpl as_f64(const TensorImpl& t) {
  TensorImpl out = host_empty(t.sizes(), DType::kFloat64);
  EXPECT_TRUE(copy_tensor(out, t, false).ok());
  return out;
}

void run_case(const ConvCase& c, DType dt, uint32_t seed) {
  SCOPED_TRACE(describe(c, dt));
  std::mt19937 rng(seed);
  std::vector<int64_t> xs{c.n, c.c_in};
  xs.insert(xs.end(), c.in.begin(), c.in.end());
  std::vector<int64_t> w = c.transposed ? std::vector<int64_t>{c.c_in, c.c_out / c.groups}
                                        : std::vector<int64_t>{c.c_out, c.c_in / c.groups};
  w.insert(w.end(), c.kernel.begin(), c.kernel.end());
  const DimVector in_sizes(xs), w_sizes(w);

  TensorImpl hx = host_random(in_sizes, dt, rng());
  TensorImpl hw = host_random(w_sizes, dt, rng(), -0.5, 0.5);
  TensorImpl hb = host_random(DimVector{c.c_out}, dt, rng());
  TensorImpl dx;
  if (c.channels_last) {
    dx = to_device(hx, ops::channels_last_strides(in_sizes));
  } else if (c.strided_input) {
    // Every other element of the last dim of a twice-as-wide tensor.
    DimVector st = contiguous_strides(in_sizes);
    for (int64_t d = 0; d < in_sizes.size() - 1; ++d) st[d] *= 2;
    st[in_sizes.size() - 1] = 2;
    dx = to_device(hx, st, 1);
  } else {
    dx = to_device(hx);
  }
  TensorImpl dw = to_device(hw), db = to_device(hb);
  OwnedHandle bias_h(db);
  AtenTensorHandle bias_raw = bias_h;
  AtenTensorHandle out_h = nullptr;
  ASSERT_EQ(aoti_torch_cuda_convolution(handle(dx), handle(dw), c.bias ? &bias_raw : nullptr, c.stride.data(),
                                        c.stride.size(), c.padding.data(), c.padding.size(), c.dilation.data(),
                                        c.dilation.size(), c.transposed, c.output_padding.data(),
                                        c.output_padding.size(), c.groups, &out_h),
            0)
      << last_error_text();
  TensorImpl out = take(out_h);

  OwnedHandle ref_bias(as_f64(hb));
  AtenTensorHandle ref_bias_raw = ref_bias;
  AtenTensorHandle ref_h = nullptr;
  ASSERT_EQ(aoti_torch_cpu_convolution(handle(as_f64(hx)), handle(as_f64(hw)), c.bias ? &ref_bias_raw : nullptr,
                                       c.stride.data(), c.stride.size(), c.padding.data(), c.padding.size(),
                                       c.dilation.data(), c.dilation.size(), c.transposed, c.output_padding.data(),
                                       c.output_padding.size(), c.groups, &ref_h),
            0)
      << last_error_text();
  TensorImpl ref = take(ref_h);
  ASSERT_EQ(out.sizes(), ref.sizes());
  // PyTorch's layout: channels-last output for a channels-last input (2-d/3-d).
  const bool want_cl = c.channels_last && c.spatial >= 2;
  EXPECT_EQ(out.strides(), want_cl ? ops::channels_last_strides(out.sizes()) : contiguous_strides(out.sizes()));

  int64_t fan_in = (c.transposed ? c.c_out : c.c_in) / c.groups;
  for (int64_t k : c.kernel) fan_in *= k;
  const double sk = std::sqrt(static_cast<double>(fan_in));
  double atol = 1e-5 * sk, rtol = 1e-5;  // float32 without TF32
  if (dt == DType::kBFloat16) atol = 2e-2 * sk, rtol = 1e-2;
  if (dt == DType::kFloat16) atol = 3e-3 * sk, rtol = 2e-3;
  EXPECT_LE(max_scaled_error(out, ref, atol, rtol), 1.0);
}

std::vector<ConvCase> cases() {
  return {
      // 1-d
      {1, 2, 4, 6, 1, {17}, {3}, {1}, {1}, {1}, {0}, false, true, false, false},
      {1, 1, 6, 6, 3, {20}, {5}, {2}, {2}, {2}, {0}, false, false, false, true},
      {1, 2, 4, 3, 1, {9}, {3}, {2}, {1}, {1}, {1}, true, true, false, false},
      // 2-d
      {2, 2, 3, 8, 1, {15, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true, false, false},
      {2, 1, 8, 8, 8, {12, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, false, true, false, false},  // depthwise
      {2, 2, 6, 4, 2, {11, 14}, {3, 5}, {2, 1}, {0, 2}, {2, 1}, {0, 0}, false, false, false, false},
      {2, 2, 16, 32, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true, true, false},  // NHWC
      {2, 1, 8, 4, 2, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true, false, true},
      {2, 2, 4, 6, 2, {7, 8}, {4, 3}, {2, 2}, {1, 0}, {1, 1}, {1, 0}, true, true, false, false},
      {2, 1, 8, 8, 1, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, true, false},
      // 3-d
      {3, 1, 2, 4, 1, {6, 7, 5}, {3, 3, 3}, {1, 2, 1}, {1, 1, 0}, {1, 1, 1}, {0, 0, 0}, false, true, false, false},
      {3, 1, 4, 4, 2, {4, 5, 6}, {2, 2, 2}, {2, 1, 2}, {0, 1, 0}, {1, 1, 1}, {1, 0, 1}, true, true, false, false},
  };
}

TEST_F(CudaConvolutionTest, Float32MatchesCpuWithoutTf32) {
  uint32_t seed = 1;
  for (const ConvCase& c : cases()) run_case(c, DType::kFloat32, seed++);
}

TEST_F(CudaConvolutionTest, BFloat16MatchesCpu) {
  uint32_t seed = 100;
  for (const ConvCase& c : cases()) run_case(c, DType::kBFloat16, seed++);
}

TEST_F(CudaConvolutionTest, Float16MatchesCpu) {
  uint32_t seed = 200;
  for (const ConvCase& c : cases()) run_case(c, DType::kFloat16, seed++);
}

TEST_F(CudaConvolutionTest, WideFloat32NeedsFullPrecision) {
  // A long reduction (fan-in 1152) where TF32's 10-bit mantissa would be
  // caught by the float32 tolerance.
  run_case({2, 1, 128, 64, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, false, false, false},
           DType::kFloat32, 77);
}

// ResNet-sized convolutions (the heuristic picks other engines than for the
// small cases), run after run: the allocator's cache tends to give the runs
// the same addresses, so later calls are recorded and replayed.
TEST_F(CudaConvolutionTest, LargeConvolutionsMatchRunAfterRun) {
  const ConvCase big{2, 8, 64, 64, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true, false, false};
  for (int run = 0; run < 3; ++run) {
    run_case(big, DType::kFloat32, 300 + run);
    run_case(big, DType::kBFloat16, 310 + run);
  }
  const ConvCase nhwc{2, 4, 128, 128, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, false, true, false};
  run_case(nhwc, DType::kFloat16, 320);
}

TEST_F(CudaConvolutionTest, BadArgumentsFailCleanly) {
  TensorImpl x = device_empty(DimVector{1, 3, 8, 8}, DType::kFloat32);
  TensorImpl w = device_empty(DimVector{4, 2, 3, 3}, DType::kFloat32);  // 2 != 3 input channels
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  AtenTensorHandle out = nullptr;
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(x), handle(w), nullptr, one, 2, zero, 2, one, 2, 0, zero, 2, 1, &out), 1);
  EXPECT_NE(last_error_text().find("has 3 channels but 'weight' [4, 2, 3, 3] with groups=1 expects 2"),
            std::string::npos)
      << last_error_text();
  TensorImpl wi = device_empty(DimVector{4, 3, 3, 3}, DType::kInt32);
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(x), handle(wi), nullptr, one, 2, zero, 2, one, 2, 0, zero, 2, 1, &out), 1);
  TensorImpl xi = device_empty(DimVector{1, 3, 8, 8}, DType::kInt32);
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(xi), handle(wi), nullptr, one, 2, zero, 2, one, 2, 0, zero, 2, 1, &out), 1);
  EXPECT_NE(last_error_text().find("UNIMPLEMENTED"), std::string::npos) << last_error_text();
  const int64_t big[2] = {9, 9};
  TensorImpl w2 = device_empty(DimVector{4, 3, 3, 3}, DType::kFloat32);
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(x), handle(w2), nullptr, one, 2, zero, 2, big, 2, 0, zero, 2, 1, &out), 1);
  EXPECT_NE(last_error_text().find("larger than the padded input"), std::string::npos) << last_error_text();
  // The same rules as the CPU's (the op layer's): a stride list is required.
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(x), handle(w2), nullptr, nullptr, 0, zero, 2, one, 2, 0, zero, 2, 1,
                                        &out),
            1);
  EXPECT_NE(last_error_text().find("'stride' has 0 values"), std::string::npos) << last_error_text();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace aotirt
