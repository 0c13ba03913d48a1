// Helpers for the CPU fallback-op tests: owned tensor handles made through the
// shim, strided views over a padded buffer, random fill, reading values back
// in logical order as double, and a tolerance check that reports the first
// mismatch.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace cpu_ops_test {

using Dims = std::vector<int64_t>;

// Owns one AtenTensorHandle.
class Handle {
 public:
  Handle() = default;
  explicit Handle(AtenTensorHandle h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Handle& operator=(Handle&& o) noexcept {
    reset();
    h_ = o.h_;
    o.h_ = nullptr;
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  AtenTensorHandle get() const { return h_; }
  AtenTensorHandle* out() {
    reset();
    return &h_;
  }
  const TensorImpl& impl() const { return *impl_of(h_); }
  Dims sizes() const { return impl().sizes().to_vector(); }
  Dims strides() const { return impl().strides().to_vector(); }

 private:
  void reset() {
    if (h_) aoti_torch_delete_tensor_object(h_);
    h_ = nullptr;
  }
  AtenTensorHandle h_ = nullptr;
};

inline int64_t numel(const Dims& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

inline Dims contiguous(const Dims& sizes) {
  Dims st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return st;
}

// A view with |sizes|/|strides| (non-negative) and |offset| elements into a
// fresh buffer just large enough, made with aoti_torch__reinterpret_tensor.
inline Handle make_strided(const Dims& sizes, const Dims& strides, DType dtype, int64_t offset = 0) {
  int64_t extent = offset + 1;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 0) extent += (sizes[i] - 1) * strides[i];
  Handle base;
  const int64_t len = extent;
  EXPECT_EQ(aoti_torch_empty_strided(1, &len, nullptr, static_cast<int32_t>(dtype), 0, 0, base.out()), 0);
  Handle view;
  EXPECT_EQ(aoti_torch__reinterpret_tensor(base.get(), static_cast<int64_t>(sizes.size()), sizes.data(),
                                           strides.data(), offset, view.out()),
            0);
  return view;
}

inline Handle make_tensor(const Dims& sizes, DType dtype) {
  return make_strided(sizes, contiguous(sizes), dtype);
}

// Logical [sizes] whose memory holds the dims in |perm| order, outermost
// first (so perm {1, 0} on a matrix gives a transposed view).
inline Handle make_permuted(const Dims& sizes, const Dims& perm, DType dtype) {
  Dims physical(sizes.size());
  for (size_t i = 0; i < perm.size(); ++i) physical[i] = sizes[perm[i]];
  Dims pst = contiguous(physical);
  Dims st(sizes.size());
  for (size_t i = 0; i < perm.size(); ++i) st[perm[i]] = pst[i];
  return make_strided(sizes, st, dtype);
}

// Calls |fn(offset_in_elements, logical_index)| for every element in
// row-major logical order.
template <class Fn>
void for_each_element(const TensorImpl& t, Fn fn) {
  const int64_t nd = t.dim();
  const int64_t n = t.numel();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * t.strides()[d];
    fn(off, linear);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
}

// Fills |h| with values from U(lo, hi) kept away from zero, rounded to its dtype.
inline void fill_random(const Handle& h, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  const TensorImpl& t = h.impl();
  std::uniform_real_distribution<double> dist(lo, hi);
  char* base = static_cast<char*>(t.data_ptr());
  const int64_t el = static_cast<int64_t>(t.element_size());
  for_each_element(t, [&](int64_t off, int64_t) {
    double v = dist(rng);
    if (std::fabs(v) < 0.05) v += v < 0 ? -0.05 : 0.05;
    store_from_double(base + off * el, t.dtype(), v);
  });
}

inline void fill_value(const Handle& h, double value) {
  const TensorImpl& t = h.impl();
  char* base = static_cast<char*>(t.data_ptr());
  const int64_t el = static_cast<int64_t>(t.element_size());
  for_each_element(t, [&](int64_t off, int64_t) { store_from_double(base + off * el, t.dtype(), value); });
}

// Values in row-major logical order.
inline std::vector<double> values(const Handle& h) {
  const TensorImpl& t = h.impl();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  const char* base = static_cast<const char*>(t.data_ptr());
  const int64_t el = static_cast<int64_t>(t.element_size());
  for_each_element(
      t, [&](int64_t off, int64_t linear) { out[linear] = load_as_double(base + off * el, t.dtype()); });
  return out;
}

// |got| matches |want| within atol + rtol * |want| everywhere.
inline ::testing::AssertionResult all_close(const std::vector<double>& got, const std::vector<double>& want,
                                            double atol, double rtol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = atol + rtol * std::fabs(want[i]);
    const bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : std::fabs(got[i] - want[i]) <= tol;
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i] << " (tol " << tol << ")";
  }
  return ::testing::AssertionSuccess();
}

// Tolerances for results rounded to |dtype|, relative to values of order one.
inline double atol_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 1e-10;
    case DType::kFloat32: return 1e-4;
    case DType::kFloat16: return 1e-2;
    default: return 4e-2;  // bfloat16
  }
}
inline double rtol_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 1e-10;
    case DType::kFloat32: return 1e-4;
    case DType::kFloat16: return 5e-3;
    default: return 2e-2;
  }
}

// The shim failed with |code| and left a message that contains every part of |parts|.
inline ::testing::AssertionResult failed_with(AOTITorchError rc, StatusCode code,
                                              const std::vector<std::string>& parts) {
  if (rc != 1) return ::testing::AssertionFailure() << "return code " << rc << ", expected 1";
  const Status& s = get_last_error();
  if (s.code() != code)
    return ::testing::AssertionFailure() << "code " << status_code_name(s.code()) << ", expected "
                                         << status_code_name(code) << " (" << s.message() << ")";
  for (const std::string& p : parts)
    if (s.message().find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "message '" << s.message() << "' lacks '" << p << "'";
  return ::testing::AssertionSuccess();
}

}  // namespace cpu_ops_test
}  // namespace aotirt
