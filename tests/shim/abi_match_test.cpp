// Proves that src/shim/shim_abi.h and the op families' headers (shim_ops.h)
// declare the aoti_torch_* ABI exactly as torch's own headers do. Both sets of declarations land in one translation
// unit: two extern "C" functions of the same name with different parameter or
// return types are a compile error in C++, so any drift breaks the build of
// this test.
//
// The file is compiled twice (see tests/CMakeLists.txt):
//  * with AOTIRT_ABI_CHECK_SKIP_C10_TYPES: every declaration that uses only
//    C types is checked by redeclaration, and a few runtime tests run;
//  * with AOTIRT_ABI_MATCH_C10_PASS: the handful of functions whose torch
//    declarations use c10::Half, c10::BFloat16 or c10::complex are renamed in
//    our header, and their types are compared after mapping each c10 type to
//    our layout-compatible stand-in.
//
// USE_CUDA makes torch's shim.h declare the CUDA guard and stream entry
// points, and c_shim_cuda.h declares the CUDA fallback ops; both compile
// without any CUDA header.
#define USE_CUDA 1

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/inductor/aoti_torch/generated/c_shim_cpu.h>
#include <torch/csrc/inductor/aoti_torch/generated/c_shim_cuda.h>
// The device-generic ops (shim.h brings shim_deprecated.h's).
#include <torch/csrc/inductor/aoti_torch/generated/c_shim_aten.h>
// The oneDNN shims of frozen packages (declared when torch was built with oneDNN).
#include <torch/csrc/inductor/aoti_torch/c/shim_cpu.h>

#include <type_traits>

#ifdef AOTIRT_ABI_MATCH_C10_PASS
#define aoti_torch_item_float16 aotirt_abi_ours_item_float16
#define aoti_torch_item_bfloat16 aotirt_abi_ours_item_bfloat16
#define aoti_torch_item_complex64 aotirt_abi_ours_item_complex64
#define aoti_torch_scalar_to_tensor_complex64 aotirt_abi_ours_scalar_to_tensor_complex64
#define aoti_torch_scalar_to_tensor_complex128 aotirt_abi_ours_scalar_to_tensor_complex128
#endif

#include "shim/shim_abi.h"
#include "shim/shim_ops.h"

#ifdef AOTIRT_ABI_MATCH_C10_PASS
#undef aoti_torch_item_float16
#undef aoti_torch_item_bfloat16
#undef aoti_torch_item_complex64
#undef aoti_torch_scalar_to_tensor_complex64
#undef aoti_torch_scalar_to_tensor_complex128
#endif

// Our stand-ins have the size and alignment of the c10 types they replace,
// so passing them (by pointer or by value) is ABI-compatible.
static_assert(sizeof(AotirtHalf) == sizeof(c10::Half), "AotirtHalf size");
static_assert(alignof(AotirtHalf) == alignof(c10::Half), "AotirtHalf alignment");
static_assert(sizeof(AotirtBFloat16) == sizeof(c10::BFloat16), "AotirtBFloat16 size");
static_assert(alignof(AotirtBFloat16) == alignof(c10::BFloat16), "AotirtBFloat16 alignment");
static_assert(sizeof(AotirtComplex64) == sizeof(c10::complex<float>), "AotirtComplex64 size");
static_assert(alignof(AotirtComplex64) == alignof(c10::complex<float>), "AotirtComplex64 alignment");
static_assert(sizeof(AotirtComplex128) == sizeof(c10::complex<double>), "AotirtComplex128 size");
static_assert(alignof(AotirtComplex128) == alignof(c10::complex<double>), "AotirtComplex128 alignment");
static_assert(std::is_trivially_copyable<AotirtComplex64>::value, "passed by value in registers");
static_assert(std::is_trivially_copyable<AotirtComplex128>::value, "passed by value in registers");

// The handle types are the very same types as torch's (a redeclaration of a
// typedef to another type would not compile either).
static_assert(std::is_same<AOTITorchError, int32_t>::value, "AOTITorchError");

#ifdef AOTIRT_ABI_MATCH_C10_PASS

namespace {

// Maps a torch parameter type to the type our header uses in its place.
template <class T>
struct ToOurs {
  using type = T;
};
template <>
struct ToOurs<c10::Half*> {
  using type = AotirtHalf*;
};
template <>
struct ToOurs<c10::BFloat16*> {
  using type = AotirtBFloat16*;
};
template <>
struct ToOurs<c10::complex<float>*> {
  using type = AotirtComplex64*;
};
template <>
struct ToOurs<c10::complex<float>> {
  using type = AotirtComplex64;
};
template <>
struct ToOurs<c10::complex<double>> {
  using type = AotirtComplex128;
};

template <class F>
struct MapSignature;
template <class R, class... Args>
struct MapSignature<R (*)(Args...)> {
  using type = R (*)(typename ToOurs<Args>::type...);
};

#define AOTIRT_EXPECT_SAME_AFTER_MAPPING(torch_fn, our_fn)                                       \
  static_assert(std::is_same<MapSignature<decltype(&torch_fn)>::type, decltype(&our_fn)>::value, \
                #our_fn " does not match torch's " #torch_fn)

AOTIRT_EXPECT_SAME_AFTER_MAPPING(aoti_torch_item_float16, aotirt_abi_ours_item_float16);
AOTIRT_EXPECT_SAME_AFTER_MAPPING(aoti_torch_item_bfloat16, aotirt_abi_ours_item_bfloat16);
AOTIRT_EXPECT_SAME_AFTER_MAPPING(aoti_torch_item_complex64, aotirt_abi_ours_item_complex64);
AOTIRT_EXPECT_SAME_AFTER_MAPPING(aoti_torch_scalar_to_tensor_complex64, aotirt_abi_ours_scalar_to_tensor_complex64);
AOTIRT_EXPECT_SAME_AFTER_MAPPING(aoti_torch_scalar_to_tensor_complex128,
                                 aotirt_abi_ours_scalar_to_tensor_complex128);

}  // namespace

#else  // the main pass, with the runtime tests

#include <gtest/gtest.h>

#include <cstring>

namespace {

// Everything above is checked at compile time; this shows the stand-ins
// carry the same bits as the c10 types.
TEST(AbiMatchTest, StandInsHoldTheSameBits) {
  c10::Half h(1.5f);
  AotirtHalf ours;
  std::memcpy(&ours, &h, sizeof(ours));
  EXPECT_EQ(ours.bits, 0x3E00);
  c10::BFloat16 b(-2.0f);
  AotirtBFloat16 our_b;
  std::memcpy(&our_b, &b, sizeof(our_b));
  EXPECT_EQ(our_b.bits, 0xC000);
  c10::complex<float> c(1.0f, -3.0f);
  AotirtComplex64 our_c;
  std::memcpy(&our_c, &c, sizeof(our_c));
  EXPECT_EQ(our_c.real, 1.0f);
  EXPECT_EQ(our_c.imag, -3.0f);
  c10::complex<double> d(2.5, 4.0);
  AotirtComplex128 our_d;
  std::memcpy(&our_d, &d, sizeof(our_d));
  EXPECT_EQ(our_d.real, 2.5);
  EXPECT_EQ(our_d.imag, 4.0);
}

}  // namespace

#endif
