#include "cuda_test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>

#include "core/host_copy.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace cuda_test {
namespace {

// The op tests compare with float32 references that TF32 would fail. ctest
// and gpu-check.sh set AOTIRT_CUDA_ALLOW_TF32=0; a run of the binary by hand
// gets the same unless it sets the variable itself. (aotirt reads it at the
// first convolution or GEMM, after this runs.)
const bool kStrictFloat32 = [] { return setenv("AOTIRT_CUDA_ALLOW_TF32", "0", /*overwrite=*/0) == 0; }();

}  // namespace

std::string gpu_unavailable_reason() {
  Result<int> n = device_count(DeviceType::kCuda);
  if (!n.ok()) return n.status().to_string();
  if (n.value() < 1) return "no device";
  return "";
}

std::string cublaslt_unavailable_reason() {
  Result<const CublasLtApi*> api = cublaslt_api();
  return api.ok() ? "" : api.status().to_string();
}

std::string cudnn_unavailable_reason() {
  Result<const CudnnApi*> api = cudnn_api();
  return api.ok() ? "" : api.status().to_string();
}

namespace {
TensorImpl make_empty(const DimVector& sizes, DType dtype, const DimVector& strides, int64_t offset, DeviceId dev) {
  DimVector st = strides.size() || sizes.size() == 0 ? strides : contiguous_strides(sizes);
  if (sizes.size() == 0) st = DimVector();
  TensorImpl probe(StorageRef(), dtype, sizes, st, offset);
  const size_t nbytes = static_cast<size_t>(probe.max_byte_extent()) + dtype_size(dtype);
  Result<TensorImpl> base = empty_contiguous(DimVector{static_cast<int64_t>(nbytes)}, DType::kUInt8, dev);
  EXPECT_TRUE(base.ok()) << base.status().to_string();
  if (!base.ok()) return TensorImpl();
  Result<Device*> d = get_device(dev);
  EXPECT_TRUE(d.ok() && d.value()->zero(base.value()).ok());
  return TensorImpl(base.value().storage(), dtype, sizes, st, offset);
}
}  // namespace

TensorImpl host_empty(const DimVector& sizes, DType dtype, const DimVector& strides, int64_t offset) {
  return make_empty(sizes, dtype, strides, offset, kHost);
}

TensorImpl device_empty(const DimVector& sizes, DType dtype, const DimVector& strides, int64_t offset) {
  return make_empty(sizes, dtype, strides, offset, kCuda0);
}

TensorImpl host_random(const DimVector& sizes, DType dtype, uint32_t seed, double lo, double hi) {
  TensorImpl t = host_empty(sizes, dtype);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  const int64_t n = t.numel();
  char* p = static_cast<char*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) store_from_double(p + i * dtype_size(dtype), dtype, dist(rng));
  return t;
}

void fill_bytes(const TensorImpl& t, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t n = t.storage()->nbytes();
  std::vector<unsigned char> bytes(n);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  if (t.device().is_cpu()) {
    std::memcpy(t.storage()->data(), bytes.data(), n);
  } else {
    TensorImpl src(StorageRef::adopt(Storage::new_borrowed(bytes.data(), n, kHost)), DType::kUInt8,
                   DimVector{static_cast<int64_t>(n)}, DimVector{1}, 0);
    TensorImpl dst(t.storage(), DType::kUInt8, DimVector{static_cast<int64_t>(n)}, DimVector{1}, 0);
    Status s = copy_tensor(dst, src, false);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
}

TensorImpl to_host(const TensorImpl& t) {
  TensorImpl out = host_empty(t.sizes(), t.dtype());
  Status s = copy_tensor(out, t, false);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TensorImpl to_device(const TensorImpl& t, const DimVector& strides, int64_t offset) {
  TensorImpl out = device_empty(t.sizes(), t.dtype(), strides, offset);
  Status s = copy_tensor(out, t, false);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TensorImpl transposed(const TensorImpl& t, int64_t a, int64_t b) {
  DimVector sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return TensorImpl(t.storage(), t.dtype(), sizes, strides, t.storage_offset());
}

DimVector permuted_strides(const DimVector& sizes, const std::vector<int>& perm) {
  DimVector st;
  st.resize(sizes.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(perm.size()) - 1; i >= 0; --i) {
    st[perm[i]] = acc;
    acc *= std::max<int64_t>(sizes[perm[i]], 1);
  }
  return st;
}

std::vector<double> values(const TensorImpl& t) {
  TensorImpl h = t.device().is_cpu() && t.is_contiguous() ? t : to_host(t);
  std::vector<double> v(static_cast<size_t>(h.numel()));
  const char* p = static_cast<const char*>(h.data_ptr());
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(p + i * h.element_size(), h.dtype());
  return v;
}

bool same_bytes(const TensorImpl& a, const TensorImpl& b) {
  if (!(a.sizes() == b.sizes()) || a.dtype() != b.dtype()) return false;
  TensorImpl ha = to_host(a), hb = to_host(b);
  return std::memcmp(ha.data_ptr(), hb.data_ptr(), ha.nbytes()) == 0;
}

double max_scaled_error(const TensorImpl& a, const TensorImpl& b, double atol, double rtol) {
  EXPECT_EQ(a.sizes(), b.sizes());
  std::vector<double> va = values(a), vb = values(b);
  double worst = 0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) {
    if (std::isnan(va[i]) || std::isnan(vb[i])) {
      if (std::isnan(va[i]) != std::isnan(vb[i])) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(va[i]) || std::isinf(vb[i])) {
      if (va[i] != vb[i]) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::fabs(va[i] - vb[i]) / (atol + rtol * std::fabs(vb[i])));
  }
  return worst;
}

TensorImpl reference_conv2d(const TensorImpl& x, const TensorImpl& w, const TensorImpl* bias, const int64_t stride[2],
                            const int64_t padding[2], const int64_t dilation[2]) {
  auto as_f64 = [](const TensorImpl& t) {
    TensorImpl out = host_empty(t.sizes(), DType::kFloat64);
    Status s = copy_tensor(out, t, false);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  };
  TensorImpl x64 = as_f64(x), w64 = as_f64(w);
  std::unique_ptr<OwnedHandle> bias_h;
  AtenTensorHandle bias_raw = nullptr;
  if (bias) {
    bias_h = std::make_unique<OwnedHandle>(as_f64(*bias));
    bias_raw = *bias_h;
  }
  const int64_t output_padding[2] = {0, 0};
  AtenTensorHandle out = nullptr;
  EXPECT_EQ(aoti_torch_cpu_convolution(handle(x64), handle(w64), bias ? &bias_raw : nullptr, stride, 2, padding, 2,
                                       dilation, 2, 0, output_padding, 2, 1, &out),
            0)
      << last_error_text();
  return out ? take(out) : TensorImpl();
}

TensorImpl take(AtenTensorHandle h) {
  if (!h) return TensorImpl();
  TensorImpl t = *impl_of(h);
  aoti_torch_delete_tensor_object(h);
  return t;
}

OwnedHandle::OwnedHandle(const TensorImpl& t) : h_(new_handle(t)) {}
OwnedHandle::~OwnedHandle() { aoti_torch_delete_tensor_object(h_); }

std::string last_error_text() { return get_last_error().to_string(); }

double profiled_calls(const std::vector<ShimProfileEntry>& prof, const std::string& needle) {
  double calls = 0;
  for (const auto& e : prof)
    if (e.name.find(needle) != std::string::npos) calls += static_cast<double>(e.calls);
  return calls;
}

}  // namespace cuda_test

void PrintTo(const DimVector& v, std::ostream* os) { *os << dims_to_string(v.data(), v.size()); }

}  // namespace aotirt
