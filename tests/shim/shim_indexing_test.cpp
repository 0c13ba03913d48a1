// Bad input to the indexing ops (tests/ops checks their values against
// torch): out-of-range indices are INVALID_ARGUMENT naming the index and the
// size, and nothing is written or returned; unsupported dtypes are
// UNIMPLEMENTED; the optional-index list reads null entries as "whole dim".
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shim/abi/cpu_indexing.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::data_of;
using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kFloat = 6, kInt64 = 4, kInt32 = 3, kBool = 11, kUInt8 = 0, kComplex64 = 9, kFloat64 = 7;

void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t, int32_t device = 0) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, device, 0, t->out()),
            0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code) << get_last_error().message(); }

TEST(ShimIndexingTest, NullEntriesIndexWholeDims) {
  std::vector<float> x = {0, 1, 2, 3, 4, 5};  // [2, 3]
  std::vector<int64_t> cols = {2, -3};
  Handle self, idx, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(cols.data(), {2}, kInt64, &idx);
  const AtenTensorHandle col = idx;
  const AtenTensorHandle* list[] = {nullptr, &col};
  ASSERT_EQ(aoti_torch_cpu_index_Tensor(self, list, 2, out.out()), 0);
  const float* r = data_of<float>(out);
  EXPECT_EQ(r[0], 2);  // self[:, [2, 0]]
  EXPECT_EQ(r[1], 0);
  EXPECT_EQ(r[2], 5);
  EXPECT_EQ(r[3], 3);
}

TEST(ShimIndexingTest, OutOfRangeIndexIsNamedAndNothingReturned) {
  std::vector<float> x(6, 1.0f), v(3, 2.0f);
  std::vector<int64_t> bad = {0, 5}, neg = {-3};
  std::vector<int32_t> bad32 = {3};
  Handle self, ib, in, i32, values, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(bad.data(), {2}, kInt64, &ib);
  make(neg.data(), {1}, kInt64, &in);
  make(bad32.data(), {1}, kInt32, &i32);
  make(v.data(), {3}, kFloat, &values);
  const AtenTensorHandle hb = ib, hn = in, h32 = i32;
  const AtenTensorHandle* l1[] = {&hb};
  expect_failure(aoti_torch_cpu_index_Tensor(self, l1, 1, out.out()),
                 "index 5 is out of bounds for dimension 0 with size 2");
  expect_code(StatusCode::kInvalidArgument);
  const AtenTensorHandle* l2[] = {&hn};
  expect_failure(aoti_torch_cpu_index_put(self, l2, 1, values, 1, out.out()),
                 "index -3 is out of bounds for dimension 0 with size 2");
  expect_code(StatusCode::kInvalidArgument);
  const AtenTensorHandle* l3[] = {nullptr, &h32};
  Handle one;
  make(v.data(), {1}, kFloat, &one);
  expect_failure(aoti_torch_cpu_index_put(self, l3, 2, one, 0, out.out()),
                 "index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(out.h, nullptr);
  for (float f : x) EXPECT_EQ(f, 1.0f);  // self untouched
}

TEST(ShimIndexingTest, IndexListRulesAreTorchs) {
  std::vector<float> x(6, 1.0f), fidx = {0.0f};
  std::vector<int64_t> i0 = {0};
  std::vector<uint8_t> mask3 = {1, 0, 1}, mask0 = {1};
  Handle self, fi, ii, m3, m0, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(fidx.data(), {1}, kFloat, &fi);
  make(i0.data(), {1}, kInt64, &ii);
  make(mask3.data(), {3}, kBool, &m3);
  make(mask0.data(), {}, kBool, &m0);
  const AtenTensorHandle hf = fi, hi = ii, hm3 = m3, hm0 = m0, null_handle = nullptr;
  const AtenTensorHandle* three[] = {&hi, &hi, &hi};
  expect_failure(aoti_torch_cpu_index_Tensor(self, three, 3, out.out()),
                 "too many indices for tensor of dimension 2 (got 3)");
  const AtenTensorHandle* fl[] = {&hf};
  expect_failure(aoti_torch_cpu_index_Tensor(self, fl, 1, out.out()), "must be long, int, byte or bool");
  expect_code(StatusCode::kInvalidArgument);
  const AtenTensorHandle* ml[] = {&hm3};
  expect_failure(aoti_torch_cpu_index_Tensor(self, ml, 1, out.out()),
                 "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3]");
  const AtenTensorHandle* m0l[] = {&hm0};
  expect_failure(aoti_torch_cpu_index_Tensor(self, m0l, 1, out.out()), "0-d mask");
  expect_code(StatusCode::kUnimplemented);
  const AtenTensorHandle* none[] = {nullptr, nullptr};
  expect_failure(aoti_torch_cpu_index_Tensor(self, none, 2, out.out()), "at least one index must be provided");
  const AtenTensorHandle* nh[] = {&null_handle};
  expect_failure(aoti_torch_cpu_index_Tensor(self, nh, 1, out.out()), "index 0 points to a null tensor handle");
  expect_failure(aoti_torch_cpu_index_Tensor(self, nullptr, 1, out.out()), "'indices' is null");
  const AtenTensorHandle* ok[] = {&hi};
  expect_failure(aoti_torch_cpu_index_Tensor(self, ok, 1, nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimIndexingTest, IndexPutValuesMustMatch) {
  std::vector<float> x(6, 1.0f), v3(3, 2.0f);
  std::vector<double> vd(3, 2.0);
  std::vector<int64_t> i0 = {0, 1};
  Handle self, ii, vf, vdh, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(i0.data(), {2}, kInt64, &ii);
  make(vd.data(), {3}, kFloat64, &vdh);
  make(v3.data(), {3, 1}, kFloat, &vf);
  const AtenTensorHandle hi = ii;
  const AtenTensorHandle* l[] = {nullptr, &hi};
  expect_failure(aoti_torch_cpu_index_put(self, l, 2, vdh, 0, out.out()),
                 "Index put requires the source and destination dtypes match, got float32 for the destination and "
                 "float64 for the source");
  expect_failure(aoti_torch_cpu_index_put(self, l, 2, vf, 0, out.out()),
                 "value tensor of shape [3, 1] cannot be broadcast to indexing result of shape [2, 2]");
  std::vector<float> c(12, 0.0f);
  Handle cx;
  make(c.data(), {2, 3}, kComplex64, &cx);
  expect_failure(aoti_torch_cpu_index_put(cx, l, 2, vf, 0, out.out()), "complex64");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimIndexingTest, ScatterRefusesWhatTorchRefuses) {
  std::vector<float> x(6, 1.0f), o(6, 0.0f), src(6, 2.0f), small(2, 0.0f);
  std::vector<double> od(6, 0.0);
  std::vector<int64_t> big = {0, 2, 0}, neg = {0, -1, 0}, ok = {1, 0, 1};
  std::vector<int16_t> i16 = {0, 0, 0};
  Handle self, out, outd, outs, s, ib, in, io, i16h;
  make(x.data(), {2, 3}, kFloat, &self);
  make(o.data(), {2, 3}, kFloat, &out);
  make(od.data(), {2, 3}, kFloat64, &outd);
  make(small.data(), {2}, kFloat, &outs);
  make(src.data(), {2, 3}, kFloat, &s);
  make(big.data(), {1, 3}, kInt64, &ib);
  make(neg.data(), {1, 3}, kInt64, &in);
  make(ok.data(), {1, 3}, kInt64, &io);
  make(i16.data(), {1, 3}, 2, &i16h);
  expect_failure(aoti_torch_cpu_scatter_src_out(out, self, 0, ib, s),
                 "index 2 is out of bounds for dimension 0 with size 2");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_scatter_value_out(out, self, 0, in, 3.0),
                 "index -1 is out of bounds for dimension 0 with size 2");
  expect_failure(aoti_torch_cpu_scatter_reduce_two_out(out, self, 0, io, s, "max", 1),
                 "reduce argument must be either sum, prod, mean, amax or amin, got max");
  expect_failure(aoti_torch_cpu_scatter_reduce_two_out(out, self, 0, io, s, nullptr, 1), "'reduce' is null");
  expect_failure(aoti_torch_cpu_scatter_src_out(out, self, 0, io, nullptr), "'src' is a null tensor handle");
  expect_failure(aoti_torch_cpu_scatter_src_out(out, self, 0, i16h, s), "Expected dtype int32/int64 for index");
  expect_failure(aoti_torch_cpu_scatter_src_out(outd, self, 0, io, s),
                 "Expected out tensor to have dtype float32, but got float64 instead");
  expect_failure(aoti_torch_cpu_scatter_src_out(out, self, 2, io, s), "dim 2 is out of range");
  expect_failure(aoti_torch_cpu_scatter_src_out(outs, self, 0, io, s),
                 "'out' has shape [2] and must be resized to [2, 3], but its storage is a borrowed buffer");
  for (float f : o) EXPECT_EQ(f, 0.0f);  // the failed calls wrote nothing
  std::vector<uint8_t> b(6, 1), ob(6, 0);
  Handle bs, bo;
  make(b.data(), {2, 3}, kBool, &bs);
  make(ob.data(), {2, 3}, kBool, &bo);
  expect_failure(aoti_torch_cpu_scatter_reduce_two_out(bo, bs, 0, io, bs, "mean", 1), "reduce=mean");
  expect_code(StatusCode::kUnimplemented);
  std::vector<float> c(12, 0.0f);
  Handle cx, co;
  make(c.data(), {2, 3}, kComplex64, &cx);
  make(c.data(), {2, 3}, kComplex64, &co);
  expect_failure(aoti_torch_cpu_scatter_value_out(co, cx, 0, io, 1.0), "complex64");
  expect_code(StatusCode::kUnimplemented);
}

TEST(ShimIndexingTest, ScalarsMustFitTheirDtype) {
  std::vector<uint8_t> x(6, 0), o(6, 0), m = {1, 0, 1, 0, 1, 0};
  std::vector<int64_t> idx = {1, 0, 1};
  std::vector<float> v = {-2.0f};
  Handle self, out, ix, mask, mask8, value, ret;
  make(x.data(), {2, 3}, kUInt8, &self);
  make(o.data(), {2, 3}, kUInt8, &out);
  make(idx.data(), {1, 3}, kInt64, &ix);
  make(m.data(), {2, 3}, kBool, &mask);
  make(m.data(), {2, 3}, kUInt8, &mask8);
  make(v.data(), {1}, kFloat, &value);
  expect_failure(aoti_torch_cpu_scatter_value_out(out, self, 0, ix, -2.0),
                 "value -2 cannot be converted to type uint8 without overflow");
  expect_code(StatusCode::kInvalidArgument);
  // One value under a lone mask is torch's masked_fill: converted, checked.
  const AtenTensorHandle hm = mask, hm8 = mask8;
  const AtenTensorHandle* l[] = {&hm};
  expect_failure(aoti_torch_cpu_index_put(self, l, 1, value, 0, ret.out()),
                 "value -2 cannot be converted to type uint8 without overflow");
  const AtenTensorHandle* l8[] = {&hm8};
  expect_failure(aoti_torch_cpu_index_put(self, l8, 1, value, 0, ret.out()),
                 "masked_fill_ only supports boolean masks, but got mask with dtype uint8");
  EXPECT_EQ(ret.h, nullptr);
  for (uint8_t b : o) EXPECT_EQ(b, 0);
}

TEST(ShimIndexingTest, ScatterWritesOutOnly) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, o(6, -1.0f), src = {10, 20, 30, 40, 50, 60};
  std::vector<int64_t> idx = {1, 0, 1};
  Handle self, out, s, ix;
  make(x.data(), {2, 3}, kFloat, &self);
  make(o.data(), {2, 3}, kFloat, &out);
  make(src.data(), {2, 3}, kFloat, &s);
  make(idx.data(), {1, 3}, kInt64, &ix);
  ASSERT_EQ(aoti_torch_cpu_scatter_reduce_two_out(out, self, 0, ix, s, "sum", 1), 0);
  const std::vector<float> want = {1, 22, 3, 14, 5, 36};
  EXPECT_EQ(o, want);
  EXPECT_EQ(x[1], 2.0f);  // self untouched
}

TEST(ShimIndexingTest, IndexReduceRules) {
  std::vector<float> x(6, 1.0f), src(6, 2.0f);
  std::vector<int64_t> big = {0, 2}, neg = {0, -1}, ok = {0, 1};
  Handle self, s, ib, in, io, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(src.data(), {2, 3}, kFloat, &s);
  make(big.data(), {2}, kInt64, &ib);
  make(neg.data(), {2}, kInt64, &in);
  make(ok.data(), {2}, kInt64, &io);
  expect_failure(aoti_torch_cpu_index_reduce(self, 0, io, s, "sum", 1, out.out()),
                 "Expected reduce to be one of prod, mean, amax or amin but got sum");
  expect_failure(aoti_torch_cpu_index_reduce(self, 0, ib, s, "prod", 1, out.out()),
                 "index 2 is out of bounds for dimension 0 with size 2");
  expect_failure(aoti_torch_cpu_index_reduce(self, 0, in, s, "amax", 1, out.out()),
                 "index -1 is out of bounds for dimension 0 with size 2");
  expect_failure(aoti_torch_cpu_index_reduce(self, 1, io, s, "amax", 1, out.out()),
                 "Number of indices (2) should be equal to source.size(dim): (3), for dim: 1");
  std::vector<uint8_t> b(6, 1);
  Handle bs;
  make(b.data(), {2, 3}, kBool, &bs);
  expect_failure(aoti_torch_cpu_index_reduce(bs, 0, io, bs, "prod", 1, out.out()), "bool");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimIndexingTest, NonzeroAndMaskedRules) {
  std::vector<float> x = {0, 1, 0, 2, 0, 3};
  std::vector<uint8_t> m8 = {1, 0, 1};
  std::vector<uint8_t> mb = {1, 1, 1, 1, 1, 1};
  std::vector<float> few(2, 9.0f);
  Handle self, mask8, maskb, src, out;
  make(x.data(), {2, 3}, kFloat, &self);
  make(m8.data(), {3}, kUInt8, &mask8);
  make(mb.data(), {2, 3}, kBool, &maskb);
  make(few.data(), {2}, kFloat, &src);
  expect_failure(aoti_torch_cpu_nonzero_static(self, -1, 0, out.out()), "'size' must be an non-negative integer");
  expect_failure(aoti_torch_cpu_masked_select(self, mask8, out.out()), "expected BoolTensor for mask");
  expect_failure(aoti_torch_cpu_masked_scatter(self, mask8, src, out.out()), "only supports boolean masks");
  expect_failure(aoti_torch_cpu_masked_scatter(self, maskb, src, out.out()),
                 "Number of elements of source < number of ones in mask");
  EXPECT_EQ(out.h, nullptr);
  ASSERT_EQ(aoti_torch_nonzero(self, out.out()), 0);
  int64_t* sizes = nullptr;
  ASSERT_EQ(aoti_torch_get_sizes(out, &sizes), 0);
  EXPECT_EQ(sizes[0], 3);
  EXPECT_EQ(sizes[1], 2);
}

}  // namespace
}  // namespace aotirt
