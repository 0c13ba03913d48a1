// The argument rules of aten's out= matrix products (mm, addmm, bmm,
// baddbmm), for every backend: the handles, ranks, one dtype, the inner and
// batch dims, out's shape, and that self broadcasts to out. The dtypes a
// backend supports and its devices are the backend's.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

enum class MatmulKind { kMm, kAddmm, kBmm, kBaddbmm };

// out = beta * self + alpha * (a @ b); [batch,] m x k @ k x n.
struct MatmulArgs {
  const TensorImpl* out = nullptr;
  const TensorImpl* self = nullptr;  // addmm and baddbmm only
  const TensorImpl* a = nullptr;
  const TensorImpl* b = nullptr;
  const char* a_name = "";
  const char* b_name = "";
  bool batched = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
};

// |self| is the bias of addmm and baddbmm, the first factor of mm and bmm
// (torch's argument names); |mat1| is ignored for those.
Result<MatmulArgs> matmul_args(MatmulKind kind, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                               AtenTensorHandle mat2, double beta, double alpha);

}  // namespace ops
}  // namespace aotirt
