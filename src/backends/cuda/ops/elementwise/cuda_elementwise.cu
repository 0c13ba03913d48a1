// The strided elementwise kernel behind every CUDA elementwise shim, and
// hann_window. One thread per element (grid-stride): the linear index gives
// each operand's offset through the sizes and strides, each input is read
// in its own dtype and converted to the common one, and the op's functor
// computes as torch's CUDA kernels do: float16/bfloat16 in float with one
// rounding on store, integer overflow wrapping, pow's special exponents.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/complex>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/ops/elementwise/cuda_elementwise_kernels.h"
#include "backends/cuda/ops/elementwise/cuda_elementwise_types.cuh"

namespace aotirt {
namespace {

using namespace cuda_ew;

constexpr int kThreads = 256;
constexpr double kPi = 3.14159265358979323846;

// Wrapping integer products (through uint64, so no signed overflow).
template <class I>
__device__ __forceinline__ I wrap_mul(I a, I b) {
  return static_cast<I>(static_cast<unsigned long long>(static_cast<long long>(a)) *
                        static_cast<unsigned long long>(static_cast<long long>(b)));
}

// Integer power by squaring with wrapping products; a negative exponent
// gives 1 for base 1, +-1 for base -1 and 0 otherwise (torch's powi).
template <class I>
__device__ I int_pow(I base, I exp) {
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

// Euclid on the magnitudes; the most negative value's magnitude wraps to
// itself, as torch's std::abs does.
template <class I>
__device__ I int_gcd(I a, I b) {
  auto magnitude = [](I v) -> I {
    if constexpr (std::is_signed_v<I>)
      return v < 0 ? static_cast<I>(0ull - static_cast<unsigned long long>(static_cast<long long>(v))) : v;
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

// Real pow in the compute type: powf for float (and the half types), pow
// for double.
template <class C>
__device__ __forceinline__ C real_pow(C x, C y) {
  if constexpr (std::is_same_v<C, float>)
    return powf(x, y);
  else
    return pow(x, y);
}

template <class C>
__device__ __forceinline__ C any_pow(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    return real_pow(x, y);
  else
    return cuda::std::pow(x, y);
}

template <class C>
__device__ __forceinline__ C any_sqrt(C x) {
  if constexpr (std::is_same_v<C, float>)
    return sqrtf(x);
  else if constexpr (std::is_same_v<C, double>)
    return sqrt(x);
  else
    return cuda::std::sqrt(x);
}

// The binary ops on the common type's values.
template <CudaEwOp Op, class T, class O>
__device__ __forceinline__ typename O::C binary(typename T::C x, typename T::C y, typename T::C alpha) {
  using C = typename T::C;
  if constexpr (Op == CudaEwOp::kAdd) {
    return x + alpha * y;
  } else if constexpr (Op == CudaEwOp::kMul) {
    if constexpr (kIsBool<T>)
      return x && y;
    else if constexpr (kIsInteger<T>)
      return wrap_mul<C>(x, y);
    else
      return x * y;
  } else if constexpr (Op == CudaEwOp::kPow) {
    if constexpr (kIsInteger<T>)
      return int_pow<C>(x, y);
    else
      return any_pow<C>(x, y);
  } else if constexpr (Op == CudaEwOp::kGcd) {
    return int_gcd<C>(x, y);
  } else {  // kPolar
    if constexpr (std::is_same_v<C, float>)
      return typename O::C(x * cosf(y), x * sinf(y));
    else
      return typename O::C(x * cos(y), x * sin(y));
  }
}

// The unary ops (and pow by a host exponent) on the common type's values.
template <CudaEwOp Op, class T, class O>
__device__ __forceinline__ typename O::C unary(typename T::C x, double exponent) {
  using C = typename T::C;
  if constexpr (Op == CudaEwOp::kAbs) {
    if constexpr (kIsComplex<T>)
      return cuda::std::abs(x);
    else if constexpr (kIsFloat<T>)
      return fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? static_cast<C>(0ull - static_cast<unsigned long long>(static_cast<long long>(x))) : x;
    else
      return x;
  } else if constexpr (Op == CudaEwOp::kAngle) {
    if constexpr (kIsComplex<T>) {
      return cuda::std::arg(x);
    } else {
      // NaN stays NaN; negative numbers give pi, the rest (-0 too) 0.
      if (x != x) return x;
      return x < 0 ? static_cast<C>(kPi) : C(0);
    }
  } else if constexpr (Op == CudaEwOp::kPowExp) {
    // torch's fast paths for these exponents (same results as pow, but
    // exact where pow is not); the others go to pow in the compute type.
    if (exponent == 2.0) return x * x;
    if (exponent == 3.0) return x * x * x;
    if (exponent == 0.5) return any_sqrt<C>(x);
    if (exponent == -0.5) return C(1) / any_sqrt<C>(x);
    if (exponent == -1.0) return C(1) / x;
    if (exponent == -2.0) return C(1) / (x * x);
    if constexpr (kIsComplex<T>) {
      using V = typename C::value_type;
      return cuda::std::pow(x, C(static_cast<V>(exponent), V(0)));
    } else {
      return real_pow<C>(x, static_cast<C>(exponent));
    }
  } else {  // kCopy
    return x;
  }
}

template <class Index>
struct Offsets {
  Index out, a, b;
};

template <class Index>
__device__ __forceinline__ Offsets<Index> offsets_of(Index linear, const CudaEwLaunch& l) {
  Offsets<Index> o{0, 0, 0};
  for (int d = l.ndim - 1; d >= 0; --d) {
    const Index size = static_cast<Index>(l.sizes[d]);
    const Index i = linear % size;
    linear /= size;
    o.out += i * static_cast<Index>(l.out_strides[d]);
    o.a += i * static_cast<Index>(l.a.strides[d]);
    o.b += i * static_cast<Index>(l.b.strides[d]);
  }
  return o;
}

// The value an operand without device data holds, in the compute type.
// add and mul take it unrounded for float16/bfloat16 results (in float, as
// torch's CUDA kernels read a CPU scalar); the rest convert it to the
// common dtype first, as any input.
template <CudaEwOp Op, class T>
__device__ __forceinline__ typename T::C held_value(const CudaEwOperand& op) {
  const char* p = reinterpret_cast<const char*>(op.scalar);
  if constexpr (kIsReduced<T> && (Op == CudaEwOp::kAdd || Op == CudaEwOp::kMul))
    return load_as<Float>(p, op.dtype);
  else
    return load_as<T>(p, op.dtype);
}

template <CudaEwOp Op, class T, class O, class Index>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(const __grid_constant__ CudaEwLaunch l) {
  using C = typename T::C;
  constexpr bool kBinary = Op == CudaEwOp::kAdd || Op == CudaEwOp::kMul || Op == CudaEwOp::kPow ||
                           Op == CudaEwOp::kGcd || Op == CudaEwOp::kPolar;
  const int a_size = element_size(l.a.dtype), b_size = element_size(l.b.dtype);
  const int out_size = static_cast<int>(sizeof(typename O::S));
  C alpha = C();
  if constexpr (Op == CudaEwOp::kAdd) {
    if constexpr (kIsComplex<T>)
      alpha = C(static_cast<typename C::value_type>(l.alpha));
    else
      alpha = static_cast<C>(l.alpha);
  }
  // Held values (Scalars, 0-d CPU tensors) are read once.
  const char* const a_data = static_cast<const char*>(l.a.data);
  const char* const b_data = static_cast<const char*>(l.b.data);
  C held_a = C(), held_b = C();
  if constexpr (Op != CudaEwOp::kFill) {
    if (a_data == nullptr) held_a = held_value<Op, T>(l.a);
    if constexpr (kBinary)
      if (b_data == nullptr) held_b = held_value<Op, T>(l.b);
  }
  const Index numel = static_cast<Index>(l.numel);
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    const Offsets<Index> o = offsets_of<Index>(i, l);
    char* po = static_cast<char*>(l.out) + static_cast<int64_t>(o.out) * out_size;
    if constexpr (Op == CudaEwOp::kFill) {
      O::store(po, O::load(reinterpret_cast<const char*>(l.a.scalar)));
    } else {
      const C x = a_data ? load_as<T>(a_data + static_cast<int64_t>(o.a) * a_size, l.a.dtype) : held_a;
      if constexpr (kBinary) {
        const C y = b_data ? load_as<T>(b_data + static_cast<int64_t>(o.b) * b_size, l.b.dtype) : held_b;
        O::store(po, binary<Op, T, O>(x, y, alpha));
      } else {
        O::store(po, unary<Op, T, O>(x, l.exponent));
      }
    }
  }
}

// 32-bit index arithmetic is several times cheaper; use it when every
// offset, and the grid-stride loop's index past the end, fits.
bool fits_int32(const CudaEwLaunch& l) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  if (l.numel >= kLimit) return false;
  int64_t out = 0, a = 0, b = 0;
  for (int d = 0; d < l.ndim; ++d) {
    const int64_t n = l.sizes[d] - 1;
    out += n * (l.out_strides[d] < 0 ? -l.out_strides[d] : l.out_strides[d]);
    a += n * (l.a.strides[d] < 0 ? -l.a.strides[d] : l.a.strides[d]);
    b += n * (l.b.strides[d] < 0 ? -l.b.strides[d] : l.b.strides[d]);
  }
  return out < kLimit && a < kLimit && b < kLimit;
}

unsigned blocks_for(int64_t numel) {
  const int64_t blocks = (numel + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), int64_t{1} << 16));
}

template <CudaEwOp Op, class T, class O>
cudaError_t launch(const CudaEwLaunch& l, cudaStream_t stream) {
  if (fits_int32(l))
    elementwise_kernel<Op, T, O, int32_t><<<blocks_for(l.numel), kThreads, 0, stream>>>(l);
  else
    elementwise_kernel<Op, T, O, int64_t><<<blocks_for(l.numel), kThreads, 0, stream>>>(l);
  return cudaGetLastError();
}

// The op and output dtype cases for common traits T; cudaErrorInvalidValue
// for pairs torch has no kernel for (the op layer refuses them first).
template <class T>
cudaError_t launch_common(const CudaEwLaunch& l, cudaStream_t stream) {
  const bool same_out = l.out_dtype == T::kDtype;
  switch (l.op) {
    case CudaEwOp::kAdd:
      if constexpr (kIsFloat<T> || kIsComplex<T>)
        if (same_out) return launch<CudaEwOp::kAdd, T, T>(l, stream);
      break;
    case CudaEwOp::kMul:
      if (same_out) return launch<CudaEwOp::kMul, T, T>(l, stream);
      break;
    case CudaEwOp::kPow:
      if constexpr (!kIsBool<T>)
        if (same_out) return launch<CudaEwOp::kPow, T, T>(l, stream);
      break;
    case CudaEwOp::kGcd:
      if constexpr (kIsInteger<T>)
        if (same_out) return launch<CudaEwOp::kGcd, T, T>(l, stream);
      break;
    case CudaEwOp::kPolar:
      if constexpr (std::is_same_v<T, Float>)
        if (l.out_dtype == kC64) return launch<CudaEwOp::kPolar, T, Complex64>(l, stream);
      if constexpr (std::is_same_v<T, Double>)
        if (l.out_dtype == kC128) return launch<CudaEwOp::kPolar, T, Complex128>(l, stream);
      break;
    case CudaEwOp::kAbs:
    case CudaEwOp::kAngle:
      if constexpr (kIsComplex<T>) {
        if (l.out_dtype == RealOf<T>::kDtype)
          return l.op == CudaEwOp::kAbs ? launch<CudaEwOp::kAbs, T, RealOf<T>>(l, stream)
                                        : launch<CudaEwOp::kAngle, T, RealOf<T>>(l, stream);
      } else if constexpr (kIsFloat<T>) {
        if (same_out)
          return l.op == CudaEwOp::kAbs ? launch<CudaEwOp::kAbs, T, T>(l, stream)
                                        : launch<CudaEwOp::kAngle, T, T>(l, stream);
      } else if constexpr (kIsInteger<T>) {
        if (same_out && l.op == CudaEwOp::kAbs) return launch<CudaEwOp::kAbs, T, T>(l, stream);
      }
      break;
    case CudaEwOp::kPowExp:
      if constexpr (kIsFloat<T> || kIsComplex<T>)
        if (same_out) return launch<CudaEwOp::kPowExp, T, T>(l, stream);
      break;
    case CudaEwOp::kCopy:
      if (same_out) return launch<CudaEwOp::kCopy, T, T>(l, stream);
      break;
    case CudaEwOp::kFill:
      if (same_out) return launch<CudaEwOp::kFill, T, T>(l, stream);
      break;
  }
  return cudaErrorInvalidValue;
}

// One window element, rounded to T after every step as torch's chain of
// ops in the dtype rounds it (float64: computed directly).
template <class T>
__global__ void __launch_bounds__(kThreads) hann_kernel(char* out, int64_t n, typename T::C step) {
  using C = typename T::C;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  char* p = out + i * static_cast<int64_t>(sizeof(typename T::S));
  if (n == 1) {
    T::store(p, C(1));
    return;
  }
  if constexpr (std::is_same_v<T, Double>) {
    T::store(p, 0.5 - 0.5 * cos(step * static_cast<double>(i)));
  } else {
    auto round = [](float v) { return convert<T, Float>(v); };
    // __fmul_rn / __fadd_rn: separate roundings, as torch's separate ops.
    float v = round(static_cast<float>(i));
    v = round(__fmul_rn(v, step));
    v = round(cosf(v));
    v = round(__fmul_rn(v, -0.5f));
    v = round(__fadd_rn(v, 0.5f));
    T::store(p, v);
  }
}

}  // namespace

cudaError_t cuda_launch_elementwise(const CudaEwLaunch& l, cudaStream_t stream) {
  if (l.numel <= 0) return cudaSuccess;
  if (l.ndim < 0 || l.ndim > kCudaEwMaxDims) return cudaErrorInvalidValue;
  cudaError_t err = cudaErrorInvalidValue;
  dispatch(l.common, [&](auto t) { err = launch_common<decltype(t)>(l, stream); });
  return err;
}

cudaError_t cuda_launch_hann_window(void* out, int dtype, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  const double step = 2.0 * kPi / static_cast<double>(n);
  char* o = static_cast<char*>(out);
  switch (dtype) {
    case kF64: hann_kernel<Double><<<blocks, kThreads, 0, stream>>>(o, n, step); break;
    case kF32: hann_kernel<Float><<<blocks, kThreads, 0, stream>>>(o, n, static_cast<float>(step)); break;
    // The step, a Scalar operand of the multiply, stays in float: torch's
    // CUDA kernels take a Scalar in their float op math.
    case kF16: hann_kernel<Half><<<blocks, kThreads, 0, stream>>>(o, n, static_cast<float>(step)); break;
    case kBF16: hann_kernel<BFloat16><<<blocks, kThreads, 0, stream>>>(o, n, static_cast<float>(step)); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace aotirt
