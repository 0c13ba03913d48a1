// Declarations of the CPU linear-algebra fallback ops (c_shim_cpu.h and, for
// the int4 weight-only GEMM, c/shim_cpu.h): the BLAS-backed products and
// distances, the weight-only quantized GEMMs and the LAPACK-backed solves and
// factorizations. Signatures match torch 2.11's exactly.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addmv(AtenTensorHandle self, AtenTensorHandle mat,
    AtenTensorHandle vec, double beta, double alpha, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addbmm(AtenTensorHandle self, AtenTensorHandle batch1,
    AtenTensorHandle batch2, double beta, double alpha, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1,
    AtenTensorHandle mat2, double beta, double alpha, int32_t use_gelu, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
    int64_t* compute_mode, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2,
    AtenTensorHandle i3, const int64_t* expand1, int64_t expand1_len_, const int64_t* expand2, int64_t expand2_len_,
    const int64_t* expand3, int64_t expand3_len_, const int64_t* sumdim, int64_t sumdim_len_, int64_t unroll_dim,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__int_mm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fused_rms_norm(AtenTensorHandle input,
    const int64_t* normalized_shape, int64_t normalized_shape_len_, AtenTensorHandle* weight, double* eps,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
    AtenTensorHandle scales, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X,
    AtenTensorHandle w, AtenTensorHandle qGroupSize, AtenTensorHandle qScaleAndZeros,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__dyn_quant_pack_4bit_weight(AtenTensorHandle weights,
    AtenTensorHandle scales_zeros, AtenTensorHandle* bias, int64_t block_size, int64_t in_features,
    int64_t out_features, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__dyn_quant_matmul_4bit(AtenTensorHandle inp,
    AtenTensorHandle packed_weights, int64_t block_size, int64_t in_features, int64_t out_features,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2,
    int32_t upper, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cholesky_inverse(AtenTensorHandle self, int32_t upper,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_triangular_solve(AtenTensorHandle self, AtenTensorHandle A,
    int32_t upper, int32_t transpose, int32_t unitriangular, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_geqrf(AtenTensorHandle self, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_ormqr(AtenTensorHandle self, AtenTensorHandle input2,
    AtenTensorHandle input3, int32_t left, int32_t transpose, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_lu_unpack(AtenTensorHandle LU_data, AtenTensorHandle LU_pivots,
    int32_t unpack_data, int32_t unpack_pivots, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2) AOTIRT_NOEXCEPT;

}  // extern "C"
