#include "ops/conv_args.h"

#include "base/status.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {

Result<DimVector> conv_list(const int64_t* values, int64_t len, int64_t spatial, const char* name,
                            int64_t fallback) {
  DimVector out;
  out.resize(spatial);
  if (len == 0 && fallback >= 0) {
    for (int64_t i = 0; i < spatial; ++i) out[i] = fallback;
    return out;
  }
  AOTIRT_ENSURE(len == 1 || len == spatial, kInvalidArgument,
                "'{}' has {} values, expected 1 or {} for a {}-d convolution", name, len, spatial, spatial);
  AOTIRT_ENSURE(values != nullptr, kInvalidArgument, "'{}' is a null pointer", name);
  for (int64_t i = 0; i < spatial; ++i) out[i] = values[len == 1 ? 0 : i];
  return out;
}

Result<ConvArgs> conv_args(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                           const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len,
                           const int64_t* dilation, int64_t dilation_len, bool transposed,
                           const int64_t* output_padding, int64_t output_padding_len, int64_t groups) {
  ConvArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.input, require_tensor(input, "input"));
  AOTIRT_ASSIGN_OR_RETURN(a.weight, require_tensor(weight, "weight"));
  a.bias = optional_tensor(bias);
  const TensorImpl& in = *a.input;
  const TensorImpl& w = *a.weight;
  AOTIRT_ENSURE(in.dim() >= 3 && in.dim() <= 5, kInvalidArgument,
                "'input' must be 3-D, 4-D or 5-D (batched 1-d, 2-d or 3-d), got shape {}", shape_str(in));
  AOTIRT_ENSURE(w.dim() == in.dim(), kInvalidArgument, "'weight' {} must have as many dims as 'input' {}",
                shape_str(w), shape_str(in));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(in, "input", w, "weight"));
  AOTIRT_ENSURE(groups > 0, kInvalidArgument, "groups must be positive, got {}", groups);
  a.transposed = transposed;
  a.groups = groups;
  a.spatial = in.dim() - 2;
  const int64_t spatial = a.spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.stride, conv_list(stride, stride_len, spatial, "stride", -1));
  AOTIRT_ASSIGN_OR_RETURN(a.padding, conv_list(padding, padding_len, spatial, "padding", 0));
  AOTIRT_ASSIGN_OR_RETURN(a.dilation, conv_list(dilation, dilation_len, spatial, "dilation", 1));
  AOTIRT_ASSIGN_OR_RETURN(a.output_padding,
                          conv_list(output_padding, transposed ? output_padding_len : 0, spatial,
                                    "output_padding", 0));
  for (int64_t i = 0; i < spatial; ++i) {
    AOTIRT_ENSURE(a.stride[i] > 0, kInvalidArgument, "stride must be positive, got {}", a.stride[i]);
    AOTIRT_ENSURE(a.dilation[i] > 0, kInvalidArgument, "dilation must be positive, got {}", a.dilation[i]);
    AOTIRT_ENSURE(a.padding[i] >= 0, kInvalidArgument, "padding must be non-negative, got {}", a.padding[i]);
    AOTIRT_ENSURE(a.output_padding[i] >= 0, kInvalidArgument, "output_padding must be non-negative, got {}",
                  a.output_padding[i]);
    if (transposed)
      AOTIRT_ENSURE(a.output_padding[i] < a.stride[i] || a.output_padding[i] < a.dilation[i], kInvalidArgument,
                    "output_padding {} must be smaller than either stride {} or dilation {}", a.output_padding[i],
                    a.stride[i], a.dilation[i]);
  }

  a.batch = in.sizes()[0];
  a.in_channels = in.sizes()[1];
  if (!transposed) {
    AOTIRT_ENSURE(w.sizes()[0] % groups == 0, kInvalidArgument,
                  "'weight' {}: {} output channels are not divisible by groups={}", shape_str(w), w.sizes()[0],
                  groups);
    AOTIRT_ENSURE(a.in_channels == w.sizes()[1] * groups, kInvalidArgument,
                  "'input' {} has {} channels but 'weight' {} with groups={} expects {}", shape_str(in),
                  a.in_channels, shape_str(w), groups, w.sizes()[1] * groups);
    a.out_channels = w.sizes()[0];
  } else {
    AOTIRT_ENSURE(a.in_channels == w.sizes()[0], kInvalidArgument,
                  "'input' {} has {} channels but transposed 'weight' {} expects {}", shape_str(in), a.in_channels,
                  shape_str(w), w.sizes()[0]);
    AOTIRT_ENSURE(a.in_channels % groups == 0, kInvalidArgument,
                  "'input' {}: {} channels are not divisible by groups={}", shape_str(in), a.in_channels, groups);
    a.out_channels = w.sizes()[1] * groups;
  }

  a.out_sizes.resize(in.dim());
  a.out_sizes[0] = a.batch;
  a.out_sizes[1] = a.out_channels;
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t size = in.sizes()[2 + i], kernel = w.sizes()[2 + i];
    const int64_t span = a.dilation[i] * (kernel - 1) + 1;
    int64_t out = 0;
    if (!transposed) {
      AOTIRT_ENSURE(size + 2 * a.padding[i] >= span, kInvalidArgument,
                    "kernel {} (dilated to {}) is larger than the padded input {}; input {}, weight {}", kernel, span,
                    size + 2 * a.padding[i], shape_str(in), shape_str(w));
      out = (size + 2 * a.padding[i] - span) / a.stride[i] + 1;
    } else {
      out = (size - 1) * a.stride[i] - 2 * a.padding[i] + span + a.output_padding[i];
      // Zero is allowed (an empty result), as in PyTorch.
      AOTIRT_ENSURE(out >= 0, kInvalidArgument,
                    "transposed convolution output size {} is negative; input {}, weight {}", out, shape_str(in),
                    shape_str(w));
    }
    a.out_sizes[2 + i] = out;
  }

  if (a.bias) {
    const TensorImpl& b = *a.bias;
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(in, "input", b, "bias"));
    AOTIRT_ENSURE(b.dim() == 1 && b.sizes()[0] == a.out_channels, kInvalidArgument,
                  "'bias' has shape {}, expected [{}]", shape_str(b), a.out_channels);
  }
  return a;
}

}  // namespace ops
}  // namespace aotirt
