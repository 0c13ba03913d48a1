// Declarations of the CUDA normalization shims of c_shim_cuda.h
// (_fused_rms_norm). Defined only in CUDA builds (src/backends/cuda/ops/norm).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__fused_rms_norm(AtenTensorHandle input,
    const int64_t* normalized_shape, int64_t normalized_shape_len_, AtenTensorHandle* weight, double* eps,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

}  // extern "C"
