// Element types of the CUDA elementwise kernels: for each dtype how an
// element is stored (S) and the type it is computed in (C: float for
// float16 and bfloat16, as torch's CUDA kernels compute them), the
// conversion between them that Tensor.to performs, and reading an element
// of any dtype as a given one. Included by the .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/complex>

#include <cstdint>
#include <type_traits>

namespace aotirt {
namespace cuda_ew {

// c10 ScalarType numbers.
enum : int {
  kU8 = 0, kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4, kF16 = 5, kF32 = 6, kF64 = 7,
  kC64 = 9, kC128 = 10, kBool = 11, kBF16 = 15,
};

template <class S_, int D>
struct Native {
  using S = S_;
  using C = S_;
  static constexpr int kDtype = D;
  __device__ static C load(const char* p) { return *reinterpret_cast<const S*>(p); }
  __device__ static void store(char* p, C v) { *reinterpret_cast<S*>(p) = v; }
};
struct Bool {
  using S = uint8_t;
  using C = bool;
  static constexpr int kDtype = kBool;
  __device__ static C load(const char* p) { return *reinterpret_cast<const S*>(p) != 0; }
  __device__ static void store(char* p, C v) { *reinterpret_cast<S*>(p) = v ? 1 : 0; }
};
struct Half {
  using S = __half;
  using C = float;
  static constexpr int kDtype = kF16;
  __device__ static C load(const char* p) { return __half2float(*reinterpret_cast<const S*>(p)); }
  __device__ static void store(char* p, C v) { *reinterpret_cast<S*>(p) = __float2half_rn(v); }
};
struct BFloat16 {
  using S = __nv_bfloat16;
  using C = float;
  static constexpr int kDtype = kBF16;
  __device__ static C load(const char* p) { return __bfloat162float(*reinterpret_cast<const S*>(p)); }
  __device__ static void store(char* p, C v) { *reinterpret_cast<S*>(p) = __float2bfloat16_rn(v); }
};
using UInt8 = Native<uint8_t, kU8>;
using Int8 = Native<int8_t, kI8>;
using Int16 = Native<int16_t, kI16>;
using Int32 = Native<int32_t, kI32>;
using Int64 = Native<int64_t, kI64>;
using Float = Native<float, kF32>;
using Double = Native<double, kF64>;
using Complex64 = Native<cuda::std::complex<float>, kC64>;
using Complex128 = Native<cuda::std::complex<double>, kC128>;

template <class T>
struct IsComplexC : std::false_type {};
template <class V>
struct IsComplexC<cuda::std::complex<V>> : std::true_type {};

template <class T>
constexpr bool kIsComplex = IsComplexC<typename T::C>::value;
template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<typename T::C>;
template <class T>
constexpr bool kIsBool = std::is_same_v<T, Bool>;
template <class T>
constexpr bool kIsInteger = std::is_integral_v<typename T::C> && !kIsBool<T>;
template <class T>
constexpr bool kIsReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The real traits of a complex one.
template <class T>
using RealOf = std::conditional_t<std::is_same_v<T, Complex64>, Float, Double>;

// Bytes per element of a dtype this file knows (0 for the others).
__host__ __device__ inline int element_size(int dtype) {
  switch (dtype) {
    case kU8: case kI8: case kBool: return 1;
    case kI16: case kF16: case kBF16: return 2;
    case kI32: case kF32: return 4;
    case kI64: case kF64: case kC64: return 8;
    case kC128: return 16;
  }
  return 0;
}

// |v| (Src's compute type) as Dst's compute type, as c10's static_cast
// between element types gives it: complex to real keeps the real part,
// anything to bool tests != 0, and a value bound for float16/bfloat16 goes
// through float and is rounded to the narrow type.
template <class Dst, class Src>
__device__ __forceinline__ typename Dst::C convert(typename Src::C v) {
  using D = typename Dst::C;
  if constexpr (kIsComplex<Src>) {
    if constexpr (kIsComplex<Dst>) {
      using V = typename D::value_type;
      return D(static_cast<V>(v.real()), static_cast<V>(v.imag()));
    } else {
      return convert<Dst, Double>(static_cast<double>(v.real()));
    }
  } else if constexpr (kIsComplex<Dst>) {
    using V = typename D::value_type;
    return D(convert<Native<V, 0>, Src>(v), V(0));
  } else if constexpr (kIsBool<Dst>) {
    return v != 0;
  } else if constexpr (std::is_same_v<Dst, Half>) {
    return __half2float(__float2half_rn(static_cast<float>(v)));
  } else if constexpr (std::is_same_v<Dst, BFloat16>) {
    return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v)));
  } else {
    return static_cast<D>(v);
  }
}

// The element at |p| of |dtype| as T's compute type, converted to T first.
template <class T>
__device__ __forceinline__ typename T::C load_as(const char* p, int dtype) {
  if (dtype == T::kDtype) return T::load(p);
  switch (dtype) {
    case kBool: return convert<T, Bool>(Bool::load(p));
    case kU8: return convert<T, UInt8>(UInt8::load(p));
    case kI8: return convert<T, Int8>(Int8::load(p));
    case kI16: return convert<T, Int16>(Int16::load(p));
    case kI32: return convert<T, Int32>(Int32::load(p));
    case kI64: return convert<T, Int64>(Int64::load(p));
    case kF16: return convert<T, Half>(Half::load(p));
    case kBF16: return convert<T, BFloat16>(BFloat16::load(p));
    case kF32: return convert<T, Float>(Float::load(p));
    case kF64: return convert<T, Double>(Double::load(p));
    case kC64: return convert<T, Complex64>(Complex64::load(p));
    case kC128: return convert<T, Complex128>(Complex128::load(p));
  }
  return typename T::C();
}

// Calls fn(Traits{}) for |dtype|; false for a dtype without traits.
template <class Fn>
bool dispatch(int dtype, Fn&& fn) {
  switch (dtype) {
    case kBool: fn(Bool{}); return true;
    case kU8: fn(UInt8{}); return true;
    case kI8: fn(Int8{}); return true;
    case kI16: fn(Int16{}); return true;
    case kI32: fn(Int32{}); return true;
    case kI64: fn(Int64{}); return true;
    case kF16: fn(Half{}); return true;
    case kBF16: fn(BFloat16{}); return true;
    case kF32: fn(Float{}); return true;
    case kF64: fn(Double{}); return true;
    case kC64: fn(Complex64{}); return true;
    case kC128: fn(Complex128{}); return true;
  }
  return false;
}

}  // namespace cuda_ew
}  // namespace aotirt
