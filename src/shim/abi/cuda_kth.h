// Declarations of the CUDA order statistics of c_shim_cuda.h: kthvalue and
// mode along a dimension, median and nanmedian of every element. Defined
// only in CUDA builds (src/backends/cuda/ops/sort/cuda_kth.cpp).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim,
    int32_t keepdim, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_median(AtenTensorHandle self, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_nanmedian(AtenTensorHandle self,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
