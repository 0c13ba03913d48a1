// Declarations of the CPU indexing fallback ops (index.Tensor, index_put,
// index_reduce, the scatter out= variants, masked_scatter, masked_select,
// nonzero, nonzero_static) and the device-generic aoti_torch_nonzero. The
// signatures are torch's (generated/c_shim_cpu.h, c/shim_deprecated.h).
// An optional-tensor list (const AtenTensorHandle**) holds one pointer per
// entry: null for "no index for this dim", else a pointer to the handle.
#pragma once

#include "shim/shim_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                              int64_t indices_len_,
                                                              AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_put(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                           int64_t indices_len_, AtenTensorHandle values,
                                                           int32_t accumulate, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_index_reduce(AtenTensorHandle self, int64_t dim,
                                                              AtenTensorHandle index, AtenTensorHandle source,
                                                              const char* reduce, int32_t include_self,
                                                              AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                 int64_t dim, AtenTensorHandle index,
                                                                 AtenTensorHandle src) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                   int64_t dim, AtenTensorHandle index,
                                                                   double value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self,
                                                                        int64_t dim, AtenTensorHandle index,
                                                                        AtenTensorHandle src, const char* reduce,
                                                                        int32_t include_self) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask,
                                                                AtenTensorHandle source,
                                                                AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                                               AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size,
                                                                int64_t fill_value,
                                                                AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
// Device-generic (c/shim_deprecated.h): src/shim/common/shim_generic_ops.cpp
// forwards it to the tensor's device's own nonzero.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_nonzero(AtenTensorHandle self, AtenTensorHandle* out) AOTIRT_NOEXCEPT;

#ifdef __cplusplus
}  // extern "C"
#endif
