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

// _scaled_grouped_mm (torch's CUDA op, sm_90 and sm_100): float8_e4m3fn
// self and mat2, each 2-D or 3-D, self row-major and mat2 column-major in
// their last two dims (16-byte aligned, leading strides multiples of 16
// bytes), K and N multiples of 16, row-wise float32 scales and a bfloat16
// output. The layouts, with G groups:
//  - k2d3d: self [total_M, K], mat2 [G, K, N], offs [G] ends rows of self:
//    out [total_M, N], group g's rows are self's rows of that range;
//    scale_a [total_M], scale_b [G, N];
//  - k3d2d: self [G, M, K], mat2 [K, total_N], offs [G] ends columns of
//    mat2: out [M, total_N]; scale_a [G, M], scale_b [total_N];
//  - k2d2d: self [M, total_K], mat2 [total_K, N], offs [G] ends the shared
//    K: out [G, M, N]; scale_a [G * M], scale_b [G * N];
//  - k3d3d: self [G, M, K], mat2 [G, K, N], no offs: out [G, M, N];
//    scale_a [G, M], scale_b [G, N].
// offs (int32) holds each group's end; a group starts where the previous
// one ends (group 0 at 0). Its values live on the device, so the backend
// reads and checks them.
enum class GroupedMmKind { k2d3d, k3d2d, k2d2d, k3d3d };

struct ScaledGroupedMmArgs {
  const TensorImpl* self = nullptr;
  const TensorImpl* mat2 = nullptr;
  const TensorImpl* scale_a = nullptr;
  const TensorImpl* scale_b = nullptr;
  const TensorImpl* offs = nullptr;  // null for k3d3d
  GroupedMmKind kind = GroupedMmKind::k3d3d;
  int64_t groups = 0;
  // How far offs may reach: total_M, total_N or total_K (0 for k3d3d).
  int64_t offs_limit = 0;
  DType out_dtype = DType::kBFloat16;
  DimVector out_sizes, out_strides;  // torch's: last dim padded to 16 bytes
};

// INVALID_ARGUMENT where torch's op raises, with its reasons; bias and
// scale_result, which torch's op refuses as not supported yet, are
// UNIMPLEMENTED.
Result<ScaledGroupedMmArgs> scaled_grouped_mm_args(AtenTensorHandle self, AtenTensorHandle mat2,
                                                   AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                                   AtenTensorHandle* offs, AtenTensorHandle* bias,
                                                   AtenTensorHandle* scale_result, const int32_t* out_dtype);

}  // namespace ops
}  // namespace aotirt
