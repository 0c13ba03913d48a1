// Declarations of the CUDA scans (cumsum, cumprod, logcumsumexp, cummax,
// cummin), sort and topk shims of c_shim_cuda.h. Defined only in CUDA builds
// (src/backends/cuda/ops/scan, ops/sort).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_logcumsumexp(AtenTensorHandle self, int64_t dim,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_sort(AtenTensorHandle self, int64_t dim, int32_t descending,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim,
    int32_t descending, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
    int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

}  // extern "C"
