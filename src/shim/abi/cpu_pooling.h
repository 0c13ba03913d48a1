// Declarations of the pooling and embedding_bag fallback ops aotirt provides
// (torch 2.11's c_shim_cpu.h, and the device-generic aoti_torch__embedding_bag
// of c/shim_deprecated.h). Parameter types and order are torch's exactly:
// tests/shim/abi_match_test.cpp compiles them against torch's headers.
#pragma once

#include "shim/shim_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
    int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad, int64_t* divisor_override,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
    int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad, int64_t* divisor_override,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t ceil_mode, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
    int32_t ceil_mode, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices,
    const int64_t* output_size, int64_t output_size_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices,
    const int64_t* output_size, int64_t output_size_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_fractional_max_pool2d(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size, int64_t output_size_len_,
    AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_fractional_max_pool3d(AtenTensorHandle self,
    const int64_t* kernel_size, int64_t kernel_size_len_, const int64_t* output_size, int64_t output_size_len_,
    AtenTensorHandle random_samples, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
    AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode, int32_t sparse,
    AtenTensorHandle* per_sample_weights, int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__embedding_bag_forward_only(AtenTensorHandle weight,
    AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode, int32_t sparse,
    AtenTensorHandle* per_sample_weights, int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;
// Device-generic (c/shim_deprecated.h): per_sample_weights is a nullable
// handle, and mode and padding_idx are int32.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
    AtenTensorHandle offsets, int32_t scale_grad_by_freq, int32_t mode, int32_t sparse,
    AtenTensorHandle per_sample_weights, int32_t include_last_offset, int32_t padding_idx, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;

#ifdef __cplusplus
}  // extern "C"
#endif
