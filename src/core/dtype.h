// Element-type helpers for the core: half and bfloat16 conversions and a
// generic "convert one element" routine used by strided copies and item().
#pragma once

#include <cstdint>
#include <cstring>

#include "aotirt/types.h"

namespace aotirt {

inline float bf16_to_float(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as PyTorch does; NaN stays NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

// Reads element |src| of |dtype| as double (real part for complex types).
double load_as_double(const void* src, DType dtype);
// Reads as int64 without the double detour, so large int64 values stay exact.
int64_t load_as_int64(const void* src, DType dtype);
// Writes |value| into |dst| converted to |dtype|.
void store_from_double(void* dst, DType dtype, double value);
void store_from_int64(void* dst, DType dtype, int64_t value);
bool dtype_is_integral(DType dtype);  // includes bool

}  // namespace aotirt
