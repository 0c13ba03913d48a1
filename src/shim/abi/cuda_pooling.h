// Declarations of the CUDA pooling shims of torch 2.11's c_shim_cuda.h:
// avg_pool2d/3d, _adaptive_avg_pool2d/3d, adaptive_max_pool2d/3d,
// max_pool2d/3d_with_indices, max_unpool2d/3d and fractional_max_pool2d/3d.
// Defined only in CUDA builds (src/backends/cuda/ops/pooling).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
    int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad, int64_t* divisor_override,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
    int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad, int64_t* divisor_override,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__adaptive_avg_pool2d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__adaptive_avg_pool3d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_adaptive_max_pool2d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_adaptive_max_pool3d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_max_pool2d_with_indices(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t ceil_mode,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_max_pool3d_with_indices(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t ceil_mode,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices,
    const int64_t* output_size, int64_t output_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_fractional_max_pool2d(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size, int64_t output_size_len_,
    AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_fractional_max_pool3d(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size, int64_t output_size_len_,
    AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

}  // extern "C"
