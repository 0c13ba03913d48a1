// Declarations of the CUDA selection shims of c_shim_cuda.h: searchsorted
// (Tensor and Scalar), bucketize, histc, repeat_interleave and
// segment_reduce. Defined only in CUDA builds (src/backends/cuda/ops/selection).
// The device-generic aoti_torch_repeat_interleave_Tensor (cpu_selection.h)
// forwards to these for CUDA tensors.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_searchsorted_Tensor(AtenTensorHandle sorted_sequence,
    AtenTensorHandle self, int32_t out_int32, int32_t right, const char** side, AtenTensorHandle* sorter,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self,
    int32_t out_int32, int32_t right, const char** side, AtenTensorHandle* sorter,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries,
    int32_t out_int32, int32_t right, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_histc(AtenTensorHandle self, int64_t bins, double min, double max,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_repeat_interleave_Tensor(AtenTensorHandle repeats,
    int64_t* output_size, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_segment_reduce(AtenTensorHandle data, const char* reduce,
    AtenTensorHandle* lengths, AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis, int32_t unsafe,
    double* initial, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
