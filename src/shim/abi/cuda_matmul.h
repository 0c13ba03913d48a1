// Declarations of the CUDA matmul extras of c_shim_cuda.h beyond mm, addmm,
// bmm and baddbmm: addmv, addbmm, _addmm_activation, mm.dtype_out, the
// distances, _trilinear, the integer and weight-only quantized GEMMs and
// the float8 _scaled_mm and _scaled_grouped_mm.
// Defined only in CUDA builds (src/backends/cuda/ops/matmul).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_addmv(AtenTensorHandle self, AtenTensorHandle mat,
    AtenTensorHandle vec, double beta, double alpha, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_addbmm(AtenTensorHandle self, AtenTensorHandle batch1,
    AtenTensorHandle batch2, double beta, double alpha, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, double beta, double alpha, int32_t use_gelu, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_mm_dtype_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, int32_t out_dtype) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
    int64_t* compute_mode, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__pdist_forward(AtenTensorHandle self, double p,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__trilinear(AtenTensorHandle i1, AtenTensorHandle i2,
    AtenTensorHandle i3, const int64_t* expand1, int64_t expand1_len_, const int64_t* expand2, int64_t expand2_len_,
    const int64_t* expand3, int64_t expand3_len_, const int64_t* sumdim, int64_t sumdim_len_, int64_t unroll_dim,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__int_mm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scales, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__weight_int4pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    int64_t qGroupSize, AtenTensorHandle qScaleAndZeros, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias, AtenTensorHandle* scale_result,
    int32_t* out_dtype, int32_t use_fast_accum, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2, AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias,
    AtenTensorHandle* scale_result, int32_t* out_dtype, int32_t use_fast_accum) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_grouped_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* offs, AtenTensorHandle* bias,
    AtenTensorHandle* scale_result, int32_t* out_dtype, int32_t use_fast_accum, AtenTensorHandle* ret0)
    AOTIRT_NOEXCEPT;

}  // extern "C"
