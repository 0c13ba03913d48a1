// Element types and device identities shared by the public API and the core.
//
// The numbers equal c10's (ScalarType and DeviceType), because the AOTI model
// library compares them with literals in generated code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "aotirt/status.h"

namespace aotirt {

enum class DType : int8_t {
  kUInt8 = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kFloat16 = 5,
  kFloat32 = 6,
  kFloat64 = 7,
  kComplex32 = 8,
  kComplex64 = 9,
  kComplex128 = 10,
  kBool = 11,
  kBFloat16 = 15,
  kFloat8_e5m2 = 23,
  kFloat8_e4m3fn = 24,
  kFloat8_e5m2fnuz = 25,
  kFloat8_e4m3fnuz = 26,
  kUInt16 = 27,
  kUInt32 = 28,
  kUInt64 = 29,
};

// Returns true when |code| is one of the DType values above.
AOTIRT_API bool dtype_is_valid(int32_t code);
// Element size in bytes; 0 for an invalid dtype.
AOTIRT_API size_t dtype_size(DType dtype);
// "float32", "bfloat16", ... (PyTorch's names); "invalid" otherwise.
AOTIRT_API const char* dtype_name(DType dtype);
// Parses the names dtype_name() returns, plus numpy-style aliases.
AOTIRT_API Result<DType> dtype_from_name(const std::string& name);
AOTIRT_API bool dtype_is_floating(DType dtype);
AOTIRT_API bool dtype_is_complex(DType dtype);

enum class DeviceType : int8_t {
  kCpu = 0,
  kCuda = 1,
  kMps = 13,
};

AOTIRT_API const char* device_type_name(DeviceType type);  // "cpu", "cuda", "mps"

struct AOTIRT_API DeviceId {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  bool operator==(const DeviceId& o) const { return type == o.type && index == o.index; }
  bool operator!=(const DeviceId& o) const { return !(*this == o); }
  bool is_cpu() const { return type == DeviceType::kCpu; }
  // "cpu", "cuda:0", "mps:0".
  std::string to_string() const;
  // Accepts "cpu", "cuda", "cuda:N", "mps", "mps:N".
  static Result<DeviceId> parse(const std::string& text);
};

}  // namespace aotirt
