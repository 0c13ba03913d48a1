// The device-neutral rules of _scaled_mm, the float8 matrix product with
// per-tensor scales, as torch's CPU op states them: self [M, K] and mat2
// [K, N] of float8_e4m3fn or float8_e5m2 (any strides), scale_a and
// scale_b one-element float32 tensors, an optional bias of N elements, and
// an output of out_dtype (self's dtype when absent) with contiguous strides.
// scale_result is accepted and not applied, as torch's CPU op does.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

struct ScaledMmArgs {
  const TensorImpl* self = nullptr;
  const TensorImpl* mat2 = nullptr;
  const TensorImpl* scale_a = nullptr;
  const TensorImpl* scale_b = nullptr;
  const TensorImpl* bias = nullptr;  // null when absent
  int64_t m = 0, k = 0, n = 0;
  DType out_dtype = DType::kFloat32;
  bool rowwise = false;  // scale_a [m, 1] and scale_b [1, n] (allow_rowwise only)
};

// |allow_rowwise| also takes torch's CUDA row-wise scales, scale_a [M, 1]
// and scale_b [1, N] (float32), for a bfloat16 output.
Result<ScaledMmArgs> scaled_mm_args(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                    AtenTensorHandle scale_b, AtenTensorHandle* bias, const int32_t* out_dtype,
                                    bool allow_rowwise = false);

// What torch's CUDA op (cuBLASLt's float8 GEMM) requires on top: K and N
// multiples of 16, self row-major and mat2 column-major, not both
// float8_e5m2, and a bfloat16 output for row-wise scales.
Status check_scaled_mm_cuda(const ScaledMmArgs& a);

}  // namespace ops
}  // namespace aotirt
