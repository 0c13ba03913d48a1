// Declarations of the CUDA indexing shims of c_shim_cuda.h: index.Tensor,
// index_put, index_reduce, the scatter out= variants, masked_scatter,
// masked_select, nonzero and nonzero_static. Defined only in CUDA builds
// (src/backends/cuda/ops/indexing). An optional-tensor list
// (const AtenTensorHandle**) holds one pointer per entry: null for "no
// index for this dim", else a pointer to the handle.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_index_Tensor(AtenTensorHandle self,
    const AtenTensorHandle** indices, int64_t indices_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_index_put(AtenTensorHandle self, const AtenTensorHandle** indices,
    int64_t indices_len_, AtenTensorHandle values, int32_t accumulate, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_index_reduce(AtenTensorHandle self, int64_t dim,
    AtenTensorHandle index, AtenTensorHandle source, const char* reduce, int32_t include_self,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self,
    int64_t dim, AtenTensorHandle index, AtenTensorHandle src) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self,
    int64_t dim, AtenTensorHandle index, double value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self,
    int64_t dim, AtenTensorHandle index, AtenTensorHandle src, const char* reduce,
    int32_t include_self) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask,
    AtenTensorHandle source, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_nonzero_static(AtenTensorHandle self, int64_t size,
    int64_t fill_value, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
