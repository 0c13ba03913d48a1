// dtype, device, layout and memory-format constants. They equal c10's numbers.
#include "core/dtype.h"
#include "shim/shim_abi.h"

using aotirt::DType;

#define AOTIRT_CONSTANT(type, name, value) \
  type name(void) noexcept { return value; }

extern "C" {
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_cpu, 0)
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_cuda, 1)
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_xpu, 12)
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_mps, 13)
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_meta, 14)
AOTIRT_CONSTANT(int32_t, aoti_torch_device_type_privateuse1, 20)

AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_uint8, 0)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_int8, 1)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_int16, 2)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_int32, 3)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_int64, 4)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float16, 5)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float32, 6)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float64, 7)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_complex32, 8)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_complex64, 9)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_complex128, 10)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_bool, 11)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_bfloat16, 15)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float8_e5m2, 23)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float8_e4m3fn, 24)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float8_e5m2fnuz, 25)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_float8_e4m3fnuz, 26)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_uint16, 27)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_uint32, 28)
AOTIRT_CONSTANT(int32_t, aoti_torch_dtype_uint64, 29)

AOTIRT_CONSTANT(int32_t, aoti_torch_layout_strided, 0)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_sparse_coo, 1)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_sparse_csr, 2)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_sparse_csc, 4)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_sparse_bsr, 5)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_sparse_bsc, 6)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout__mkldnn, 3)
AOTIRT_CONSTANT(int32_t, aoti_torch_layout_jagged, 7)

AOTIRT_CONSTANT(int32_t, aoti_torch_memory_format_contiguous_format, 0)
AOTIRT_CONSTANT(int32_t, aoti_torch_memory_format_preserve_format, 1)
AOTIRT_CONSTANT(int32_t, aoti_torch_memory_format_channels_last, 2)
AOTIRT_CONSTANT(int32_t, aoti_torch_memory_format_channels_last_3d, 3)

// The stable-ABI version of the torch release whose headers this matches
// (2.11.0: major << 56 | minor << 48 | patch << 40).
AOTIRT_CONSTANT(uint64_t, aoti_torch_abi_version, (uint64_t{2} << 56) | (uint64_t{11} << 48))

size_t aoti_torch_dtype_element_size(int32_t dtype) noexcept {
  if (!aotirt::dtype_is_valid(dtype)) return 0;
  return aotirt::dtype_size(static_cast<DType>(dtype));
}
}
