// Declarations of the CUDA tensor-structure shims of c_shim_cuda.h: views,
// reshape, cat, pad, resize and the zero tensor. Defined only in CUDA builds
// (src/backends/cuda/ops/tensor); their rules are the op layer's
// (src/ops/tensor_args), shared with the CPU.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_permute(AtenTensorHandle self, const int64_t* dims, int64_t dims_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_reshape(AtenTensorHandle self, const int64_t* shape, int64_t shape_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start, int64_t* end, int64_t step, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_squeeze_dim(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode, double* value, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_resize_(AtenTensorHandle self, const int64_t* size, int64_t size_len_, int32_t* memory_format) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template, int32_t* memory_format) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__efficientzerotensor(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
