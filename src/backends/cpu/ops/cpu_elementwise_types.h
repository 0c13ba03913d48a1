// Element types of the CPU elementwise ops: for each dtype, how an element
// is stored (S) and the type torch computes it in (C: float for float16 and
// bfloat16, so each result is rounded once), with a dispatch from DType to
// these traits and torch's conversions between them (a cast to float16 or
// bfloat16 goes through float, as c10's does).
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "aotirt/status.h"
#include "base/status.h"
#include "core/dtype.h"

namespace aotirt {
namespace cpu_ops {
namespace ew {

template <class S_, DType D>
struct Native {
  using S = S_;
  using C = S_;
  static constexpr DType kDType = D;
  static C load(const char* p) { return *reinterpret_cast<const S*>(p); }
  static void store(char* p, C v) { *reinterpret_cast<S*>(p) = v; }
};
// float16 <-> float, inline and branch-light for the element loops (the
// core's out-of-line conversions cost a call per element); bit for bit the
// same results as core/dtype.h's (tests/shim/shim_elementwise_test.cpp).
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t rest = h & 0x7fffu;
  uint32_t bits;
  if (rest >= 0x7c00u) {
    bits = sign | 0x7f800000u | ((rest & 0x3ffu) << 13);  // infinity, NaN
  } else {
    // The half's exponent and mantissa placed in a float are its value
    // times 2^-112 (subnormals included); scaling back is exact.
    const uint32_t shifted = rest << 13;
    float f;
    std::memcpy(&f, &shifted, 4);
    f *= 0x1p112f;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

// Round to nearest even; NaN becomes the quiet NaN 0x7e00 with its sign.
inline uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (a < 0x38800000u) {
    // Subnormal half (multiples of 2^-24): adding 0.5 makes the float's
    // last mantissa bit worth 2^-24, so the hardware's rounding is the half's.
    float af;
    std::memcpy(&af, &a, 4);
    af += 0.5f;
    uint32_t r;
    std::memcpy(&r, &af, 4);
    return static_cast<uint16_t>(sign | (r - 0x3f000000u));
  }
  a += 0xfffu + ((a >> 13) & 1u);  // round at bit 13, ties to even
  a -= static_cast<uint32_t>(127 - 15) << 23;
  return static_cast<uint16_t>(sign | (a >> 13));
}

struct Half {
  using S = uint16_t;
  using C = float;
  static constexpr DType kDType = DType::kFloat16;
  static C load(const char* p) { return half_bits_to_float(*reinterpret_cast<const S*>(p)); }
  static void store(char* p, C v) { *reinterpret_cast<S*>(p) = float_to_half_bits(v); }
};
struct BFloat16 {
  using S = uint16_t;
  using C = float;
  static constexpr DType kDType = DType::kBFloat16;
  static C load(const char* p) { return bf16_to_float(*reinterpret_cast<const S*>(p)); }
  static void store(char* p, C v) { *reinterpret_cast<S*>(p) = float_to_bf16(v); }
};
struct Bool {
  using S = uint8_t;
  using C = bool;
  static constexpr DType kDType = DType::kBool;
  static C load(const char* p) { return *reinterpret_cast<const S*>(p) != 0; }
  static void store(char* p, C v) { *reinterpret_cast<S*>(p) = v ? 1 : 0; }
};
using Float = Native<float, DType::kFloat32>;
using Double = Native<double, DType::kFloat64>;
using UInt8 = Native<uint8_t, DType::kUInt8>;
using Int8 = Native<int8_t, DType::kInt8>;
using Int16 = Native<int16_t, DType::kInt16>;
using Int32 = Native<int32_t, DType::kInt32>;
using Int64 = Native<int64_t, DType::kInt64>;
using Complex64 = Native<std::complex<float>, DType::kComplex64>;
using Complex128 = Native<std::complex<double>, DType::kComplex128>;

template <class T>
struct is_complex_c : std::false_type {};
template <class T>
struct is_complex_c<std::complex<T>> : std::true_type {};

template <class T>
constexpr bool kIsComplex = is_complex_c<typename T::C>::value;
template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<typename T::C>;
template <class T>
constexpr bool kIsBool = std::is_same_v<typename T::C, bool>;
template <class T>
constexpr bool kIsInteger = std::is_integral_v<typename T::C> && !kIsBool<T>;
// float16 and bfloat16: computed in float, stored narrower.
template <class T>
constexpr bool kIsReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Calls fn(Traits{}) for |dtype|; UNIMPLEMENTED for the others.
template <class Fn>
Status dispatch(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kBool: fn(Bool{}); return Status();
    case DType::kUInt8: fn(UInt8{}); return Status();
    case DType::kInt8: fn(Int8{}); return Status();
    case DType::kInt16: fn(Int16{}); return Status();
    case DType::kInt32: fn(Int32{}); return Status();
    case DType::kInt64: fn(Int64{}); return Status();
    case DType::kFloat16: fn(Half{}); return Status();
    case DType::kBFloat16: fn(BFloat16{}); return Status();
    case DType::kFloat32: fn(Float{}); return Status();
    case DType::kFloat64: fn(Double{}); return Status();
    case DType::kComplex64: fn(Complex64{}); return Status();
    case DType::kComplex128: fn(Complex128{}); return Status();
    default:
      return AOTIRT_STATUS(kUnimplemented, "dtype {} is not computed by the CPU elementwise ops", dtype_name(dtype));
  }
}

// The compute value |v| (of source traits Src) as Dst's compute type, as
// torch's static_cast between element types gives it: complex to real keeps
// the real part, anything to bool tests != 0, and a value bound for
// float16/bfloat16 becomes float first (Dst::store rounds it from there).
template <class Dst, class Src>
typename Dst::C convert(typename Src::C v) {
  using D = typename Dst::C;
  if constexpr (kIsComplex<Src>) {
    if constexpr (kIsComplex<Dst>) {
      return D(static_cast<typename D::value_type>(v.real()), static_cast<typename D::value_type>(v.imag()));
    } else {
      return convert<Dst, Double>(static_cast<double>(v.real()));
    }
  } else if constexpr (kIsComplex<Dst>) {
    using V = typename D::value_type;
    if constexpr (std::is_same_v<V, float>)
      return D(convert<Float, Src>(v), 0.0f);
    else
      return D(convert<Double, Src>(v), 0.0);
  } else if constexpr (kIsBool<Dst>) {
    return v != 0;
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace ew
}  // namespace cpu_ops
}  // namespace aotirt
