// Bad input to the selection family (kthvalue, mode, median, nanmedian,
// searchsorted, bucketize, histc, histogram, histogramdd, repeat_interleave,
// segment_reduce; tests/ops checks their values against torch): each
// refusal names the problem with the right code, and nothing is returned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "shim/abi/cpu_selection.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::data_of;
using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kInt32 = 3, kInt64 = 4, kFloat32 = 6, kComplex64 = 9, kBool = 11, kBFloat16 = 15;

// A contiguous tensor of |sizes| and |dtype| (c10 code) over |data|, on
// device type |device| (0: CPU).
void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t, int32_t device = 0) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, device, 0, t->out()),
            0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code) << get_last_error().message(); }

TEST(ShimSelectionTest, KthvalueAndModeRefuseWhatTorchRefuses) {
  std::vector<float> data(12, 1.0f);
  Handle t, empty, values, indices;
  make(data.data(), {3, 4}, kFloat32, &t);
  expect_failure(aoti_torch_cpu_kthvalue(t, 5, 1, 0, values.out(), indices.out()), "k 5 out of range");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_kthvalue(t, 0, 1, 0, values.out(), indices.out()), "k 0 out of range");
  expect_failure(aoti_torch_cpu_kthvalue(t, 1, 2, 0, values.out(), indices.out()), "dim 2 is out of range");
  expect_failure(aoti_torch_cpu_mode(t, -3, 0, values.out(), indices.out()), "expected in [-2, 1]");
  make(data.data(), {0, 3}, kFloat32, &empty);
  expect_failure(aoti_torch_cpu_kthvalue(empty, 1, 0, 0, values.out(), indices.out()),
                 "Expected reduction dim 0 to have non-zero size");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_mode(empty, 0, 1, values.out(), indices.out()),
                 "Expected reduction dim 0 to have non-zero size");
  expect_failure(aoti_torch_cpu_kthvalue(t, 1, 1, 0, values.out(), nullptr), "output pointer");
  expect_failure(aoti_torch_cpu_mode(nullptr, 0, 0, values.out(), indices.out()), "null tensor handle");
  EXPECT_EQ(values.h, nullptr);
  EXPECT_EQ(indices.h, nullptr);
}

TEST(ShimSelectionTest, UnsupportedDtypesAreUnimplemented) {
  std::vector<float> data(24, 1.0f);
  Handle flags, complex, values, indices, out;
  make(data.data(), {4}, kBool, &flags);
  expect_failure(aoti_torch_cpu_kthvalue(flags, 1, 0, 0, values.out(), indices.out()), "dtype bool");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_median(flags, out.out()), "dtype bool");
  expect_code(StatusCode::kUnimplemented);
  make(data.data(), {4}, kComplex64, &complex);
  expect_failure(aoti_torch_cpu_mode(complex, 0, 0, values.out(), indices.out()), "complex64");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_nanmedian(complex, out.out()), "complex64");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_median(complex, nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimSelectionTest, SearchsortedChecksShapesSideAndSorter) {
  std::vector<float> bounds = {1, 2, 3, 4, 5, 6}, vals(6, 2.0f);
  std::vector<int64_t> order = {0, 1, 2, 3, 4, 5}, bad_order = {0, 1, 6, 3, 4, 5};
  std::vector<int32_t> order32(6, 0);
  Handle b1, b2, b0, v, v_rows, sorter, bad_sorter, sorter32, short_sorter, out;
  make(bounds.data(), {6}, kFloat32, &b1);
  make(bounds.data(), {2, 3}, kFloat32, &b2);
  make(bounds.data(), {}, kFloat32, &b0);
  make(vals.data(), {3, 2}, kFloat32, &v);
  make(vals.data(), {2, 3}, kFloat32, &v_rows);
  make(order.data(), {6}, kInt64, &sorter);
  make(bad_order.data(), {6}, kInt64, &bad_sorter);
  make(order32.data(), {6}, kInt32, &sorter32);
  make(order.data(), {5}, kInt64, &short_sorter);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b0, v, 0, 0, nullptr, nullptr, out.out()),
                 "boundaries tensor should have positive dimension");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b2, v, 0, 0, nullptr, nullptr, out.out()),
                 "first N-1 dimensions of boundaries tensor and input value tensor must match");
  expect_failure(aoti_torch_cpu_searchsorted_Scalar(b2, 1.0, 0, 0, nullptr, nullptr, out.out()),
                 "input value can be a scalar only when boundaries tensor dimension is 1");
  const char* middle = "middle";
  const char* left = "left";
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b1, v, 0, 0, &middle, nullptr, out.out()),
                 "side can only be 'left' or 'right' but got middle");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b1, v, 0, 1, &left, nullptr, out.out()),
                 "side and right can't be set to opposites");
  AtenTensorHandle s32 = sorter32, s_short = short_sorter, s_bad = bad_sorter;
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b1, v, 0, 0, nullptr, &s32, out.out()),
                 "sorter must be a tensor of long dtype but got dtype int32");
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b1, v, 0, 0, nullptr, &s_short, out.out()),
                 "boundary and sorter must have the same size");
  expect_failure(aoti_torch_cpu_searchsorted_Scalar(b1, 2.0, 0, 0, nullptr, &s_bad, out.out()),
                 "sorter index out of range");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b1, nullptr, 0, 0, nullptr, nullptr, out.out()),
                 "null tensor handle");
  EXPECT_EQ(out.h, nullptr);
  // The sorted rows and the values agree in their leading dims: this works.
  Handle ok;
  AtenTensorHandle s = sorter;
  ASSERT_EQ(aoti_torch_cpu_searchsorted_Tensor(b2, v_rows, 1, 0, nullptr, nullptr, ok.out()), 0);
  Handle ok2;
  ASSERT_EQ(aoti_torch_cpu_searchsorted_Scalar(b1, 2.5, 0, 0, nullptr, &s, ok2.out()), 0);
  EXPECT_EQ(data_of<int64_t>(ok2)[0], 2);
}

TEST(ShimSelectionTest, SearchDtypesAndBucketizeShape) {
  std::vector<uint8_t> flags = {0, 1, 1};
  std::vector<float> bounds = {1, 2, 3, 4};
  std::vector<float> cvals(8, 0.0f);
  Handle b_bool, v_bool, b2, v, complex, out;
  make(flags.data(), {3}, kBool, &b_bool);
  make(flags.data(), {3}, kBool, &v_bool);
  make(bounds.data(), {2, 2}, kFloat32, &b2);
  make(bounds.data(), {4}, kFloat32, &v);
  make(cvals.data(), {4}, kComplex64, &complex);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(b_bool, v_bool, 0, 0, nullptr, nullptr, out.out()),
                 "compare as bool");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_searchsorted_Tensor(v, complex, 0, 0, nullptr, nullptr, out.out()), "complex64");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_bucketize_Tensor(v, b2, 0, 0, out.out()),
                 "boundaries tensor must be 1 dimension, but got dim(2)");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_bucketize_Tensor(v, v, 0, 0, nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimSelectionTest, HistcChecksBinsAndRange) {
  std::vector<float> data = {1, 2, std::nanf(""), 4};
  std::vector<int64_t> ints = {1, 2, 3, 4};
  Handle t, finite, i, out;
  make(data.data(), {4}, kFloat32, &t);
  make(data.data(), {2}, kFloat32, &finite);
  make(ints.data(), {4}, kInt64, &i);
  expect_failure(aoti_torch_cpu_histc(finite, 0, 0, 1, out.out()), "bins must be > 0, but got 0");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_histc(finite, 3, 3, 1, out.out()), "max must be larger than min");
  expect_failure(aoti_torch_cpu_histc(finite, 3, 0, INFINITY, out.out()), "is not finite");
  // min == max takes the data's extremes, and the NaN among them is refused.
  expect_failure(aoti_torch_cpu_histc(t, 3, 0, 0, out.out()), "range of [nan, nan] is not finite");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_histc(i, 3, 0, 4, out.out()), "dtype int64");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
  // With a range the NaN is simply not counted.
  ASSERT_EQ(aoti_torch_cpu_histc(t, 2, 0, 4, out.out()), 0);
  EXPECT_EQ(data_of<float>(out)[0] + data_of<float>(out)[1], 3.0f);
}

TEST(ShimSelectionTest, HistogramChecksWeightRangeAndDtype) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<double> wide(6, 1.0);
  std::vector<uint16_t> half(6, 0);
  Handle t, t2, w64, w_short, bf, hist, edges;
  make(data.data(), {6}, kFloat32, &t);
  make(data.data(), {3, 2}, kFloat32, &t2);
  make(wide.data(), {6}, 7, &w64);
  make(data.data(), {5}, kFloat32, &w_short);
  make(half.data(), {6}, kBFloat16, &bf);
  AtenTensorHandle w_dtype = w64, w_shape = w_short;
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, nullptr, 0, &w_dtype, 0, hist.out(), edges.out()),
                 "'weight' has dtype float64 but 'self' has dtype float32");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, nullptr, 0, &w_shape, 0, hist.out(), edges.out()),
                 "'weight' has shape [5]");
  const double three[] = {0, 1, 2}, backwards[] = {5, 1}, endless[] = {0, INFINITY};
  const double* p3 = three;
  const double* pb = backwards;
  const double* pe = endless;
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, &p3, 3, nullptr, 0, hist.out(), edges.out()),
                 "range should have 2 elements, but got 3");
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, &pb, 2, nullptr, 0, hist.out(), edges.out()),
                 "min should not exceed max, but got min 5 max 1 for dimension 0");
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, &pe, 2, nullptr, 0, hist.out(), edges.out()),
                 "dimension 0's range [0, inf] is not finite");
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, -1, nullptr, 0, nullptr, 0, hist.out(), edges.out()),
                 "bins must be > 0, but got -1");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_histogram_bin_ct(bf, 4, nullptr, 0, nullptr, 0, hist.out(), edges.out()),
                 "takes float32 and float64 only");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_histogram_bin_ct(t, 4, nullptr, 0, nullptr, 0, hist.out(), nullptr),
                 "output pointer");
  const int64_t bins2[] = {2, 2}, bins1[] = {2};
  expect_failure(aoti_torch_cpu__histogramdd_from_bin_cts(t, bins1, 1, nullptr, 0, nullptr, 0, hist.out()),
                 "input tensor should have at least 2 dimensions");
  expect_failure(aoti_torch_cpu__histogramdd_from_bin_cts(t2, bins1, 1, nullptr, 0, nullptr, 0, hist.out()),
                 "the size of bins (1) must be equal to the innermost dimension of the input (2)");
  const double two[] = {0, 1};
  const double* p2 = two;
  expect_failure(aoti_torch_cpu__histogramdd_from_bin_cts(t2, bins2, 2, &p2, 2, nullptr, 0, hist.out()),
                 "for a 2-dimensional histogram range should have 4 elements, but got 2");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(hist.h, nullptr);
  EXPECT_EQ(edges.h, nullptr);
}

TEST(ShimSelectionTest, RepeatInterleaveChecksRepeats) {
  std::vector<int64_t> reps = {1, -1, 2};
  std::vector<int64_t> good = {1, 0, 2};
  std::vector<float> floats = {1, 2};
  Handle neg, ok, matrix, f, on_cuda, out;
  make(reps.data(), {3}, kInt64, &neg);
  make(good.data(), {3}, kInt64, &ok);
  make(good.data(), {1, 3}, kInt64, &matrix);
  make(floats.data(), {2}, kFloat32, &f);
  make(good.data(), {3}, kInt64, &on_cuda, /*device=*/1);
  expect_failure(aoti_torch_cpu_repeat_interleave_Tensor(neg, nullptr, out.out()), "repeats can not be negative");
  expect_code(StatusCode::kInvalidArgument);
  int64_t wrong = 4, right_size = 3, negative = -1;
  expect_failure(aoti_torch_cpu_repeat_interleave_Tensor(ok, &wrong, out.out()),
                 "allocated size does not match required size");
  expect_failure(aoti_torch_repeat_interleave_Tensor(ok, &negative, out.out()), "output_size -1 is negative");
  expect_failure(aoti_torch_cpu_repeat_interleave_Tensor(matrix, nullptr, out.out()),
                 "only accept 1D vector as repeat");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_repeat_interleave_Tensor(f, nullptr, out.out()), "dtype float32");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_repeat_interleave_Tensor(on_cuda, nullptr, out.out()), "expected a CPU tensor");
  EXPECT_EQ(out.h, nullptr);
  ASSERT_EQ(aoti_torch_repeat_interleave_Tensor(ok, &right_size, out.out()), 0);
  const int64_t* r = data_of<int64_t>(out);
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 2);
  EXPECT_EQ(r[2], 2);
}

TEST(ShimSelectionTest, SegmentReduceChecksArguments) {
  std::vector<float> data(6, 1.0f);
  std::vector<int64_t> lengths = {2, 4}, short_lengths = {2, 3}, negative = {7, -1}, offsets = {0, 4, 2},
                       past = {0, 7}, rows = {3, 3, 3, 3};
  std::vector<int64_t> ints(6, 1);
  Handle d, d2, i, l, ls, ln, o, op, lrows, out;
  make(data.data(), {6}, kFloat32, &d);
  make(data.data(), {2, 3}, kFloat32, &d2);
  make(ints.data(), {6}, kInt64, &i);
  make(lengths.data(), {2}, kInt64, &l);
  make(short_lengths.data(), {2}, kInt64, &ls);
  make(negative.data(), {2}, kInt64, &ln);
  make(offsets.data(), {3}, kInt64, &o);
  make(past.data(), {2}, kInt64, &op);
  make(rows.data(), {4, 1}, kInt64, &lrows);
  AtenTensorHandle hl = l, hls = ls, hln = ln, ho = o, hop = op, hrows = lrows;
  expect_failure(aoti_torch_cpu_segment_reduce(d, "avg", &hl, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "reduce argument must be either sum, prod, mean, amax or amin, got avg");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", nullptr, &hl, nullptr, 0, 0, nullptr, out.out()),
                 "indices based reduction is not supported");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", nullptr, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "either lengths or offsets must be defined");
  expect_failure(aoti_torch_cpu_segment_reduce(i, "sum", &hl, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "dtype int64");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", &hls, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "to sum to data.size(0) = 6 when !unsafe");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", &hln, nullptr, nullptr, 0, 1, nullptr, out.out()),
                 "lengths of row 0 sum past data.size(0) = 6");
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", &hln, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "lengths of row 0 sum past");
  expect_failure(aoti_torch_cpu_segment_reduce(d, "max", nullptr, nullptr, &ho, 0, 0, nullptr, out.out()),
                 "offsets must not decrease");
  expect_failure(aoti_torch_cpu_segment_reduce(d, "max", nullptr, nullptr, &hop, 0, 1, nullptr, out.out()),
                 "reach outside data.size(0) = 6");
  expect_failure(aoti_torch_cpu_segment_reduce(d2, "sum", &hl, nullptr, nullptr, 1, 0, nullptr, out.out()),
                 "expected axis to be the last dimension of lengths");
  expect_failure(aoti_torch_cpu_segment_reduce(d2, "sum", &hrows, nullptr, nullptr, 1, 0, nullptr, out.out()),
                 "must match data's shape [2, 3] in the dimensions before axis 1");
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", &hl, nullptr, nullptr, 1, 0, nullptr, out.out()),
                 "axis 1 is out of range");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_segment_reduce(d, nullptr, &hl, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "null string");
  EXPECT_EQ(out.h, nullptr);
  // A negative length on its own is refused by name.
  std::vector<int64_t> neg_fit = {-1, 7};
  Handle lnf;
  make(neg_fit.data(), {2}, kInt64, &lnf);
  AtenTensorHandle hlnf = lnf;
  expect_failure(aoti_torch_cpu_segment_reduce(d, "sum", &hlnf, nullptr, nullptr, 0, 0, nullptr, out.out()),
                 "lengths contains negative value (-1)");
}

}  // namespace
}  // namespace aotirt
