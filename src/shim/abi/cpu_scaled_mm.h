// Declarations of the float8 scaled matrix products: the CPU's _scaled_mm
// and _scaled_mm.out (c_shim_cpu.h) and the device-generic _scaled_mm and
// _scaled_mm_v2 entry points of c/shim_deprecated.h, which forward to the
// tensor's device.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias, AtenTensorHandle* scale_result,
    int32_t* out_dtype, int32_t use_fast_accum, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias,
    AtenTensorHandle* scale_result, int32_t* out_dtype, int32_t use_fast_accum) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle bias, int32_t* out_dtype, AtenTensorHandle scale_a, AtenTensorHandle scale_b,
    AtenTensorHandle scale_result, int8_t use_fast_accum, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__scaled_mm_v2(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle bias, AtenTensorHandle scale_result,
    int32_t* out_dtype, int8_t use_fast_accum, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
