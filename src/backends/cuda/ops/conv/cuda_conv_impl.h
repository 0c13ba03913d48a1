// The implementations behind aoti_torch_cuda_convolution, as the dispatch
// (cuda_convolution.cpp) sees them. Each one either takes a problem and
// queues it on the scope's stream, or answers false with nothing queued, so
// the dispatch can try the next: patches as a GEMM (cuda_conv_patch.cpp),
// aotirt's TF32 kernels (cuda_conv_own.cpp), then cuDNN, which takes every
// problem the dispatch lets through (cuda_conv_cudnn.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "aotirt/status.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "core/tensor.h"

namespace aotirt {

// Plans kept per device and cache; the least recently used go first.
constexpr size_t kConvMaxPlans = 4096;

// A dense copy of |t| in the given memory format, or a view of |t| itself
// (with canonical strides on its size-1 dims) if it is one already.
Result<TensorImpl> conv_dense_as(const TensorImpl& t, bool channels_last, int device);

// A float32 patch embedding (stride equal to the kernel, no padding or
// dilation, one group, contiguous) as a copy and one GEMM.
Result<bool> patch_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                               const DimVector& stride, const DimVector& padding, const DimVector& dilation,
                               int64_t groups, bool transposed, bool channels_last, const TensorImpl& out);

// A float32 2-d channels-last convolution on aotirt's kernels; the bias, if
// any, in the kernel's epilogue (|bias_done|).
Result<bool> own_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                             const TensorImpl* bias, const DimVector& stride, const DimVector& padding,
                             const DimVector& dilation, int64_t groups, bool transposed, bool channels_last,
                             const TensorImpl& out, bool* bias_done);

// Any convolution of a supported dtype on cuDNN, without its bias.
Status cudnn_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                         DimVector stride, DimVector padding, DimVector dilation, int64_t groups, bool transposed,
                         bool channels_last, const TensorImpl& out);

}  // namespace aotirt
