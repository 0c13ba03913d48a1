#include "core/dtype.h"

#include <cctype>
#include <cmath>
#include <complex>

#include "base/status.h"

namespace aotirt {

bool dtype_is_valid(int32_t code) {
  return (code >= 0 && code <= 11) || code == 15 || (code >= 23 && code <= 29);
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: case DType::kInt8: case DType::kBool:
    case DType::kFloat8_e5m2: case DType::kFloat8_e4m3fn:
    case DType::kFloat8_e5m2fnuz: case DType::kFloat8_e4m3fnuz:
      return 1;
    case DType::kInt16: case DType::kFloat16: case DType::kBFloat16: case DType::kUInt16:
      return 2;
    case DType::kInt32: case DType::kFloat32: case DType::kComplex32: case DType::kUInt32:
      return 4;
    case DType::kInt64: case DType::kFloat64: case DType::kComplex64: case DType::kUInt64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat16: return "float16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kComplex32: return "complex32";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBool: return "bool";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8_e5m2: return "float8_e5m2";
    case DType::kFloat8_e4m3fn: return "float8_e4m3fn";
    case DType::kFloat8_e5m2fnuz: return "float8_e5m2fnuz";
    case DType::kFloat8_e4m3fnuz: return "float8_e4m3fnuz";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
  }
  return "invalid";
}

Result<DType> dtype_from_name(const std::string& raw) {
  std::string name;
  for (char c : raw) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  static const struct { const char* alias; DType dtype; } kAliases[] = {
      {"float", DType::kFloat32}, {"double", DType::kFloat64}, {"half", DType::kFloat16},
      {"bf16", DType::kBFloat16}, {"f16", DType::kFloat16},    {"f32", DType::kFloat32},
      {"f64", DType::kFloat64},   {"long", DType::kInt64},     {"int", DType::kInt32},
  };
  for (const auto& a : kAliases)
    if (name == a.alias) return a.dtype;
  for (int32_t code = 0; code < 30; ++code)
    if (dtype_is_valid(code) && name == dtype_name(static_cast<DType>(code)))
      return static_cast<DType>(code);
  return AOTIRT_STATUS(kInvalidArgument, "unknown dtype '{}'", raw);
}

bool dtype_is_floating(DType d) {
  switch (d) {
    case DType::kFloat16: case DType::kFloat32: case DType::kFloat64: case DType::kBFloat16:
    case DType::kFloat8_e5m2: case DType::kFloat8_e4m3fn: case DType::kFloat8_e5m2fnuz:
    case DType::kFloat8_e4m3fnuz:
      return true;
    default:
      return false;
  }
}

bool dtype_is_complex(DType d) {
  return d == DType::kComplex32 || d == DType::kComplex64 || d == DType::kComplex128;
}

bool dtype_is_integral(DType d) { return !dtype_is_floating(d) && !dtype_is_complex(d); }

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kCuda: return "cuda";
    case DeviceType::kMps: return "mps";
  }
  return "unknown";
}

std::string DeviceId::to_string() const {
  if (type == DeviceType::kCpu) return "cpu";
  return std::string(device_type_name(type)) + ":" + std::to_string(index);
}

Result<DeviceId> DeviceId::parse(const std::string& text) {
  std::string kind = text;
  int index = 0;
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    kind = text.substr(0, colon);
    std::string num = text.substr(colon + 1);
    if (num.empty() || num.size() > 4 ||
        num.find_first_not_of("0123456789") != std::string::npos)
      return AOTIRT_STATUS(kInvalidArgument, "bad device '{}': expected cpu, cuda[:N] or mps", text);
    index = std::stoi(num);
  }
  if (kind == "cpu") {
    if (index != 0) return AOTIRT_STATUS(kInvalidArgument, "bad device '{}': cpu has index 0 only", text);
    return DeviceId{DeviceType::kCpu, 0};
  }
  if (kind == "cuda") return DeviceId{DeviceType::kCuda, index};
  if (kind == "mps" || kind == "metal") return DeviceId{DeviceType::kMps, index};
  return AOTIRT_STATUS(kInvalidArgument, "bad device '{}': expected cpu, cuda[:N] or mps", text);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    // Half subnormals are multiples of 2^-24, so drop (126 - e) mantissa bits.
    uint32_t drop = 126 - e;
    uint32_t result = m >> drop;
    uint32_t rem = m & ((1u << drop) - 1);
    uint32_t halfway = 1u << (drop - 1);
    if (rem > halfway || (rem == halfway && (result & 1))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t e = (absx >> 23) - 127 + 15;
  uint32_t m = absx & 0x7fffffu;
  uint32_t result = (e << 10) | (m >> 13);
  uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1))) ++result;  // may carry into exp: correct
  return static_cast<uint16_t>(sign | result);
}

namespace {

// float8 decoders; encoders round to nearest even and saturate like PyTorch's
// "fn" types (e4m3fn has no inf: out of range maps to NaN for non-finite input).
float fp8_decode(uint8_t v, int exp_bits, int bias, bool fnuz, bool e4m3fn) {
  int man_bits = 7 - exp_bits;
  uint32_t sign = v >> 7;
  uint32_t e = (v >> man_bits) & ((1u << exp_bits) - 1);
  uint32_t m = v & ((1u << man_bits) - 1);
  if (fnuz && v == 0x80) return NAN;
  if (e4m3fn && e == 15 && m == 7) return NAN;
  if (!fnuz && !e4m3fn && e == (1u << exp_bits) - 1) return m ? NAN : (sign ? -INFINITY : INFINITY);
  float value;
  if (e == 0)
    value = std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
  else
    value = std::ldexp(static_cast<float>(m | (1u << man_bits)), static_cast<int>(e) - bias - man_bits);
  return sign ? -value : value;
}

uint8_t fp8_encode(float f, DType dtype) {
  // PyTorch's conversions round to nearest even and do not saturate: a value
  // that rounds past the largest finite one becomes infinity (e5m2) or NaN
  // (the fn and fnuz types). fnuz types have one NaN (0x80) and no -0.
  const bool fnuz = dtype == DType::kFloat8_e5m2fnuz || dtype == DType::kFloat8_e4m3fnuz;
  uint8_t max_code;  // largest finite magnitude
  float overflow_at;  // first magnitude past it: the next power of two
  switch (dtype) {
    case DType::kFloat8_e4m3fn: max_code = 0x7E; overflow_at = 480.0f; break;
    case DType::kFloat8_e4m3fnuz: max_code = 0x7F; overflow_at = 256.0f; break;
    case DType::kFloat8_e5m2fnuz: max_code = 0x7F; overflow_at = 65536.0f; break;
    default: max_code = 0x7B; overflow_at = 65536.0f; break;  // e5m2
  }
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const uint8_t nan_code = fnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7F);
  if (std::isnan(f)) return nan_code;
  const uint8_t overflow_code =
      dtype == DType::kFloat8_e5m2 ? static_cast<uint8_t>(sign | 0x7C) : nan_code;
  const float a = std::fabs(f);
  const float max_value = static_cast<float>(load_as_double(&max_code, dtype));
  if (a >= overflow_at) return overflow_code;
  if (a > max_value) {
    const float mid = (max_value + overflow_at) / 2;  // exact: both are short binary fractions
    if (a > mid || (a == mid && (max_code & 1))) return overflow_code;
    return static_cast<uint8_t>(sign | max_code);
  }
  // Search the positive codes for the nearest value: simple and exact, and
  // only used on cold paths (copies to float8 on the CPU).
  uint8_t best = 0;
  float best_err = INFINITY;
  for (int c = 0; c <= max_code; ++c) {
    uint8_t code = static_cast<uint8_t>(c);
    float err = std::fabs(static_cast<float>(load_as_double(&code, dtype)) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best_err = err;
      best = code;
    }
  }
  if (best == 0 && fnuz) return 0;
  return static_cast<uint8_t>(sign | best);
}

}  // namespace

double load_as_double(const void* src, DType dtype) {
  switch (dtype) {
    case DType::kUInt8: return *static_cast<const uint8_t*>(src);
    case DType::kInt8: return *static_cast<const int8_t*>(src);
    case DType::kInt16: return *static_cast<const int16_t*>(src);
    case DType::kInt32: return *static_cast<const int32_t*>(src);
    case DType::kInt64: return static_cast<double>(*static_cast<const int64_t*>(src));
    case DType::kUInt16: return *static_cast<const uint16_t*>(src);
    case DType::kUInt32: return *static_cast<const uint32_t*>(src);
    case DType::kUInt64: return static_cast<double>(*static_cast<const uint64_t*>(src));
    case DType::kBool: return *static_cast<const uint8_t*>(src) ? 1.0 : 0.0;
    case DType::kFloat16: return half_to_float(*static_cast<const uint16_t*>(src));
    case DType::kBFloat16: return bf16_to_float(*static_cast<const uint16_t*>(src));
    case DType::kFloat32: return *static_cast<const float*>(src);
    case DType::kFloat64: return *static_cast<const double*>(src);
    case DType::kComplex32: return half_to_float(*static_cast<const uint16_t*>(src));
    case DType::kComplex64: return *static_cast<const float*>(src);
    case DType::kComplex128: return *static_cast<const double*>(src);
    case DType::kFloat8_e5m2: return fp8_decode(*static_cast<const uint8_t*>(src), 5, 15, false, false);
    case DType::kFloat8_e4m3fn: return fp8_decode(*static_cast<const uint8_t*>(src), 4, 7, false, true);
    case DType::kFloat8_e5m2fnuz: return fp8_decode(*static_cast<const uint8_t*>(src), 5, 16, true, false);
    case DType::kFloat8_e4m3fnuz: return fp8_decode(*static_cast<const uint8_t*>(src), 4, 8, true, false);
  }
  return 0.0;
}

int64_t load_as_int64(const void* src, DType dtype) {
  switch (dtype) {
    case DType::kInt64: return *static_cast<const int64_t*>(src);
    case DType::kUInt64: return static_cast<int64_t>(*static_cast<const uint64_t*>(src));
    case DType::kUInt32: return *static_cast<const uint32_t*>(src);
    case DType::kInt32: return *static_cast<const int32_t*>(src);
    default: return static_cast<int64_t>(load_as_double(src, dtype));
  }
}

void store_from_double(void* dst, DType dtype, double v) {
  switch (dtype) {
    case DType::kUInt8: *static_cast<uint8_t*>(dst) = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
    case DType::kInt8: *static_cast<int8_t*>(dst) = static_cast<int8_t>(v); break;
    case DType::kInt16: *static_cast<int16_t*>(dst) = static_cast<int16_t>(v); break;
    case DType::kInt32: *static_cast<int32_t*>(dst) = static_cast<int32_t>(v); break;
    case DType::kInt64: *static_cast<int64_t*>(dst) = static_cast<int64_t>(v); break;
    case DType::kUInt16: *static_cast<uint16_t*>(dst) = static_cast<uint16_t>(v); break;
    case DType::kUInt32: *static_cast<uint32_t*>(dst) = static_cast<uint32_t>(v); break;
    case DType::kUInt64: *static_cast<uint64_t*>(dst) = static_cast<uint64_t>(v); break;
    case DType::kBool: *static_cast<uint8_t*>(dst) = v != 0.0; break;
    case DType::kFloat16: *static_cast<uint16_t*>(dst) = float_to_half(static_cast<float>(v)); break;
    case DType::kBFloat16: *static_cast<uint16_t*>(dst) = float_to_bf16(static_cast<float>(v)); break;
    case DType::kFloat32: *static_cast<float*>(dst) = static_cast<float>(v); break;
    case DType::kFloat64: *static_cast<double*>(dst) = v; break;
    case DType::kComplex32: {
      uint16_t* p = static_cast<uint16_t*>(dst);
      p[0] = float_to_half(static_cast<float>(v));
      p[1] = 0;
      break;
    }
    case DType::kComplex64: {
      float* p = static_cast<float*>(dst);
      p[0] = static_cast<float>(v);
      p[1] = 0;
      break;
    }
    case DType::kComplex128: {
      double* p = static_cast<double*>(dst);
      p[0] = v;
      p[1] = 0;
      break;
    }
    case DType::kFloat8_e5m2: case DType::kFloat8_e4m3fn:
    case DType::kFloat8_e5m2fnuz: case DType::kFloat8_e4m3fnuz:
      *static_cast<uint8_t*>(dst) = fp8_encode(static_cast<float>(v), dtype);
      break;
  }
}

void store_from_int64(void* dst, DType dtype, int64_t v) {
  switch (dtype) {
    case DType::kInt64: *static_cast<int64_t*>(dst) = v; break;
    case DType::kUInt64: *static_cast<uint64_t*>(dst) = static_cast<uint64_t>(v); break;
    case DType::kInt32: *static_cast<int32_t*>(dst) = static_cast<int32_t>(v); break;
    case DType::kUInt32: *static_cast<uint32_t*>(dst) = static_cast<uint32_t>(v); break;
    case DType::kInt16: *static_cast<int16_t*>(dst) = static_cast<int16_t>(v); break;
    case DType::kUInt16: *static_cast<uint16_t*>(dst) = static_cast<uint16_t>(v); break;
    case DType::kInt8: *static_cast<int8_t*>(dst) = static_cast<int8_t>(v); break;
    case DType::kUInt8: *static_cast<uint8_t*>(dst) = static_cast<uint8_t>(v); break;
    case DType::kBool: *static_cast<uint8_t*>(dst) = v != 0; break;
    default: store_from_double(dst, dtype, static_cast<double>(v)); break;
  }
}

}  // namespace aotirt
