// The device-neutral rules of sort and topk, as torch's meta functions give
// them: the dimension wrapped (0-d tensors sort as one element), k checked
// against the dimension's size, and the output layouts (sort: the input's
// strides when it is non-overlapping and dense, else dense strides in its
// order; topk: contiguous, of the input's sizes with k at the dimension).
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

struct SortArgs {
  const TensorImpl* self = nullptr;
  int64_t dim = 0;  // wrapped; 0 for a 0-d input
  int64_t k = 0;    // topk's k; the dimension's size for sort
  bool descending = false;  // sort: descending; topk: largest
  DimVector out_sizes, out_strides;
};

// sort and sort.stable (|stable| is ignored: aotirt's sorts are stable).
Result<SortArgs> sort_args(AtenTensorHandle self, int64_t dim, bool descending);
// topk; |largest| picks the k largest.
Result<SortArgs> topk_args(AtenTensorHandle self, int64_t k, int64_t dim, bool largest);

}  // namespace ops
}  // namespace aotirt
