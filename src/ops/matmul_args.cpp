#include "ops/matmul_args.h"

#include "base/status.h"
#include "core/host_copy.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {

Result<MatmulArgs> matmul_args(MatmulKind kind, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                               AtenTensorHandle mat2, double beta, double alpha) {
  MatmulArgs m;
  m.batched = kind == MatmulKind::kBmm || kind == MatmulKind::kBaddbmm;
  const bool has_self = kind == MatmulKind::kAddmm || kind == MatmulKind::kBaddbmm;
  m.a_name = has_self ? (m.batched ? "batch1" : "mat1") : "self";
  m.b_name = has_self ? (m.batched ? "batch2" : "mat2") : "mat2";
  AOTIRT_ASSIGN_OR_RETURN(m.out, require_tensor(out, "out"));
  AOTIRT_ASSIGN_OR_RETURN(m.a, require_tensor(has_self ? mat1 : self, m.a_name));
  AOTIRT_ASSIGN_OR_RETURN(m.b, require_tensor(mat2, m.b_name));
  if (has_self) {
    AOTIRT_ASSIGN_OR_RETURN(m.self, require_tensor(self, "self"));
    m.alpha = alpha;
    m.beta = beta;
  }
  const TensorImpl &a = *m.a, &b = *m.b, &o = *m.out;
  const int64_t rank = m.batched ? 3 : 2;
  AOTIRT_RETURN_IF_ERROR(check_dim(a, rank, m.a_name));
  AOTIRT_RETURN_IF_ERROR(check_dim(b, rank, m.b_name));
  AOTIRT_RETURN_IF_ERROR(check_dim(o, rank, "out"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(a, m.a_name, b, m.b_name));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(o, "out", a, m.a_name));
  const int64_t r = rank - 2;
  if (m.batched)
    AOTIRT_ENSURE(a.sizes()[0] == b.sizes()[0], kInvalidArgument, "batch sizes differ: '{}' is {} and '{}' is {}",
                  m.a_name, shape_str(a), m.b_name, shape_str(b));
  AOTIRT_ENSURE(a.sizes()[r + 1] == b.sizes()[r], kInvalidArgument,
                "'{}' {} and '{}' {} cannot be multiplied ({} != {})", m.a_name, shape_str(a), m.b_name,
                shape_str(b), a.sizes()[r + 1], b.sizes()[r]);
  m.batch = m.batched ? a.sizes()[0] : 1;
  m.m = a.sizes()[r];
  m.k = a.sizes()[r + 1];
  m.n = b.sizes()[r + 1];
  const DimVector expected = m.batched ? DimVector{m.batch, m.m, m.n} : DimVector{m.m, m.n};
  AOTIRT_ENSURE(o.sizes() == expected, kInvalidArgument, "'out' has shape {}, expected {}", shape_str(o),
                dims_to_string(expected.data(), expected.size()));
  if (m.self) {
    const TensorImpl& s = *m.self;
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(s, "self", o, "out"));
    AOTIRT_ENSURE(s.dim() <= o.dim() && broadcast_strides(s.sizes(), s.strides(), o.sizes()).ok(), kInvalidArgument,
                  "'self' {} does not broadcast to {}", shape_str(s), shape_str(o));
  }
  return m;
}

}  // namespace ops
}  // namespace aotirt
