// Helpers for the CUDA backend tests: skipping (visibly) without a GPU or
// without cuBLASLt/cuDNN, host tensors with random or patterned values,
// strided views, moving tensors between host and device, and comparisons.
#pragma once

#include <gtest/gtest.h>

#include <aotirt/model.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace cuda_test {

// Empty when a CUDA device is usable, else why not.
std::string gpu_unavailable_reason();
std::string cublaslt_unavailable_reason();
std::string cudnn_unavailable_reason();

#define AOTIRT_REQUIRE_GPU()                                                        \
  do {                                                                              \
    std::string aotirt_reason_ = ::aotirt::cuda_test::gpu_unavailable_reason();     \
    if (!aotirt_reason_.empty()) GTEST_SKIP() << "no CUDA GPU: " << aotirt_reason_; \
  } while (0)

#define AOTIRT_REQUIRE_CUBLASLT()                                                          \
  do {                                                                                     \
    AOTIRT_REQUIRE_GPU();                                                                  \
    std::string aotirt_reason_ = ::aotirt::cuda_test::cublaslt_unavailable_reason();       \
    if (!aotirt_reason_.empty()) GTEST_SKIP() << "cuBLASLt unavailable: " << aotirt_reason_; \
  } while (0)

#define AOTIRT_REQUIRE_CUDNN()                                                          \
  do {                                                                                  \
    AOTIRT_REQUIRE_GPU();                                                               \
    std::string aotirt_reason_ = ::aotirt::cuda_test::cudnn_unavailable_reason();       \
    if (!aotirt_reason_.empty()) GTEST_SKIP() << "cuDNN unavailable: " << aotirt_reason_; \
  } while (0)

#define AOTIRT_ASSERT_OK(expr)                          \
  do {                                                  \
    ::aotirt::Status aotirt_st_ = (expr);               \
    ASSERT_TRUE(aotirt_st_.ok()) << aotirt_st_.to_string(); \
  } while (0)

// A GPU test fixture: skips every test of the suite without a GPU.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override { AOTIRT_REQUIRE_GPU(); }
};

constexpr DeviceId kCuda0{DeviceType::kCuda, 0};
constexpr DeviceId kHost{DeviceType::kCpu, 0};

// A new host tensor of |sizes| laid out by |strides| (contiguous when empty),
// with |offset| elements of slack before element 0. Bytes are zero.
TensorImpl host_empty(const DimVector& sizes, DType dtype, const DimVector& strides = {}, int64_t offset = 0);
// The same on the device.
TensorImpl device_empty(const DimVector& sizes, DType dtype, const DimVector& strides = {}, int64_t offset = 0);

// A host tensor whose element i (in row-major order) is uniform in [lo, hi).
TensorImpl host_random(const DimVector& sizes, DType dtype, uint32_t seed, double lo = -1.0, double hi = 1.0);
// Fills every byte of |t|'s storage with a pattern derived from |seed| (for
// same-dtype copies that must move bits exactly).
void fill_bytes(const TensorImpl& t, uint32_t seed);

// A copy of |t| (host or device) on the host, contiguous, same dtype.
TensorImpl to_host(const TensorImpl& t);
// A copy of host |t| on cuda:0 laid out by |strides| (contiguous when empty).
TensorImpl to_device(const TensorImpl& t, const DimVector& strides = {}, int64_t offset = 0);
// A view of |t| with dims |a| and |b| swapped.
TensorImpl transposed(const TensorImpl& t, int64_t a, int64_t b);
// Strides that store dims in the order |perm| (outermost first) densely.
DimVector permuted_strides(const DimVector& sizes, const std::vector<int>& perm);

// Element values in row-major order, as double.
std::vector<double> values(const TensorImpl& t);
// True when the two tensors hold the same bytes element by element.
bool same_bytes(const TensorImpl& a, const TensorImpl& b);

// Largest |a - b| / (atol + rtol * |b|) over elements (<= 1 means within
// tolerance); both tensors host or device, same shape. Mismatched NaNs count
// as infinite.
double max_scaled_error(const TensorImpl& a, const TensorImpl& b, double atol, double rtol);

// Takes the handle's tensor (the handle is deleted).
TensorImpl take(AtenTensorHandle h);

// A 2-d convolution of host |x| and |w| (any float dtypes, any strides), with
// |bias| when not null, through the CPU op in float64: the reference the
// CUDA convolution tests compare with. Undefined (with a test failure) when
// the CPU op refuses it.
TensorImpl reference_conv2d(const TensorImpl& x, const TensorImpl& w, const TensorImpl* bias, const int64_t stride[2],
                            const int64_t padding[2], const int64_t dilation[2]);

// A handle sharing a tensor, deleted when this object goes away; converts to
// AtenTensorHandle, so handle(t) can be passed straight to a shim.
class OwnedHandle {
 public:
  explicit OwnedHandle(const TensorImpl& t);
  ~OwnedHandle();
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  operator AtenTensorHandle() const { return h_; }  // NOLINT

 private:
  AtenTensorHandle h_;
};
inline OwnedHandle handle(const TensorImpl& t) { return OwnedHandle(t); }

// The thread's last error as text (for assertion messages).
std::string last_error_text();

// Calls recorded in a shim profile (aotirt::shim_profile) under names that
// contain |needle|.
double profiled_calls(const std::vector<ShimProfileEntry>& prof, const std::string& needle);

}  // namespace cuda_test

// Lets gtest print DimVector in assertion messages.
void PrintTo(const DimVector& v, std::ostream* os);

}  // namespace aotirt
