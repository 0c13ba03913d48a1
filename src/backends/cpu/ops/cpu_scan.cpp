// CPU scans along one dimension: cumsum, cumprod, logcumsumexp, cummax and
// cummin (c_shim_cpu.h). The input is first made contiguous in the output's
// dtype (torch casts before it scans when a dtype is passed); each of the
// outer x inner lines of the [outer, length, inner] view is then walked in
// order, accumulating as torch's CPU kernels do: float32 in double, the
// half types in float, integers in int64 (wrapping on store, as a cast
// does). The lines are independent, so large scans split them over OpenMP
// threads; the order within a line, and so every rounding, stays torch's.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/scan_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// Element access per dtype: how a value is stored, and the type torch
// accumulates it in.
struct F32 {
  using S = float;
  using A = double;
  static A load(const S* p) { return *p; }
  static void store(S* p, A v) { *p = static_cast<S>(v); }
};
struct F64 {
  using S = double;
  using A = double;
  static A load(const S* p) { return *p; }
  static void store(S* p, A v) { *p = v; }
};
struct BF16 {
  using S = uint16_t;
  using A = float;
  static A load(const S* p) { return bf16_to_float(*p); }
  static void store(S* p, A v) { *p = float_to_bf16(v); }
};
struct F16 {
  using S = uint16_t;
  using A = float;
  static A load(const S* p) { return half_to_float(*p); }
  static void store(S* p, A v) { *p = float_to_half(v); }
};
template <class T>
struct Int {
  using S = T;
  using A = int64_t;
  static A load(const S* p) { return static_cast<A>(*p); }
  // Through uint64_t: a wrapped sum or product, as torch's cast gives.
  static void store(S* p, A v) { *p = static_cast<S>(static_cast<uint64_t>(v)); }
};
struct Bool {
  using S = uint8_t;
  using A = int64_t;
  static A load(const S* p) { return *p != 0; }
  static void store(S* p, A v) { *p = v != 0; }
};

// Calls fn(Traits{}) for |dtype|'s traits.
template <class Fn>
Status dispatch(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(F32{}); return Status();
    case DType::kFloat64: fn(F64{}); return Status();
    case DType::kBFloat16: fn(BF16{}); return Status();
    case DType::kFloat16: fn(F16{}); return Status();
    case DType::kInt64: fn(Int<int64_t>{}); return Status();
    case DType::kInt32: fn(Int<int32_t>{}); return Status();
    case DType::kInt16: fn(Int<int16_t>{}); return Status();
    case DType::kInt8: fn(Int<int8_t>{}); return Status();
    case DType::kUInt8: fn(Int<uint8_t>{}); return Status();
    case DType::kBool: fn(Bool{}); return Status();
    default: return AOTIRT_STATUS(kUnimplemented, "dtype {} is not scanned on the CPU", dtype_name(dtype));
  }
}

// Runs |line|(o, i) for every line, in parallel when the scan is large
// enough to pay for the threads.
template <class Line>
void for_each_line(const ops::ScanArgs& a, Line&& line) {
  const int64_t lines = a.outer * a.inner;
  constexpr int64_t kParallelElements = int64_t{1} << 16;
  const bool parallel = lines > 1 && lines * a.length >= kParallelElements && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t l = 0; l < lines; ++l) line(l / a.inner, l % a.inner);
}

// log(exp(x) + exp(y)) without overflow; -inf is the empty sum.
template <class A>
A log_add_exp(A x, A y) {
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<A>::quiet_NaN();
  const A hi = std::max(x, y), lo = std::min(x, y);
  if (hi == -std::numeric_limits<A>::infinity()) return hi;
  if (hi == std::numeric_limits<A>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

template <class T>
void scan_values(const ops::ScanArgs& a, const TensorImpl& in, const TensorImpl& out) {
  using S = typename T::S;
  using A = typename T::A;
  const S* src = static_cast<const S*>(in.data_ptr());
  S* dst = static_cast<S*>(out.data_ptr());
  for_each_line(a, [&](int64_t o, int64_t i) {
    const int64_t base = o * a.length * a.inner + i;
    A acc = a.kind == ops::ScanKind::kProd ? A(1)
            : a.kind == ops::ScanKind::kLogSumExp ? -std::numeric_limits<A>::infinity()
                                                   : A(0);
    for (int64_t k = 0; k < a.length; ++k) {
      const int64_t at = base + k * a.inner;
      const A v = T::load(src + at);
      if (a.kind == ops::ScanKind::kSum)
        acc += v;
      else if (a.kind == ops::ScanKind::kProd)
        acc *= v;
      else if constexpr (std::is_floating_point_v<A>)
        acc = log_add_exp(acc, v);
      T::store(dst + at, acc);
    }
  });
}

// cummax and cummin: the running extreme and the index where it was last
// reached (ties move the index on, as torch's >= and <= do); a NaN wins and
// stays, with its own index.
template <class T>
void scan_extremes(const ops::ScanArgs& a, const TensorImpl& in, const TensorImpl& values,
                   const TensorImpl& indices) {
  using S = typename T::S;
  using A = typename T::A;
  const bool is_max = a.kind == ops::ScanKind::kMax;
  const S* src = static_cast<const S*>(in.data_ptr());
  S* vals = static_cast<S*>(values.data_ptr());
  int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
  for_each_line(a, [&](int64_t o, int64_t i) {
    const int64_t base = o * a.length * a.inner + i;
    A best = A(0);
    int64_t best_k = 0;
    for (int64_t k = 0; k < a.length; ++k) {
      const int64_t at = base + k * a.inner;
      const A v = T::load(src + at);
      bool take = k == 0;
      if (!take) {
        if constexpr (std::is_floating_point_v<A>) {
          take = std::isnan(v) || (!std::isnan(best) && (is_max ? v >= best : v <= best));
        } else {
          take = is_max ? v >= best : v <= best;
        }
      }
      if (take) {
        best = v;
        best_k = k;
      }
      vals[at] = src[base + best_k * a.inner];
      idx[at] = best_k;
    }
  });
}

Result<TensorImpl> scan(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype) {
  AOTIRT_ASSIGN_OR_RETURN(ops::ScanArgs a, ops::scan_args(kind, self, dim, dtype));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, a.out_dtype));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.self->sizes(), a.out_dtype, DeviceId{}));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(dispatch(a.out_dtype, [&](auto t) { scan_values<decltype(t)>(a, in, out); }));
  return out;
}

Status scan_extreme(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, AtenTensorHandle* values,
                    AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  AOTIRT_ASSIGN_OR_RETURN(ops::ScanArgs a, ops::scan_args(kind, self, dim, nullptr));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, a.out_dtype));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_contiguous(a.self->sizes(), a.out_dtype, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_contiguous(a.self->sizes(), DType::kInt64, DeviceId{}));
  if (vals.numel() > 0)
    AOTIRT_RETURN_IF_ERROR(dispatch(a.out_dtype, [&](auto t) { scan_extremes<decltype(t)>(a, in, vals, idx); }));
  AtenTensorHandle v = new_handle(std::move(vals));
  AtenTensorHandle ix = nullptr;
  try {
    ix = new_handle(std::move(idx));
  } catch (...) {
    delete impl_of(v);
    throw;
  }
  *values = v;
  *indices = ix;
  return Status();
}

Status scan_to(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, scan(kind, self, dim, dtype));
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kSum, self, dim, dtype, ret0); });
}

AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kProd, self, dim, dtype, ret0); });
}

AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kLogSumExp, self, dim, nullptr, ret0); });
}

AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                     AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] { return scan_extreme(ops::ScanKind::kMax, self, dim, ret0, ret1); });
}

AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                     AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] { return scan_extreme(ops::ScanKind::kMin, self, dim, ret0, ret1); });
}

}  // extern "C"
