// aten::convolution's argument rules, for every backend: the handles, the
// stride/padding/dilation lists as the shims receive them (one value for
// every spatial dim, or one per dim), the channel and group checks, and the
// output's shape by torch's formula. The dtypes a backend supports, its
// devices and the output's layout are the backend's.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

struct ConvArgs {
  const TensorImpl* input = nullptr;
  const TensorImpl* weight = nullptr;
  const TensorImpl* bias = nullptr;  // null when absent
  int64_t spatial = 0;               // 1, 2 or 3
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  int64_t batch = 0, in_channels = 0, out_channels = 0;
  DimVector out_sizes;  // [N, C_out, spatial...]
};

// Reads and checks aoti_torch_*_convolution's arguments. INVALID_ARGUMENT,
// naming the argument, for anything torch would refuse.
Result<ConvArgs> conv_args(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                           const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len,
                           const int64_t* dilation, int64_t dilation_len, bool transposed,
                           const int64_t* output_padding, int64_t output_padding_len, int64_t groups);

// One list argument for |spatial| dims: one value for every dim, or one per
// dim. An empty list gives |fallback| for every dim, when |fallback| is not
// negative (a required list, like stride, passes -1). A null pointer with a
// non-zero length is refused.
Result<DimVector> conv_list(const int64_t* values, int64_t len, int64_t spatial, const char* name,
                            int64_t fallback);

}  // namespace ops
}  // namespace aotirt
