// Argument rules of aotirt's fused decode-step ops (python/aotirt/_fused.py:
// the custom ops export_llm(fuse_decode=True) puts into a decode package,
// called as aoti_torch_<device>_aotirt_* shims): a product of few rows with
// the small steps around it. Shapes and dtypes here; devices and the
// arithmetic are each backend's.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "ops/linalg_args.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

enum class FusedPrologue {
  kNone,     // the product reads x as it is
  kRmsNorm,  // rms_norm(x) * norm_weight, rounded as transformers' RMS norm
};

// out[..., n] = [residual +] linear(prologue(x), weight[n, k] [, bias]);
// with |silu_mul|, out[..., n / 2] = silu(gate) * up instead, gate and up
// the two halves of the product's rows, each rounded as transformers'
// MLP rounds.
struct FusedLinearArgs {
  FusedPrologue prologue = FusedPrologue::kNone;
  bool silu_mul = false;
  const TensorImpl* x = nullptr;            // [..., k]
  const TensorImpl* norm_weight = nullptr;  // [k], kRmsNorm
  double eps = 0.0;
  const TensorImpl* weight = nullptr;    // [n, k]
  const TensorImpl* bias = nullptr;      // [n] or null
  const TensorImpl* residual = nullptr;  // out's shape, or null
  int64_t rows = 0, k = 0, n = 0;        // rows: x's elements over its last dimension
  DimVector out_sizes;
};

Result<FusedLinearArgs> rms_norm_linear_args(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                             AtenTensorHandle weight, AtenTensorHandle* bias);
Result<FusedLinearArgs> linear_add_args(AtenTensorHandle x, AtenTensorHandle weight, AtenTensorHandle residual);
Result<FusedLinearArgs> rms_norm_linear_silu_mul_args(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                                      AtenTensorHandle weight);

// aotirt_int4pack_mm_silu_mul(x, qdata, group_size, scale_and_zero):
// silu(gate) * up, gate and up the two halves of the N columns of the
// device's int4 weight-only product (_weight_int4pack_mm_cpu_tensor's
// packing and rules on the CPU, _weight_int4pack_mm's on CUDA), each
// rounded as those ops and transformers' MLP round. x [M, K] -> [M, N / 2]
// (the packings' N is even). Errors name the fused op, then the product's
// rule.
Result<WeightOnlyArgs> int4pack_mm_silu_mul_args(AtenTensorHandle x, AtenTensorHandle qdata, int64_t group,
                                                 AtenTensorHandle scale_and_zero, bool cuda);

}  // namespace ops
}  // namespace aotirt
