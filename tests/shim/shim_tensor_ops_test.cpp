// Bad input to the tensor-structure ops (tests/ops/test_tensor_ops.py checks
// their values against torch): each refusal's message and code. Also the
// device-generic shims on a stand-in device: they allocate, zero and copy
// through the device registry, and the forwarders (aoti_torch_mm_out & co.)
// refuse, naming op and device, where the device has no such op.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "core/host_copy.h"
#include "device/device.h"
#include "shim/abi/cpu_elementwise.h"
#include "shim/abi/cpu_indexing.h"
#include "shim/abi/cpu_selection.h"
#include "shim/abi/cpu_tensor.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::data_of;
using shim_test::expect_failure;
using shim_test::Handle;

constexpr int32_t kF32 = 6, kI32 = 3, kU8 = 0, kBool = 11, kU16 = 27, kC64 = 9;

// A contiguous tensor of |dtype| (c10 code) over |data| on device |device_type|:|index|.
void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t, int32_t device_type = 0,
          int32_t index = 0) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, device_type, index, t->out()),
            0);
}

void expect_code(StatusCode code) { EXPECT_EQ(get_last_error().code(), code) << get_last_error().to_string(); }

TEST(ShimTensorOpsTest, ViewsNameBadDimsAndRanges) {
  std::vector<float> data(24, 1.0f);
  Handle t, scalar, out;
  make(data.data(), {2, 3, 4}, kF32, &t);
  make(data.data(), {}, kF32, &scalar);
  const int64_t repeated[] = {0, 0, 1};
  expect_failure(aoti_torch_cpu_permute(t, repeated, 3, out.out()), "permute got dim 0 twice");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_permute(t, repeated, 2, out.out()), "permute got 2 dims for a tensor of shape");
  expect_failure(aoti_torch_cpu_narrow(t, 3, 0, 1, out.out()), "dim 3 is out of range");
  expect_failure(aoti_torch_cpu_narrow(t, 1, 2, 2, out.out()), "narrow start 2 + length 2 exceeds dimension 1");
  expect_failure(aoti_torch_aten_narrow(t, 1, -4, 1, out.out()), "narrow start -4 is out of range");
  expect_failure(aoti_torch_aten_narrow(scalar, 0, 0, 1, out.out()), "0-d tensor");
  expect_failure(aoti_torch_cpu_slice_Tensor(t, 0, nullptr, nullptr, 0, out.out()), "slice step 0 must be positive");
  expect_failure(aoti_torch_cpu_squeeze_dim(t, -4, out.out()), "dim -4 is out of range");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_permute(nullptr, repeated, 3, out.out()), "null tensor handle");
  expect_failure(aoti_torch_cpu_narrow(t, 0, 0, 1, nullptr), "output pointer");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimTensorOpsTest, ReshapeNamesImpossibleShapes) {
  std::vector<float> data(24, 1.0f);
  Handle t, empty, out;
  make(data.data(), {4, 6}, kF32, &t);
  make(data.data(), {0, 3}, kF32, &empty);
  const int64_t two_infer[] = {-1, -1}, bad[] = {5, -1}, negative[] = {-2, 12}, zero_infer[] = {-1, 0};
  expect_failure(aoti_torch_cpu_reshape(t, two_infer, 2, out.out()), "only one dimension");
  expect_failure(aoti_torch_cpu_reshape(t, bad, 2, out.out()), "shape [5, -1] is invalid for an input of 24");
  expect_failure(aoti_torch_cpu_reshape(t, negative, 2, out.out()), "invalid size -2 at index 0");
  expect_failure(aoti_torch_cpu_reshape(empty, zero_infer, 2, out.out()), "the -1 could be any size");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimTensorOpsTest, DtypeViewsFollowTorchsRules) {
  std::vector<float> data(24, 1.0f);
  Handle f, i, odd, out;
  make(data.data(), {4, 6}, kF32, &f);
  make(data.data(), {4, 6}, kI32, &i);
  make(data.data(), {3, 3}, kF32, &odd);
  expect_failure(aoti_torch_cpu_view_as_complex(i, out.out()), "needs a float32, float64 or float16 tensor");
  expect_failure(aoti_torch_cpu_view_as_complex(f, out.out()), "last dimension of size 2");
  expect_failure(aoti_torch_view_as_real(f, out.out()), "view_as_real needs a complex tensor, got float32");
  expect_failure(aoti_torch_cpu_view_as_real(f, out.out()), "needs a complex tensor");
  expect_failure(aoti_torch_view_dtype(odd, 7, out.out()), "the last size must be divisible by 2");
  expect_failure(aoti_torch_cpu_view_dtype(f, 99, out.out()), "invalid dtype code 99");
  expect_code(StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
  // A view shares the input's memory.
  ASSERT_EQ(aoti_torch_cpu_view_dtype(f, kI32, out.out()), 0);
  EXPECT_EQ(data_of<float>(out), data.data());
}

TEST(ShimTensorOpsTest, CatRefusesWhatTorchRefuses) {
  std::vector<float> data(24, 1.0f);
  Handle a, b, s, u, out;
  make(data.data(), {2, 3}, kF32, &a);
  make(data.data(), {2, 4}, kF32, &b);
  make(data.data(), {}, kF32, &s);
  make(data.data(), {2, 3}, kU16, &u);
  AtenTensorHandle ab[] = {a, b}, as[] = {a, s}, au[] = {a, u};
  expect_failure(aoti_torch_cpu_cat(ab, 2, 0, out.out()), "sizes of tensors must match except in dimension 0");
  expect_failure(aoti_torch_cpu_cat(as, 2, 0, out.out()), "0-d tensor (at position 1) cannot be concatenated");
  expect_failure(aoti_torch_cpu_cat(ab, 0, 0, out.out()), "non-empty list");
  expect_failure(aoti_torch_cpu_cat(ab, 2, 2, out.out()), "dim 2 is out of range");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_cat(au, 2, 0, out.out()), "promotion of float32 with uint16 is not supported");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
  ASSERT_EQ(aoti_torch_cpu_cat(ab, 2, 1, out.out()), 0);
  int64_t size = 0;
  ASSERT_EQ(aoti_torch_get_size(out, 1, &size), 0);
  EXPECT_EQ(size, 7);
}

TEST(ShimTensorOpsTest, PadNamesModesAndSizes) {
  std::vector<float> data(30, 1.0f);
  std::vector<uint8_t> bytes(30, 1);
  Handle t, flags, small, out;
  make(data.data(), {2, 3, 5}, kF32, &t);
  make(bytes.data(), {2, 3, 5}, kBool, &flags);
  make(bytes.data(), {2, 3, 5}, kU8, &small);
  const int64_t one[] = {1, 1}, odd[] = {1, 1, 1}, big[] = {5, 0}, crop[] = {-3, 4}, many[] = {1, 1, 1, 1, 1, 1, 1, 1};
  double value = 1.0, negative = -1.0;
  expect_failure(aoti_torch_cpu_pad(t, one, 2, "wrap", nullptr, out.out()), "unknown padding mode \"wrap\"");
  expect_failure(aoti_torch_cpu_pad(t, odd, 3, "constant", nullptr, out.out()), "must be divisible by 2");
  expect_failure(aoti_torch_cpu_pad(t, many, 8, "constant", nullptr, out.out()), "at most twice");
  expect_failure(aoti_torch_cpu_pad(t, one, 2, "reflect", &value, out.out()), "takes no value argument");
  expect_failure(aoti_torch_aten_pad(t, big, 2, "reflect", nullptr, out.out()),
                 "reflect padding (5, 0) must be less than dimension 2 of size 5");
  expect_failure(aoti_torch_aten_pad(t, many, 6, "circular", nullptr, out.out()),
                 "padding size 6 is not supported for a 3-d input");
  expect_failure(aoti_torch_cpu_pad(small, one, 2, "constant", &negative, out.out()),
                 "value -1 cannot be converted to uint8 without overflow");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_cpu_pad(flags, one, 2, "replicate", nullptr, out.out()), "not implemented for bool");
  expect_code(StatusCode::kUnimplemented);
  // Cropping 3 of 5 leaves 2 elements, too few to reflect 4 from: torch reads
  // elements the output no longer holds.
  expect_failure(aoti_torch_cpu_pad(t, crop, 2, "reflect", nullptr, out.out()), "reaches past the part");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimTensorOpsTest, ResizeRefusesWhatItCannotDo) {
  std::vector<float> data(6, 1.0f);
  Handle borrowed, owned;
  make(data.data(), {2, 3}, kF32, &borrowed);
  const int64_t grow[] = {4, 4}, shrink[] = {3, 2}, negative[] = {-1}, sizes[] = {2, 3};
  int32_t preserve = 1, channels_last = 2, bad_format = 9;
  expect_failure(aoti_torch_cpu_resize_(borrowed, grow, 2, nullptr), "not owned by aotirt and cannot grow");
  expect_failure(aoti_torch_cpu_resize_(borrowed, negative, 1, nullptr), "negative size -1");
  expect_failure(aoti_torch_cpu_resize_(borrowed, shrink, 2, &preserve), "preserve_format");
  expect_failure(aoti_torch_cpu_resize_(borrowed, shrink, 2, &channels_last), "channels_last needs a 4-d tensor");
  expect_failure(aoti_torch_cpu_resize_(borrowed, shrink, 2, &bad_format), "invalid memory format code 9");
  expect_failure(aoti_torch_cpu_resize_as_(borrowed, nullptr, nullptr), "'the_template' is a null tensor handle");
  expect_code(StatusCode::kInvalidArgument);
  // Shrinking borrowed memory is fine; growing owned memory keeps the bytes.
  ASSERT_EQ(aoti_torch_cpu_resize_(borrowed, shrink, 2, nullptr), 0);
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, nullptr, kF32, 0, 0, owned.out()), 0);
  for (int i = 0; i < 6; ++i) data_of<float>(owned)[i] = static_cast<float>(i);
  ASSERT_EQ(aoti_torch_cpu_resize_(owned, grow, 2, nullptr), 0);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(data_of<float>(owned)[i], static_cast<float>(i));
  int64_t numel = 0;
  ASSERT_EQ(aoti_torch_get_numel(owned, &numel), 0);
  EXPECT_EQ(numel, 16);
}

TEST(ShimTensorOpsTest, SetAndFactoriesCheckTheirArguments) {
  std::vector<float> data(6, 1.0f);
  Handle f, i, out;
  make(data.data(), {2, 3}, kF32, &f);
  make(data.data(), {2, 3}, kI32, &i);
  expect_failure(aoti_torch_cpu_set__source_Tensor(f, i), "cannot set a float32 tensor to a int32 source");
  const int64_t sizes[] = {2, 3};
  int32_t sparse = 1, cuda = 1, int_dtype = 4, bad_dtype = 99;
  expect_failure(aoti_torch_cpu_hann_window(-1, nullptr, nullptr, nullptr, 0, nullptr, out.out()),
                 "window_length -1 must be non-negative");
  expect_failure(aoti_torch_cpu_hann_window(4, &int_dtype, nullptr, nullptr, 0, nullptr, out.out()),
                 "hann_window needs a floating dtype, got int64");
  expect_failure(aoti_torch_cpu__efficientzerotensor(sizes, 2, nullptr, nullptr, &cuda, 0, nullptr, out.out()),
                 "a CPU op was asked for a tensor on cuda:0");
  expect_failure(aoti_torch_aten_full(sizes, 2, 0.0, &bad_dtype, nullptr, nullptr, 0, nullptr, out.out()),
                 "invalid dtype code 99");
  expect_failure(aoti_torch_aten_full(sizes, 2, 1e300, nullptr, nullptr, nullptr, 0, nullptr, out.out()),
                 "cannot be converted to float32 without overflow");
  expect_code(StatusCode::kInvalidArgument);
  expect_failure(aoti_torch_aten_new_zeros(f, sizes, 2, nullptr, &sparse, nullptr, 0, nullptr, out.out()),
                 "layout 1 is not supported (only strided)");
  expect_code(StatusCode::kUnimplemented);
  EXPECT_EQ(out.h, nullptr);
}

// A stand-in device whose memory is host memory: the generic shims must
// reach it only through the registry (allocator, copy, zero).
namespace stand_in {
std::atomic<int> copies{0}, zeros{0};

class HostBackedDevice final : public Device {
 public:
  explicit HostBackedDevice(int index) : index_(index) {}
  DeviceId id() const override { return DeviceId{DeviceType::kMps, index_}; }
  std::string description() const override { return "tensor ops test device"; }
  Allocator& allocator() override { return get_device(DeviceId{}).value()->allocator(); }
  Status copy(const TensorImpl& dst, const TensorImpl& src, bool) override {
    copies++;
    return host_copy_strided(dst, src);
  }
  Status zero(const TensorImpl& dst) override {
    zeros++;
    return get_device(DeviceId{}).value()->zero(dst);
  }
  Status synchronize() override { return Status(); }

 private:
  int index_;
};

Result<int> probe() { return 16; }
Result<std::unique_ptr<Device>> create(int index) { return std::unique_ptr<Device>(new HostBackedDevice(index)); }
const BackendInfo kInfo{DeviceType::kMps, "standin", probe, create};
constexpr int32_t kMpsCode = 13, kIndex = 11;

struct Scope {
  Scope() { set_backend_for_testing(&kInfo); }
  ~Scope() { set_backend_for_testing(nullptr); }
};
}  // namespace stand_in

TEST(ShimTensorOpsTest, GenericOpsWorkThroughTheDeviceRegistry) {
  using namespace stand_in;
  Scope scope;
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Handle t, zeros_out, full_out, padded, narrowed, real;
  make(data.data(), {2, 3}, kF32, &t, kMpsCode, kIndex);
  const int64_t sizes[] = {2, 2};
  const int zeros_before = zeros.load(), copies_before = copies.load();
  ASSERT_EQ(aoti_torch_aten_new_zeros(t, sizes, 2, nullptr, nullptr, nullptr, 0, nullptr, zeros_out.out()), 0)
      << get_last_error().to_string();
  int32_t device_type = -1, device_index = -1;
  ASSERT_EQ(aoti_torch_get_device_type(zeros_out, &device_type), 0);
  ASSERT_EQ(aoti_torch_get_device_index(zeros_out, &device_index), 0);
  EXPECT_EQ(device_type, kMpsCode);
  EXPECT_EQ(device_index, kIndex);
  EXPECT_GT(zeros.load(), zeros_before);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(data_of<float>(zeros_out)[i], 0.0f);

  int32_t mps = kMpsCode;
  ASSERT_EQ(aoti_torch_aten_full(sizes, 2, 2.5, nullptr, nullptr, &mps, kIndex, nullptr, full_out.out()), 0)
      << get_last_error().to_string();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(data_of<float>(full_out)[i], 2.5f);

  const int64_t pads[] = {1, 1};
  ASSERT_EQ(aoti_torch_aten_pad(t, pads, 2, "replicate", nullptr, padded.out()), 0) << get_last_error().to_string();
  const float want[] = {1, 1, 2, 3, 3, 4, 4, 5, 6, 6};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(data_of<float>(padded)[i], want[i]) << i;
  EXPECT_GT(copies.load(), copies_before);

  ASSERT_EQ(aoti_torch_aten_narrow(t, 1, 1, 2, narrowed.out()), 0);
  EXPECT_EQ(data_of<float>(narrowed), data.data() + 1);
  std::vector<float> pairs(4, 0.0f);
  Handle complex;
  make(pairs.data(), {2}, kC64, &complex, kMpsCode, kIndex);
  ASSERT_EQ(aoti_torch_view_as_real(complex, real.out()), 0);
  ASSERT_EQ(aoti_torch_get_device_type(real, &device_type), 0);
  EXPECT_EQ(device_type, kMpsCode);
}

TEST(ShimTensorOpsTest, ForwardersNameADeviceWithoutTheOp) {
  using namespace stand_in;
  Scope scope;
  std::vector<float> data(4, 1.0f);
  Handle a, out, ret;
  make(data.data(), {2, 2}, kF32, &a, kMpsCode, kIndex);
  make(data.data(), {2, 2}, kF32, &out, kMpsCode, kIndex);
  expect_failure(aoti_torch_mm_out(out, a, a), "mm_out is not available for tensors on mps:11");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_bmm_out(out, a, a), "no aoti_torch_standin_bmm_out");
  expect_failure(aoti_torch_addmm_out(out, a, a, a, 1.0f, 1.0f), "addmm_out is not available");
  const int64_t ones[] = {1, 1}, zeros2[] = {0, 0};
  expect_failure(aoti_torch_convolution(a, a, nullptr, ones, 2, zeros2, 2, ones, 2, 0, zeros2, 2, 1, ret.out()),
                 "convolution is not available for tensors on mps:11");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_nonzero(a, ret.out()), "nonzero is not available for tensors on mps:11");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_mm_out(out, nullptr, a), "'self' is a null tensor handle");
  std::vector<int64_t> reps = {1, 2};
  Handle r;
  make(reps.data(), {2}, 4 /* int64 */, &r, kMpsCode, kIndex);
  expect_failure(aoti_torch_repeat_interleave_Tensor(r, nullptr, ret.out()),
                 "repeat_interleave_Tensor is not available for tensors on mps:11");
  expect_code(StatusCode::kUnimplemented);
  // The elementwise forwarders: amax to aotirt's own device op, subtract to
  // add_Tensor, fill_ to fill__Scalar.
  const int64_t dim0[] = {0};
  expect_failure(aoti_torch_aten_amax(a, dim0, 1, 0, ret.out()), "no aoti_torch_standin_aotirt_amax");
  expect_code(StatusCode::kUnimplemented);
  expect_failure(aoti_torch_aten_subtract_Tensor(a, a, 1.0, ret.out()), "add_Tensor is not available for tensors on mps:11");
  expect_failure(aoti_torch_aten_fill__Scalar(a, 1.0), "no aoti_torch_standin_fill__Scalar");
  EXPECT_EQ(ret.h, nullptr);
}

TEST(ShimTensorOpsTest, ForwardersReachTheCpuOps) {
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c(4, 0.0f);
  Handle ha, hb, hc;
  make(a.data(), {2, 2}, kF32, &ha);
  make(b.data(), {2, 2}, kF32, &hb);
  make(c.data(), {2, 2}, kF32, &hc);
  ASSERT_EQ(aoti_torch_mm_out(hc, ha, hb), 0) << get_last_error().to_string();
  EXPECT_EQ(c[0], 19.0f);
  EXPECT_EQ(c[3], 50.0f);
  ASSERT_EQ(aoti_torch_addmm_out(hc, hc, ha, hb, 0.5f, 1.0f), 0) << get_last_error().to_string();
  EXPECT_EQ(c[0], 19.0f * 1.5f);
  // The device op's own refusal comes through.
  Handle wide;
  std::vector<float> w(6, 1.0f);
  make(w.data(), {3, 2}, kF32, &wide);
  EXPECT_EQ(aoti_torch_mm_out(hc, ha, wide), 1);
}

}  // namespace
}  // namespace aotirt
