#include "ops/sort_args.h"

#include "base/status.h"
#include "ops/layout.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

bool sortable(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return true;
    default: return false;
  }
}

Status common(AtenTensorHandle self, int64_t dim, SortArgs* a) {
  AOTIRT_ASSIGN_OR_RETURN(a->self, require_tensor(self, "self"));
  const TensorImpl& t = *a->self;
  const int64_t extent = t.dim() == 0 ? 1 : t.dim();
  AOTIRT_ENSURE(dim >= -extent && dim < extent, kInvalidArgument,
                "dim {} is out of range for a tensor of shape {} (expected in [{}, {}])", dim, shape_str(t), -extent,
                extent - 1);
  a->dim = dim < 0 ? dim + extent : dim;
  AOTIRT_ENSURE(sortable(t.dtype()), kUnimplemented, "'self' has dtype {}, which aotirt does not sort",
                dtype_name(t.dtype()));
  return Status();
}

}  // namespace

Result<SortArgs> sort_args(AtenTensorHandle self, int64_t dim, bool descending) {
  SortArgs a;
  AOTIRT_RETURN_IF_ERROR(common(self, dim, &a));
  a.descending = descending;
  a.k = a.self->dim() == 0 ? 1 : a.self->sizes()[a.dim];
  a.out_sizes = a.self->sizes();
  a.out_strides = empty_like_strides(*a.self);
  return a;
}

Result<SortArgs> topk_args(AtenTensorHandle self, int64_t k, int64_t dim, bool largest) {
  SortArgs a;
  AOTIRT_RETURN_IF_ERROR(common(self, dim, &a));
  const int64_t n = a.self->dim() == 0 ? 1 : a.self->sizes()[a.dim];
  AOTIRT_ENSURE(k >= 0 && k <= n, kInvalidArgument, "k {} is out of range for dimension {} of size {}", k, a.dim, n);
  // A 0-d input gives a 0-d output, which holds its one element whatever k
  // (0 or 1) is, as in torch.
  a.k = a.self->dim() == 0 ? 1 : k;
  a.descending = largest;
  a.out_sizes = a.self->sizes();
  if (a.self->dim() > 0) a.out_sizes[a.dim] = k;
  a.out_strides = contiguous_strides(a.out_sizes);
  return a;
}

}  // namespace ops
}  // namespace aotirt
