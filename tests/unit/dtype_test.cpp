// Element types: sizes, names, name parsing, device ids, and the half,
// bfloat16 and float8 conversions checked against known bit patterns and
// against a brute-force nearest-value reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/dtype.h"

namespace aotirt {
namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct DTypeRow {
  DType dtype;
  int code;
  size_t size;
  const char* name;
  bool floating;
  bool complex;
};

// c10's ScalarType numbers and element sizes.
const DTypeRow kAllDTypes[] = {
    {DType::kUInt8, 0, 1, "uint8", false, false},
    {DType::kInt8, 1, 1, "int8", false, false},
    {DType::kInt16, 2, 2, "int16", false, false},
    {DType::kInt32, 3, 4, "int32", false, false},
    {DType::kInt64, 4, 8, "int64", false, false},
    {DType::kFloat16, 5, 2, "float16", true, false},
    {DType::kFloat32, 6, 4, "float32", true, false},
    {DType::kFloat64, 7, 8, "float64", true, false},
    {DType::kComplex32, 8, 4, "complex32", false, true},
    {DType::kComplex64, 9, 8, "complex64", false, true},
    {DType::kComplex128, 10, 16, "complex128", false, true},
    {DType::kBool, 11, 1, "bool", false, false},
    {DType::kBFloat16, 15, 2, "bfloat16", true, false},
    {DType::kFloat8_e5m2, 23, 1, "float8_e5m2", true, false},
    {DType::kFloat8_e4m3fn, 24, 1, "float8_e4m3fn", true, false},
    {DType::kFloat8_e5m2fnuz, 25, 1, "float8_e5m2fnuz", true, false},
    {DType::kFloat8_e4m3fnuz, 26, 1, "float8_e4m3fnuz", true, false},
    {DType::kUInt16, 27, 2, "uint16", false, false},
    {DType::kUInt32, 28, 4, "uint32", false, false},
    {DType::kUInt64, 29, 8, "uint64", false, false},
};

TEST(DTypeTest, CodesSizesAndNamesOfEveryDType) {
  for (const auto& row : kAllDTypes) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(static_cast<int>(row.dtype), row.code);
    EXPECT_TRUE(dtype_is_valid(row.code));
    EXPECT_EQ(dtype_size(row.dtype), row.size);
    EXPECT_STREQ(dtype_name(row.dtype), row.name);
    EXPECT_EQ(dtype_is_floating(row.dtype), row.floating);
    EXPECT_EQ(dtype_is_complex(row.dtype), row.complex);
    EXPECT_EQ(dtype_is_integral(row.dtype), !row.floating && !row.complex);
  }
}

TEST(DTypeTest, ValidityMatchesTheTableExactly) {
  for (int code = -5; code < 64; ++code) {
    bool in_table = std::any_of(std::begin(kAllDTypes), std::end(kAllDTypes),
                                [&](const DTypeRow& r) { return r.code == code; });
    EXPECT_EQ(dtype_is_valid(code), in_table) << "code " << code;
  }
}

TEST(DTypeTest, InvalidDTypeHasNoSizeOrName) {
  for (int code : {12, 13, 14, 16, 22, 30, 100}) {
    EXPECT_EQ(dtype_size(static_cast<DType>(code)), 0u) << code;
    EXPECT_STREQ(dtype_name(static_cast<DType>(code)), "invalid") << code;
  }
}

TEST(DTypeTest, NameRoundTripsForEveryDType) {
  for (const auto& row : kAllDTypes) {
    Result<DType> plain = dtype_from_name(row.name);
    ASSERT_TRUE(plain.ok()) << row.name << ": " << plain.status().to_string();
    EXPECT_EQ(*plain, row.dtype);
    Result<DType> prefixed = dtype_from_name(std::string("torch.") + row.name);
    ASSERT_TRUE(prefixed.ok()) << row.name;
    EXPECT_EQ(*prefixed, row.dtype);
    std::string upper = row.name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    Result<DType> shouted = dtype_from_name(upper);
    ASSERT_TRUE(shouted.ok()) << upper;
    EXPECT_EQ(*shouted, row.dtype);
  }
}

TEST(DTypeTest, Aliases) {
  const struct { const char* alias; DType dtype; } kAliases[] = {
      {"float", DType::kFloat32},  {"double", DType::kFloat64}, {"half", DType::kFloat16},
      {"bf16", DType::kBFloat16},  {"f16", DType::kFloat16},    {"f32", DType::kFloat32},
      {"f64", DType::kFloat64},    {"long", DType::kInt64},     {"int", DType::kInt32},
      {"torch.float", DType::kFloat32}, {"torch.long", DType::kInt64}, {"Half", DType::kFloat16},
  };
  for (const auto& a : kAliases) {
    Result<DType> r = dtype_from_name(a.alias);
    ASSERT_TRUE(r.ok()) << a.alias;
    EXPECT_EQ(*r, a.dtype) << a.alias;
  }
}

TEST(DTypeTest, UnknownNamesAreRefusedWithTheName) {
  for (const char* bad : {"", "float33", "torch.", "complex", "int128", "float8", " float32", "invalid"}) {
    Result<DType> r = dtype_from_name(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
  }
}

// ---- bfloat16 ----

TEST(BFloat16Test, KnownBitPatterns) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(3.140625f), 0x4049);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC000), -2.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(BFloat16Test, RoundsToNearestEven) {
  // Exactly halfway, lower neighbour even: stays.
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F808000u)), 0x3F80);
  // Exactly halfway, lower neighbour odd: goes up to the even one.
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F818000u)), 0x3F82);
  // Just above or below halfway.
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F808001u)), 0x3F81);
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3F807FFFu)), 0x3F80);
  // Carry into the exponent.
  EXPECT_EQ(float_to_bf16(bits_to_float(0x3FFFFFFFu)), 0x4000);
}

TEST(BFloat16Test, InfinityOverflowAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bf16(inf), 0x7F80);
  EXPECT_EQ(float_to_bf16(-inf), 0xFF80);
  // FLT_MAX is past the last bfloat16 halfway point: rounds to infinity.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16(bits_to_float(0x7F7F7FFFu)), 0x7F7F);
  uint16_t nan = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16_to_float(nan)));
  // A NaN whose payload sits only in the low bits must not round to infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bits_to_float(0x7F800001u)))));
  EXPECT_TRUE(std::isinf(bf16_to_float(0x7F80)));
}

TEST(BFloat16Test, Subnormals) {
  EXPECT_EQ(float_to_bf16(bits_to_float(0x00010000u)), 0x0001);
  EXPECT_EQ(bf16_to_float(0x0001), bits_to_float(0x00010000u));
  EXPECT_EQ(float_to_bf16(bits_to_float(0x00008000u)), 0x0000);  // tie to even zero
  EXPECT_EQ(float_to_bf16(bits_to_float(0x00018000u)), 0x0002);  // tie to even two
  EXPECT_EQ(float_to_bf16(bits_to_float(0x80000001u)), 0x8000);
}

TEST(BFloat16Test, EveryValueRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f))));
    } else {
      ASSERT_EQ(float_to_bf16(f), b) << std::hex << b;
    }
  }
}

// ---- half ----

TEST(HalfTest, KnownBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(HalfTest, RoundsToNearestEven) {
  const float ulp1 = std::ldexp(1.0f, -10);
  EXPECT_EQ(float_to_half(1.0f + ulp1 / 2), 0x3C00);       // tie, even below
  EXPECT_EQ(float_to_half(1.0f + 3 * ulp1 / 2), 0x3C02);   // tie, even above
  EXPECT_EQ(float_to_half(std::nextafter(1.0f + ulp1 / 2, 2.0f)), 0x3C01);
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);  // 2048
  EXPECT_EQ(float_to_half(2051.0f), 0x6802);  // 2052
  // Carry from the mantissa into the exponent.
  EXPECT_EQ(float_to_half(std::nextafter(2048.0f, 0.0f)), 0x6800);
}

TEST(HalfTest, OverflowInfinityAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(65519.996f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // tie goes to the even infinity
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(-1e10f), 0xFC00);
  EXPECT_EQ(float_to_half(inf), 0x7C00);
  EXPECT_EQ(float_to_half(-inf), 0xFC00);
  EXPECT_EQ(half_to_float(0x7C00), inf);
  EXPECT_EQ(half_to_float(0xFC00), -inf);
  uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7C01)));
}

TEST(HalfTest, Subnormals) {
  const float tiny = std::ldexp(1.0f, -24);  // smallest half subnormal
  EXPECT_EQ(float_to_half(tiny), 0x0001);
  EXPECT_EQ(half_to_float(0x0001), tiny);
  EXPECT_EQ(half_to_float(0x03FF), 1023 * tiny);
  EXPECT_EQ(float_to_half(1023 * tiny), 0x03FF);
  EXPECT_EQ(float_to_half(tiny / 2), 0x0000);        // tie to even zero
  EXPECT_EQ(float_to_half(1.5f * tiny), 0x0002);     // tie to even two
  EXPECT_EQ(float_to_half(2.5f * tiny), 0x0002);     // tie to even two, from above
  EXPECT_EQ(float_to_half(std::nextafter(tiny / 2, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half(tiny / 4), 0x0000);
  EXPECT_EQ(float_to_half(-tiny), 0x8001);
  EXPECT_EQ(float_to_half(-tiny / 4), 0x8000);
  // The largest subnormal plus half an ulp rounds up into the normal range.
  EXPECT_EQ(float_to_half(1023.5f * tiny), 0x0400);
}

TEST(HalfTest, EveryValueRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
    } else {
      ASSERT_EQ(float_to_half(f), h) << std::hex << h;
    }
  }
}

// Nearest representable value by search over the sorted positive values of a
// 16-bit format, ties to the even code, |overflow_at| and beyond to infinity.
uint16_t reference_round(float f, const std::vector<float>& positive, double overflow_at, uint16_t inf_code) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(f));
  if (a >= overflow_at) return sign | inf_code;
  auto it = std::lower_bound(positive.begin(), positive.end(), a);
  size_t hi = static_cast<size_t>(it - positive.begin());
  if (hi == positive.size()) return sign | static_cast<uint16_t>(positive.size() - 1);
  if (positive[hi] == a || hi == 0) return sign | static_cast<uint16_t>(hi);
  size_t lo = hi - 1;
  double dlo = a - positive[lo], dhi = positive[hi] - a;
  size_t pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  return sign | static_cast<uint16_t>(pick);
}

TEST(HalfTest, MatchesNearestValueSearchOnRandomFloats) {
  std::vector<float> positive;
  for (uint32_t h = 0; h < 0x7C00; ++h) positive.push_back(half_to_float(static_cast<uint16_t>(h)));
  std::vector<float> bpositive;
  for (uint32_t b = 0; b < 0x7F80; ++b) bpositive.push_back(bf16_to_float(static_cast<uint16_t>(b)));
  std::mt19937 rng(1234);
  // Exponents spread over the half range and a bit beyond.
  std::uniform_int_distribution<uint32_t> exp_dist(127 - 30, 127 + 17), man_dist(0, 0x7FFFFF), sign_dist(0, 1);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = (sign_dist(rng) << 31) | (exp_dist(rng) << 23) | man_dist(rng);
    float f = bits_to_float(bits);
    ASSERT_EQ(float_to_half(f), reference_round(f, positive, 65520.0, 0x7C00)) << std::hex << bits;
  }
  std::uniform_int_distribution<uint32_t> any_exp(0, 254);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = (sign_dist(rng) << 31) | (any_exp(rng) << 23) | man_dist(rng);
    float f = bits_to_float(bits);
    // bfloat16's largest finite value is 0x7F7F; halfway to the next is 0x7F7F8000.
    double overflow = static_cast<double>(bits_to_float(0x7F7F0000u)) + std::ldexp(1.0, 127 - 8);
    ASSERT_EQ(float_to_bf16(f), reference_round(f, bpositive, overflow, 0x7F80)) << std::hex << bits;
  }
}

// ---- float8 ----

uint8_t encode_fp8(float f, DType dtype) {
  uint8_t out = 0;
  store_from_double(&out, dtype, f);
  return out;
}

double decode_fp8(uint8_t code, DType dtype) { return load_as_double(&code, dtype); }

TEST(Float8Test, KnownValues) {
  EXPECT_EQ(encode_fp8(1.0f, DType::kFloat8_e4m3fn), 0x38);
  EXPECT_EQ(encode_fp8(1.0f, DType::kFloat8_e5m2), 0x3C);
  EXPECT_EQ(encode_fp8(1.0f, DType::kFloat8_e4m3fnuz), 0x40);
  EXPECT_EQ(encode_fp8(1.0f, DType::kFloat8_e5m2fnuz), 0x40);
  EXPECT_EQ(encode_fp8(-1.5f, DType::kFloat8_e4m3fn), 0xBC);
  EXPECT_EQ(encode_fp8(448.0f, DType::kFloat8_e4m3fn), 0x7E);
  EXPECT_EQ(encode_fp8(57344.0f, DType::kFloat8_e5m2), 0x7B);
  EXPECT_EQ(encode_fp8(240.0f, DType::kFloat8_e4m3fnuz), 0x7F);
  EXPECT_EQ(encode_fp8(57344.0f, DType::kFloat8_e5m2fnuz), 0x7F);
  EXPECT_EQ(decode_fp8(0x7E, DType::kFloat8_e4m3fn), 448.0);
  EXPECT_EQ(decode_fp8(0x01, DType::kFloat8_e4m3fn), std::ldexp(1.0, -9));
  EXPECT_EQ(decode_fp8(0x01, DType::kFloat8_e5m2), std::ldexp(1.0, -16));
  EXPECT_EQ(decode_fp8(0x01, DType::kFloat8_e4m3fnuz), std::ldexp(1.0, -10));
  EXPECT_EQ(decode_fp8(0x01, DType::kFloat8_e5m2fnuz), std::ldexp(1.0, -17));
  EXPECT_EQ(encode_fp8(std::ldexp(1.0f, -9), DType::kFloat8_e4m3fn), 0x01);
  EXPECT_TRUE(std::isinf(decode_fp8(0x7C, DType::kFloat8_e5m2)));
  EXPECT_TRUE(std::isnan(decode_fp8(0x7F, DType::kFloat8_e4m3fn)));
  EXPECT_TRUE(std::isnan(decode_fp8(0xFF, DType::kFloat8_e4m3fn)));
  EXPECT_TRUE(std::isnan(decode_fp8(0x7D, DType::kFloat8_e5m2)));
  EXPECT_TRUE(std::isnan(decode_fp8(0x80, DType::kFloat8_e4m3fnuz)));
  EXPECT_TRUE(std::isnan(decode_fp8(0x80, DType::kFloat8_e5m2fnuz)));
}

TEST(Float8Test, ZeroKeepsItsSign) {
  EXPECT_EQ(encode_fp8(0.0f, DType::kFloat8_e4m3fn), 0x00);
  EXPECT_EQ(encode_fp8(-0.0f, DType::kFloat8_e4m3fn), 0x80);
  EXPECT_EQ(encode_fp8(0.0f, DType::kFloat8_e5m2), 0x00);
  EXPECT_EQ(encode_fp8(-0.0f, DType::kFloat8_e5m2), 0x80);
  // fnuz types have no negative zero (0x80 is their NaN).
  EXPECT_EQ(encode_fp8(-0.0f, DType::kFloat8_e4m3fnuz), 0x00);
  EXPECT_EQ(encode_fp8(-0.0f, DType::kFloat8_e5m2fnuz), 0x00);
  EXPECT_EQ(encode_fp8(-1e-30f, DType::kFloat8_e4m3fnuz), 0x00);
}

// PyTorch's conversions are not saturating: past the largest finite value
// (after rounding) e5m2 gives infinity and the fn/fnuz types give NaN.
TEST(Float8Test, OverflowInfinityAndNaNFollowPyTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // e4m3fn: 464 is the tie between 448 (even code) and the NaN code.
  EXPECT_EQ(encode_fp8(464.0f, DType::kFloat8_e4m3fn), 0x7E);
  EXPECT_EQ(encode_fp8(465.0f, DType::kFloat8_e4m3fn), 0x7F);
  EXPECT_EQ(encode_fp8(1000.0f, DType::kFloat8_e4m3fn), 0x7F);
  EXPECT_EQ(encode_fp8(-1000.0f, DType::kFloat8_e4m3fn), 0xFF);
  EXPECT_EQ(encode_fp8(inf, DType::kFloat8_e4m3fn), 0x7F);
  EXPECT_EQ(encode_fp8(-inf, DType::kFloat8_e4m3fn), 0xFF);
  EXPECT_TRUE(std::isnan(decode_fp8(encode_fp8(nan, DType::kFloat8_e4m3fn), DType::kFloat8_e4m3fn)));
  // e5m2: 61440 is the tie between 57344 (odd code) and infinity.
  EXPECT_EQ(encode_fp8(60000.0f, DType::kFloat8_e5m2), 0x7B);
  EXPECT_EQ(encode_fp8(61440.0f, DType::kFloat8_e5m2), 0x7C);
  EXPECT_EQ(encode_fp8(1e6f, DType::kFloat8_e5m2), 0x7C);
  EXPECT_EQ(encode_fp8(inf, DType::kFloat8_e5m2), 0x7C);
  EXPECT_EQ(encode_fp8(-inf, DType::kFloat8_e5m2), 0xFC);
  EXPECT_TRUE(std::isnan(decode_fp8(encode_fp8(nan, DType::kFloat8_e5m2), DType::kFloat8_e5m2)));
  // fnuz: one NaN code, no infinity.
  EXPECT_EQ(encode_fp8(244.0f, DType::kFloat8_e4m3fnuz), 0x7F);
  EXPECT_EQ(encode_fp8(248.0f, DType::kFloat8_e4m3fnuz), 0x80);
  EXPECT_EQ(encode_fp8(-300.0f, DType::kFloat8_e4m3fnuz), 0x80);
  EXPECT_EQ(encode_fp8(inf, DType::kFloat8_e5m2fnuz), 0x80);
  EXPECT_EQ(encode_fp8(nan, DType::kFloat8_e5m2fnuz), 0x80);
  EXPECT_EQ(encode_fp8(nan, DType::kFloat8_e4m3fnuz), 0x80);
}

TEST(Float8Test, EveryCodeRoundTripsAndTiesGoToEven) {
  for (DType dt : {DType::kFloat8_e5m2, DType::kFloat8_e4m3fn, DType::kFloat8_e5m2fnuz, DType::kFloat8_e4m3fnuz}) {
    SCOPED_TRACE(dtype_name(dt));
    for (int c = 0; c < 256; ++c) {
      double v = decode_fp8(static_cast<uint8_t>(c), dt);
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(encode_fp8(static_cast<float>(v), dt), c) << "code " << c << " value " << v;
    }
    // Midpoints between neighbouring positive finite codes round to the even one.
    for (int c = 0; c + 1 < 128; ++c) {
      double a = decode_fp8(static_cast<uint8_t>(c), dt), b = decode_fp8(static_cast<uint8_t>(c + 1), dt);
      if (std::isnan(a) || std::isnan(b) || std::isinf(b)) continue;
      float mid = static_cast<float>((a + b) / 2);
      EXPECT_EQ(encode_fp8(mid, dt), c % 2 == 0 ? c : c + 1) << "between codes " << c << " and " << c + 1;
    }
  }
}

// ---- generic element conversion ----

TEST(ElementConversionTest, LoadAndStoreEveryDType) {
  for (const auto& row : kAllDTypes) {
    SCOPED_TRACE(row.name);
    alignas(16) unsigned char buf[16] = {0};
    store_from_double(buf, row.dtype, 3.0);
    EXPECT_EQ(load_as_double(buf, row.dtype), row.dtype == DType::kBool ? 1.0 : 3.0);
    store_from_int64(buf, row.dtype, 2);
    EXPECT_EQ(load_as_int64(buf, row.dtype), row.dtype == DType::kBool ? 1 : 2);
    store_from_double(buf, row.dtype, 0.0);
    EXPECT_EQ(load_as_double(buf, row.dtype), 0.0);
  }
}

TEST(ElementConversionTest, ComplexStoresZeroImaginary) {
  float c64[2] = {9.0f, 9.0f};
  store_from_double(c64, DType::kComplex64, 1.5);
  EXPECT_EQ(c64[0], 1.5f);
  EXPECT_EQ(c64[1], 0.0f);
  double c128[2] = {9.0, 9.0};
  store_from_double(c128, DType::kComplex128, -2.5);
  EXPECT_EQ(c128[0], -2.5);
  EXPECT_EQ(c128[1], 0.0);
  EXPECT_EQ(load_as_double(c128, DType::kComplex128), -2.5);
}

TEST(ElementConversionTest, Int64StaysExact) {
  const int64_t big = (int64_t{1} << 62) + 1;  // not representable as a double
  int64_t v = 0;
  store_from_int64(&v, DType::kInt64, big);
  EXPECT_EQ(load_as_int64(&v, DType::kInt64), big);
  uint64_t u = 0;
  store_from_int64(&u, DType::kUInt64, big);
  EXPECT_EQ(u, static_cast<uint64_t>(big));
  EXPECT_EQ(load_as_int64(&u, DType::kUInt64), big);
  int32_t w = 0;
  store_from_int64(&w, DType::kInt32, (int64_t{1} << 32) + 5);  // wraps like a C cast
  EXPECT_EQ(w, 5);
  uint8_t b = 7;
  store_from_int64(&b, DType::kBool, int64_t{1} << 40);
  EXPECT_EQ(b, 1);
}

// ---- devices ----

TEST(DeviceIdTest, ParsesGoodStrings) {
  const struct { const char* text; DeviceType type; int index; const char* canonical; } kGood[] = {
      {"cpu", DeviceType::kCpu, 0, "cpu"},     {"cpu:0", DeviceType::kCpu, 0, "cpu"},
      {"cuda", DeviceType::kCuda, 0, "cuda:0"}, {"cuda:0", DeviceType::kCuda, 0, "cuda:0"},
      {"cuda:7", DeviceType::kCuda, 7, "cuda:7"}, {"cuda:15", DeviceType::kCuda, 15, "cuda:15"},
      {"mps", DeviceType::kMps, 0, "mps:0"},     {"mps:1", DeviceType::kMps, 1, "mps:1"},
  };
  for (const auto& g : kGood) {
    Result<DeviceId> r = DeviceId::parse(g.text);
    ASSERT_TRUE(r.ok()) << g.text << ": " << r.status().to_string();
    EXPECT_EQ(r->type, g.type) << g.text;
    EXPECT_EQ(r->index, g.index) << g.text;
    EXPECT_EQ(r->to_string(), g.canonical);
    Result<DeviceId> again = DeviceId::parse(r->to_string());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *r);
  }
}

TEST(DeviceIdTest, RefusesBadStrings) {
  for (const char* bad : {"", "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:0:1", "cuda:1x", "cpu:1", ":0", " cpu",
                          "cpu ", "cuda:123456", "cuda0", "CUDA:0"}) {
    Result<DeviceId> r = DeviceId::parse(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' parsed";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
  }
}

TEST(DeviceIdTest, TypeNamesAndEquality) {
  EXPECT_STREQ(device_type_name(DeviceType::kCpu), "cpu");
  EXPECT_STREQ(device_type_name(DeviceType::kCuda), "cuda");
  EXPECT_STREQ(device_type_name(DeviceType::kMps), "mps");
  EXPECT_EQ(static_cast<int>(DeviceType::kCpu), 0);
  EXPECT_EQ(static_cast<int>(DeviceType::kCuda), 1);
  EXPECT_EQ(static_cast<int>(DeviceType::kMps), 13);
  DeviceId a{DeviceType::kCuda, 1}, b{DeviceType::kCuda, 2};
  EXPECT_NE(a, b);
  EXPECT_TRUE(DeviceId{}.is_cpu());
  EXPECT_FALSE(a.is_cpu());
}

}  // namespace
}  // namespace aotirt
