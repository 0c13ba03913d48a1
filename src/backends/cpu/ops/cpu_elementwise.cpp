// CPU elementwise fallback ops (c_shim_cpu.h): abs, add, sub, mul, pow (its
// three forms), gcd, angle, polar and fill_; the device-generic
// aoti_torch_aten_subtract_Tensor and fill__Scalar reach add and fill_ here
// for CPU tensors (shim_generic_ops.cpp). The op
// layer (ops/elementwise_args) fixes dtypes and layouts; here each input is
// converted to the common dtype (a dense copy laid out like it, as
// Tensor.to makes), scalars become 0-d tensors of that dtype, and
// ElementLoop walks the broadcast operands. Arithmetic follows torch's CPU
// kernels: float16/bfloat16 in float with one rounding, add's alpha as one
// fused multiply-add, integer overflow wrapping, pow's special exponents.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cpu/ops/cpu_elementwise_loop.h"
#include "backends/cpu/ops/cpu_elementwise_types.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/elementwise_args.h"
#include "shim/abi/cpu_elementwise.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;
using namespace aotirt::cpu_ops::ew;

namespace {

// Runs body(out_ptr, in_ptr, n, out_stride, in_stride) typed loops.
template <class Out, class In, class Fn>
void unary_loop(const TensorImpl& out, const TensorImpl& in, Fn f) {
  ElementLoop loop(out.sizes(), {loop_operand(out), loop_operand(in)});
  loop.run([&](char* const* p, const int64_t* s, int64_t n) {
    char* o = p[0];
    const char* a = p[1];
    if (s[0] == sizeof(typename Out::S) && s[1] == sizeof(typename In::S)) {
      for (int64_t i = 0; i < n; ++i)
        Out::store(o + i * sizeof(typename Out::S), f(In::load(a + i * sizeof(typename In::S))));
    } else {
      for (int64_t i = 0; i < n; ++i) Out::store(o + i * s[0], f(In::load(a + i * s[1])));
    }
  });
}

template <class Out, class In, class Fn>
void binary_loop(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b, Fn f) {
  using SO = typename Out::S;
  using SI = typename In::S;
  ElementLoop loop(out.sizes(), {loop_operand(out), loop_operand(a), loop_operand(b)});
  loop.run([&](char* const* p, const int64_t* s, int64_t n) {
    char* o = p[0];
    const char* x = p[1];
    const char* y = p[2];
    if (s[0] == sizeof(SO) && s[1] == sizeof(SI) && s[2] == sizeof(SI)) {
      for (int64_t i = 0; i < n; ++i) Out::store(o + i * sizeof(SO), f(In::load(x + i * sizeof(SI)), In::load(y + i * sizeof(SI))));
    } else if (s[0] == sizeof(SO) && s[1] == sizeof(SI) && s[2] == 0) {
      const typename In::C yv = In::load(y);
      for (int64_t i = 0; i < n; ++i) Out::store(o + i * sizeof(SO), f(In::load(x + i * sizeof(SI)), yv));
    } else {
      for (int64_t i = 0; i < n; ++i) Out::store(o + i * s[0], f(In::load(x + i * s[1]), In::load(y + i * s[2])));
    }
  });
}

// Every element of |t| set to |v|.
template <class T>
void fill_loop(const TensorImpl& t, typename T::C v) {
  ElementLoop loop(t.sizes(), {loop_operand(t)});
  loop.run([&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) T::store(p[0] + i * s[0], v);
  });
}

// |t| in |dtype|: |t| itself when it already is, else a copy laid out as
// torch's Tensor.to lays it out (empty_like's strides).
Result<TensorImpl> converted(const TensorImpl& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(t.sizes(), empty_like_strides(t), dtype, DeviceId{}));
  Status st = dispatch(dtype, [&](auto dst) {
    using Dst = decltype(dst);
    (void)dispatch(t.dtype(), [&](auto src) {
      using Src = decltype(src);
      unary_loop<Dst, Src>(out, t, [](typename Src::C v) { return convert<Dst, Src>(v); });
    });
  });
  AOTIRT_RETURN_IF_ERROR(st);
  return out;
}

// A 0-d tensor of |dtype| holding the wrapped Scalar |v| (torch converts a
// double Scalar to the common dtype: float16 through float, complex with a
// zero imaginary part).
Result<TensorImpl> scalar_tensor(double v, DType dtype) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector(), dtype, DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    T::store(static_cast<char*>(out.data_ptr()), convert<T, Double>(v));
  }));
  return out;
}

// A scalar of traits T's compute type from a double Scalar, as
// Scalar::to<scalar_t>() gives it (float16/bfloat16 values rounded).
template <class T>
typename T::C scalar_as(double v) {
  if constexpr (kIsReduced<T>) {
    alignas(8) char buf[8];
    T::store(buf, static_cast<float>(v));
    return T::load(buf);
  } else {
    return convert<T, Double>(v);
  }
}

// Wrapping integer arithmetic (through uint64_t, so no signed overflow).
template <class I>
I wrap_mul(I a, I b) {
  return static_cast<I>(static_cast<uint64_t>(static_cast<int64_t>(a)) * static_cast<uint64_t>(static_cast<int64_t>(b)));
}
template <class I>
I wrap_add(I a, I b) {
  return static_cast<I>(static_cast<uint64_t>(static_cast<int64_t>(a)) + static_cast<uint64_t>(static_cast<int64_t>(b)));
}

// Integer power by squaring with wrapping products; a negative exponent
// gives 1 for base 1, +-1 for base -1 and 0 otherwise (torch's powi).
template <class I>
I int_pow(I base, I exp) {
  if constexpr (std::is_signed_v<I>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 != 0) ? I(-1) : I(1);
      return 0;
    }
  }
  I result = 1;
  while (exp != 0) {
    if (exp & 1) result = wrap_mul<I>(result, base);
    exp = static_cast<I>(exp / 2);
    base = wrap_mul<I>(base, base);
  }
  return result;
}

// Euclid on the magnitudes, the magnitude of the most negative value
// wrapping to itself as torch's std::abs does.
template <class I>
I int_gcd(I a, I b) {
  auto magnitude = [](I v) -> I {
    if constexpr (std::is_signed_v<I>) return v < 0 ? static_cast<I>(0 - static_cast<uint64_t>(static_cast<int64_t>(v))) : v;
    return v;
  };
  a = magnitude(a);
  b = magnitude(b);
  while (a != 0) {
    const I r = static_cast<I>(b % a);
    b = a;
    a = r;
  }
  return b;
}

// add / sub (alpha already negated) for a floating or complex type.
template <class T>
void add_kernel(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b, double alpha) {
  using C = typename T::C;
  if constexpr (kIsFloat<T>) {
    const C al = scalar_as<T>(alpha);
    if (al == C(1))
      binary_loop<T, T>(out, a, b, [](C x, C y) { return x + y; });
    else if (al == C(-1))
      binary_loop<T, T>(out, a, b, [](C x, C y) { return x - y; });
    else
      binary_loop<T, T>(out, a, b, [al](C x, C y) { return std::fma(y, al, x); });
  } else if constexpr (kIsComplex<T>) {
    using V = typename C::value_type;
    const V al = static_cast<V>(alpha);
    binary_loop<T, T>(out, a, b, [al](C x, C y) { return C(x.real() + al * y.real(), x.imag() + al * y.imag()); });
  }
  // Integral results never reach here: the alpha check refuses them.
}

template <class T>
void mul_kernel(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  using C = typename T::C;
  if constexpr (kIsBool<T>)
    binary_loop<T, T>(out, a, b, [](C x, C y) { return x && y; });
  else if constexpr (kIsInteger<T>)
    binary_loop<T, T>(out, a, b, [](C x, C y) { return wrap_mul<C>(x, y); });
  else
    binary_loop<T, T>(out, a, b, [](C x, C y) { return x * y; });
}

template <class T>
void pow_kernel(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  using C = typename T::C;
  if constexpr (kIsInteger<T>)
    binary_loop<T, T>(out, a, b, [](C x, C y) { return int_pow<C>(x, y); });
  else if constexpr (!kIsBool<T>)
    binary_loop<T, T>(out, a, b, [](C x, C y) -> C { return std::pow(x, y); });
}

template <class T>
void gcd_kernel(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  using C = typename T::C;
  if constexpr (kIsInteger<T>) binary_loop<T, T>(out, a, b, [](C x, C y) { return int_gcd<C>(x, y); });
}

// pow.Tensor_Scalar's kernel on |in| (already of T): torch's fast paths
// for exponents 0.5, -0.5 and -1 (float32, float64, bfloat16, complex) and
// 2, 3 and -2 (all but float16), each computed as torch does.
template <class T>
void pow_scalar_exponent(const TensorImpl& out, const TensorImpl& in, double exp) {
  using C = typename T::C;
  if constexpr (kIsFloat<T> || kIsComplex<T>) {
    constexpr bool half = std::is_same_v<T, Half>;
    constexpr bool bf16 = std::is_same_v<T, BFloat16>;
    if (!half) {
      if (exp == 0.5) return unary_loop<T, T>(out, in, [](C x) -> C { return std::sqrt(x); });
      if (exp == -0.5) return unary_loop<T, T>(out, in, [](C x) -> C { return C(1) / std::sqrt(x); });
      if (exp == -1.0) return unary_loop<T, T>(out, in, [](C x) -> C { return C(1) / x; });
    }
    if constexpr (half) {
      const float e = scalar_as<T>(exp);
      return unary_loop<T, T>(out, in, [e](C x) -> C { return std::pow(x, e); });
    } else if constexpr (bf16) {
      // bfloat16 arithmetic rounds after every operation.
      const float e = scalar_as<T>(exp);
      auto r = [](float v) { return bf16_to_float(float_to_bf16(v)); };
      if (e == 2.0f) return unary_loop<T, T>(out, in, [](C x) -> C { return x * x; });
      if (e == 3.0f) return unary_loop<T, T>(out, in, [r](C x) -> C { return r(x * x) * x; });
      if (e == -2.0f) return unary_loop<T, T>(out, in, [r](C x) -> C { return 1.0f / r(x * x); });
      return unary_loop<T, T>(out, in, [e](C x) -> C { return std::pow(x, e); });
    } else {
      if (exp == 2.0) return unary_loop<T, T>(out, in, [](C x) -> C { return x * x; });
      if (exp == 3.0) return unary_loop<T, T>(out, in, [](C x) -> C { return x * x * x; });
      if (exp == -2.0) return unary_loop<T, T>(out, in, [](C x) -> C { return C(1) / (x * x); });
      const C e = convert<T, Double>(exp);
      return unary_loop<T, T>(out, in, [e](C x) -> C { return std::pow(x, e); });
    }
  }
  // Integral and bool bases are promoted to float32 by the op layer.
}

template <class T>
typename T::C pi_as() {
  return scalar_as<T>(3.14159265358979323846);
}

Status check_on_cpu(const TensorImpl* t, const char* what) { return t ? check_cpu(*t, what) : Status(); }

Status finish(TensorImpl out, AtenTensorHandle* ret) {
  *ret = new_handle(std::move(out));
  return Status();
}

// Computes a binary op's plan into a new tensor.
Result<TensorImpl> run_binary(const ops::ew::BinaryArgs& a) {
  const char* self_name = a.op == ops::ew::EwOp::kPolar ? "abs" : "self";
  const char* other_name = a.op == ops::ew::EwOp::kPolar ? "angle" : a.op == ops::ew::EwOp::kPow ? "exponent" : "other";
  AOTIRT_RETURN_IF_ERROR(check_on_cpu(a.self, self_name));
  AOTIRT_RETURN_IF_ERROR(check_on_cpu(a.other, other_name));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  // mul of a float16/bfloat16 result by a one-element |other| uses other's
  // original value in float, unrounded (torch's reduced-float scalar path).
  const bool reduced = a.common == DType::kFloat16 || a.common == DType::kBFloat16;
  const bool other_single = !a.other || a.other->numel() == 1;
  if (a.op == ops::ew::EwOp::kMul && reduced && other_single) {
    const double orig = a.other ? load_as_double(a.other->data_ptr(), a.other->dtype()) : a.other_scalar;
    const float b = static_cast<float>(orig);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, converted(*a.self, a.common));
    AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
      using T = decltype(t);
      if constexpr (kIsReduced<T>) unary_loop<T, T>(out, x, [b](float v) { return v * b; });
    }));
    return out;
  }
  TensorImpl x, y;
  if (a.self) {
    AOTIRT_ASSIGN_OR_RETURN(x, converted(*a.self, a.common));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(x, scalar_tensor(a.self_scalar, a.common));
  }
  if (a.other) {
    AOTIRT_ASSIGN_OR_RETURN(y, converted(*a.other, a.common));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(y, scalar_tensor(a.other_scalar, a.common));
  }
  AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
    using T = decltype(t);
    using C = typename T::C;
    switch (a.op) {
      case ops::ew::EwOp::kAdd:
      case ops::ew::EwOp::kSub: add_kernel<T>(out, x, y, a.alpha); break;
      case ops::ew::EwOp::kMul: mul_kernel<T>(out, x, y); break;
      case ops::ew::EwOp::kPow: pow_kernel<T>(out, x, y); break;
      case ops::ew::EwOp::kGcd: gcd_kernel<T>(out, x, y); break;
      case ops::ew::EwOp::kPolar:
        if constexpr (std::is_same_v<T, Float> || std::is_same_v<T, Double>) {
          using Out = std::conditional_t<std::is_same_v<T, Float>, Complex64, Complex128>;
          binary_loop<Out, T>(out, x, y, [](C r, C th) { return typename Out::C(r * std::cos(th), r * std::sin(th)); });
        }
        break;
      default: break;
    }
  }));
  return out;
}

Status binary_to(Result<ops::ew::BinaryArgs> args, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::ew::BinaryArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, run_binary(a));
  return finish(std::move(out), ret);
}

Result<TensorImpl> run_abs(const ops::ew::UnaryArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
    using T = decltype(t);
    using C = typename T::C;
    if constexpr (kIsComplex<T>) {
      using Out = std::conditional_t<std::is_same_v<T, Complex64>, Float, Double>;
      unary_loop<Out, T>(out, *a.self, [](C v) { return std::abs(v); });
    } else if constexpr (kIsFloat<T>) {
      unary_loop<T, T>(out, *a.self, [](C v) { return std::fabs(v); });
    } else if constexpr (kIsInteger<T>) {
      if constexpr (std::is_signed_v<C>)
        unary_loop<T, T>(out, *a.self, [](C v) {
          return v < 0 ? static_cast<C>(0 - static_cast<uint64_t>(static_cast<int64_t>(v))) : v;
        });
      else
        unary_loop<T, T>(out, *a.self, [](C v) { return v; });
    }
  }));
  return out;
}

Result<TensorImpl> run_angle(const ops::ew::UnaryArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, converted(*a.self, a.common));
  AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
    using T = decltype(t);
    using C = typename T::C;
    if constexpr (kIsComplex<T>) {
      using Out = std::conditional_t<std::is_same_v<T, Complex64>, Float, Double>;
      unary_loop<Out, T>(out, x, [](C v) { return std::arg(v); });
    } else if constexpr (kIsFloat<T>) {
      const C pi = pi_as<T>();
      // NaN stays NaN; negative numbers give pi, the rest (-0 too) 0.
      unary_loop<T, T>(out, x, [pi](C v) -> C { return std::isnan(v) ? v : (v < 0 ? pi : C(0)); });
    }
  }));
  return out;
}

Result<TensorImpl> run_pow_tensor_scalar(const ops::ew::UnaryArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  const double e = a.scalar;
  TensorImpl x;
  if (e != 0.0) {
    AOTIRT_ASSIGN_OR_RETURN(x, converted(*a.self, a.common));
  }
  AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
    using T = decltype(t);
    // x ** 0 is 1 for every x (NaN too); x ** 1 is x.
    if (e == 0.0)
      fill_loop<T>(out, convert<T, Double>(1.0));
    else if (e == 1.0)
      unary_loop<T, T>(out, x, [](typename T::C v) { return v; });
    else
      pow_scalar_exponent<T>(out, x, e);
  }));
  return out;
}

Result<TensorImpl> run_pow_scalar(const ops::ew::UnaryArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "exponent"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  if (a.scalar == 1.0) {
    // 1 ** x is 1 for every x, NaN included.
    AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) {
      using T = decltype(t);
      fill_loop<T>(out, convert<T, Double>(1.0));
    }));
    return out;
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl base, scalar_tensor(a.scalar, a.common));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl exp, converted(*a.self, a.common));
  AOTIRT_RETURN_IF_ERROR(dispatch(a.common, [&](auto t) { pow_kernel<decltype(t)>(out, base, exp); }));
  return out;
}

template <class Run>
Status unary_to(Result<ops::ew::UnaryArgs> args, Run run, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::ew::UnaryArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, run(a));
  return finish(std::move(out), ret);
}

Status fill(AtenTensorHandle self, double value) {
  AOTIRT_ASSIGN_OR_RETURN(ops::ew::FillArgs a, ops::ew::fill_args(self, value));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  if (a.self->numel() == 0) return Status();
  return dispatch(a.self->dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T> || kIsComplex<T>)
      fill_loop<T>(*a.self, convert<T, Double>(a.float_value));
    else
      fill_loop<T>(*a.self, convert<T, Int64>(a.int_value));
  });
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return unary_to(ops::ew::abs_args(self), run_abs, ret0); });
}

AOTITorchError aoti_torch_cpu_add_Scalar(AtenTensorHandle self, double other, double alpha,
                                         AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ops::ew::binary_scalar_args(ops::ew::EwOp::kAdd, self, other, alpha), ret0); });
}

AOTITorchError aoti_torch_cpu_add_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha,
                                         AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ops::ew::binary_args(ops::ew::EwOp::kAdd, self, other, alpha), ret0); });
}

AOTITorchError aoti_torch_cpu_mul_Scalar(AtenTensorHandle self, double other, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ops::ew::binary_scalar_args(ops::ew::EwOp::kMul, self, other, 1.0), ret0); });
}

AOTITorchError aoti_torch_cpu_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                         AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ops::ew::binary_args(ops::ew::EwOp::kMul, self, other, 1.0), ret0); });
}

AOTITorchError aoti_torch_cpu_pow_Scalar(double self, AtenTensorHandle exponent, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return unary_to(ops::ew::pow_scalar_args(self, exponent), run_pow_scalar, ret0); });
}

AOTITorchError aoti_torch_cpu_pow_Tensor_Scalar(AtenTensorHandle self, double exponent,
                                                AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return unary_to(ops::ew::pow_tensor_scalar_args(self, exponent), run_pow_tensor_scalar, ret0);
  });
}

AOTITorchError aoti_torch_cpu_pow_Tensor_Tensor(AtenTensorHandle self, AtenTensorHandle exponent,
                                                AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ops::ew::binary_args(ops::ew::EwOp::kPow, self, exponent, 1.0), ret0); });
}

AOTITorchError aoti_torch_cpu_gcd(AtenTensorHandle self, AtenTensorHandle other, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ops::ew::binary_args(ops::ew::EwOp::kGcd, self, other, 1.0), ret0); });
}

AOTITorchError aoti_torch_cpu_angle(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return unary_to(ops::ew::angle_args(self), run_angle, ret0); });
}

AOTITorchError aoti_torch_cpu_polar(AtenTensorHandle abs, AtenTensorHandle angle, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ops::ew::binary_args(ops::ew::EwOp::kPolar, abs, angle, 1.0), ret0); });
}

AOTITorchError aoti_torch_cpu_fill__Scalar(AtenTensorHandle self, double value) noexcept {
  return shim_call(__func__, [&] { return fill(self, value); });
}

}  // extern "C"
