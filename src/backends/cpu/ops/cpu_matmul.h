// The CPU products' one routine, for ops built on a product (the fused
// decode-step ops): out = beta * self + alpha * (a @ b) over [B, M, K] x
// [B, K, N] -> [B, M, N] views, |self| (or null) broadcast to out, on the
// few-row kernels, oneDNN or OpenBLAS as mm and addmm choose.
#pragma once

#include "aotirt/status.h"
#include "core/tensor.h"

namespace aotirt {
namespace cpu_ops {

// Shapes and dtypes must be checked already; host memory.
Status cpu_matmul_into(const TensorImpl& out, const TensorImpl* self, const TensorImpl& a, const TensorImpl& b,
                       double beta, double alpha);

}  // namespace cpu_ops
}  // namespace aotirt
