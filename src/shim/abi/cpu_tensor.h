// Declarations of the tensor-structure fallback ops: CPU views, cat, pad,
// resize_/set_, zero and window factories (c_shim_cpu.h), and the
// device-generic ones that work on any tensor's device (c_shim_aten.h and
// the deprecated generic shims of shim_deprecated.h). Signatures follow
// torch 2.11's headers exactly; tests/shim/abi_match_test checks them.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

// ---- CPU views and structure (c_shim_cpu.h) ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_permute(AtenTensorHandle self, const int64_t* dims,
    int64_t dims_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_reshape(AtenTensorHandle self, const int64_t* shape,
    int64_t shape_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_narrow(AtenTensorHandle self, int64_t dim, int64_t start,
    int64_t length, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start,
    int64_t* end, int64_t step, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_squeeze_dim(AtenTensorHandle self, int64_t dim,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_,
    int64_t dim, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_,
    const char* mode, double* value, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_resize_(AtenTensorHandle self, const int64_t* size,
    int64_t size_len_, int32_t* memory_format) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template,
    int32_t* memory_format) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_set__source_Tensor(AtenTensorHandle self,
    AtenTensorHandle source) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__efficientzerotensor(const int64_t* size, int64_t size_len_,
    int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_hann_window(int64_t window_length, int32_t* dtype, int32_t* layout,
    int32_t* device, int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

// ---- device-generic (c_shim_aten.h) ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim, int64_t start,
    int64_t length, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_,
    const char* mode, double* value, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self, const int64_t* size,
    int64_t size_len_, int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
    int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self, const int64_t* size,
    int64_t size_len_, int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
    int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_, double fill_value,
    int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

// ---- device-generic, deprecated (shim_deprecated.h) ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_view_as_real(AtenTensorHandle self,
    AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_view_dtype(AtenTensorHandle self, int32_t dtype,
    AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_mm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat1, AtenTensorHandle mat2, float beta, float alpha) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_convolution(AtenTensorHandle input, AtenTensorHandle weight,
    AtenTensorHandle bias, const int64_t* stride_ptr, int64_t stride_size, const int64_t* padding_ptr,
    int64_t padding_size, const int64_t* dilation_ptr, int64_t dilation_size, int transposed,
    const int64_t* output_padding_ptr, int64_t output_padding_size, int64_t groups,
    AtenTensorHandle* ret) AOTIRT_NOEXCEPT;

}  // extern "C"
