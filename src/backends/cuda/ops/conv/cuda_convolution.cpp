// aoti_torch_cuda_convolution: the argument rules (ops/conv_args.h), the
// output's layout, and the choice of implementation (cuda_conv_impl.h):
// float32 patch embeddings as a GEMM on aotirt's kernels, float32
// channels-last 2-d convolutions on aotirt's TF32 or 3xTF32 kernels, and
// everything else -- 1-d (as 2-d with a unit height), 2-d and 3-d, grouped,
// strided, padded, dilated and transposed -- on cuDNN.
//
// The output is laid out as PyTorch's CUDA convolution lays it out, because
// the generated code assumes those strides: channels-last when the input or
// the weight is channels-last (2-d and 3-d, not float64), contiguous
// otherwise.
#include <memory>

#include "backends/cuda/ops/conv/cuda_conv_impl.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "device/device.h"
#include "ops/conv_args.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {



// A dense copy of |t| in the given memory format, or |t| itself if it is one.
Result<TensorImpl> conv_dense_as(const TensorImpl& t, bool channels_last, int device) {
  DimVector want = channels_last ? ops::channels_last_strides(t.sizes()) : contiguous_strides(t.sizes());
  bool same = true;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] != 1 && t.strides()[d] != want[d]) same = false;
  if (same) {
    // Size-1 dims may carry any stride; give cuDNN the canonical ones.
    return TensorImpl(t.storage(), t.dtype(), t.sizes(), want, t.storage_offset());
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(t.sizes(), want, t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(copy_tensor(out, t, false));
  return out;
}

namespace {

Status check_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat64:
      return Status();
    default:
      return AOTIRT_STATUS(kUnimplemented,
                           "convolution on CUDA supports float32, float16, bfloat16 and float64, not {}",
                           dtype_name(dtype));
  }
}

Status run_convolution(AtenTensorHandle input_h, AtenTensorHandle weight_h, AtenTensorHandle* bias_h,
                       const int64_t* stride_p, int64_t stride_len, const int64_t* padding_p, int64_t padding_len,
                       const int64_t* dilation_p, int64_t dilation_len, bool transposed,
                       const int64_t* output_padding_p, int64_t output_padding_len, int64_t groups,
                       AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(ops::ConvArgs args,
                          ops::conv_args(input_h, weight_h, bias_h, stride_p, stride_len, padding_p, padding_len,
                                         dilation_p, dilation_len, transposed, output_padding_p, output_padding_len,
                                         groups));
  const TensorImpl* input = args.input;
  const TensorImpl* weight = args.weight;
  const TensorImpl* bias = args.bias;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*input, "input"));
  const int device = scope->device();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*weight, "weight"));
  if (bias) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*bias, "bias"));
  AOTIRT_RETURN_IF_ERROR(check_dtype(input->dtype()));
  const int64_t nd = input->dim();
  const DimVector& stride = args.stride;
  const DimVector& padding = args.padding;
  const DimVector& dilation = args.dilation;
  const DimVector& out_sizes = args.out_sizes;

  // PyTorch's layout choice for cuDNN convolutions.
  const bool channels_last = nd >= 4 && input->dtype() != DType::kFloat64 &&
                             (ops::is_channels_last(input->sizes(), input->strides()) ||
                              ops::is_channels_last(weight->sizes(), weight->strides()));
  DimVector out_strides = channels_last ? ops::channels_last_strides(out_sizes) : contiguous_strides(out_sizes);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(out_sizes, out_strides, input->dtype(), device));
  if (out.numel() == 0) {
    *ret0 = new_handle(std::move(out));
    return Status();
  }
  bool bias_done = false;
  if (input->numel() == 0 || weight->numel() == 0) {
    AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(out.device()));
    AOTIRT_RETURN_IF_ERROR(dev->zero(out));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(bool done, patch_convolution(*scope, *input, *weight, stride, padding, dilation, groups,
                                                         transposed, channels_last, out));
    if (!done) {
      AOTIRT_ASSIGN_OR_RETURN(done, own_convolution(*scope, *input, *weight, bias, stride, padding, dilation, groups,
                                                    transposed, channels_last, out, &bias_done));
    }
    if (!done)
      AOTIRT_RETURN_IF_ERROR(cudnn_convolution(*scope, *input, *weight, stride, padding, dilation, groups,
                                               transposed, channels_last, out));
  }

  if (bias && !bias_done) {
    // The bias may be strided; the kernel wants it dense.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl b, conv_dense_as(*bias, false, device));
    int64_t inner = 1;
    for (int64_t d = 2; d < nd; ++d) inner *= out_sizes[d];
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_add_channel_bias(out.data_ptr(), b.data_ptr(),
                                                             static_cast<int>(out.dtype()), args.batch,
                                                             args.out_channels, inner, channels_last,
                                                             scope->stream()));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace

}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_convolution(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                                           const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                           int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
                                           int32_t transposed, const int64_t* output_padding,
                                           int64_t output_padding_len_, int64_t groups,
                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return run_convolution(input, weight, bias, stride, stride_len_, padding, padding_len_, dilation, dilation_len_,
                           transposed != 0, output_padding, output_padding_len_, groups, ret0);
  });
}

}  // extern "C"
