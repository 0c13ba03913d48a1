#include "ops/fused_args.h"

#include <cmath>

#include "aotirt/types.h"
#include "base/status.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

// x's dtype is the op's: every tensor has it, and it is a float type the
// decode packages use.
Status check_dtypes(const FusedLinearArgs& a) {
  const DType d = a.x->dtype();
  if (d != DType::kFloat32 && d != DType::kBFloat16 && d != DType::kFloat16)
    return AOTIRT_STATUS(kUnimplemented, "x has dtype {}; the fused ops take float32, bfloat16 or float16",
                         dtype_name(d));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.x, "x", *a.weight, "weight"));
  if (a.norm_weight) AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.x, "x", *a.norm_weight, "norm_weight"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.x, "x", *a.bias, "bias"));
  if (a.residual) AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.x, "x", *a.residual, "residual"));
  return Status();
}

// weight [n, k] against x's last dimension, and the output's sizes: x's,
// its last dimension n.
Status shape_product(FusedLinearArgs* a) {
  AOTIRT_ENSURE(a->x->dim() >= 1, kInvalidArgument, "x must have at least one dimension, got a scalar");
  AOTIRT_RETURN_IF_ERROR(check_dim(*a->weight, 2, "weight"));
  a->n = a->weight->sizes()[0];
  a->k = a->weight->sizes()[1];
  const int64_t last = a->x->sizes()[a->x->dim() - 1];
  AOTIRT_ENSURE(last == a->k, kInvalidArgument, "x {} has {} elements in its last dimension; weight {} needs {}",
                shape_str(*a->x), last, shape_str(*a->weight), a->k);
  a->rows = 1;
  a->out_sizes = a->x->sizes();
  for (int64_t i = 0; i + 1 < a->x->dim(); ++i) a->rows *= a->x->sizes()[i];
  a->out_sizes[a->x->dim() - 1] = a->n;
  return Status();
}

// x, the norm and the product's weight of an op with the norm prologue.
Status norm_product(FusedLinearArgs* a, AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                    AtenTensorHandle weight) {
  a->prologue = FusedPrologue::kRmsNorm;
  AOTIRT_ASSIGN_OR_RETURN(a->x, require_tensor(x, "x"));
  AOTIRT_ASSIGN_OR_RETURN(a->norm_weight, require_tensor(norm_weight, "norm_weight"));
  AOTIRT_ASSIGN_OR_RETURN(a->weight, require_tensor(weight, "weight"));
  a->eps = eps;
  AOTIRT_ENSURE(std::isfinite(eps) && eps >= 0.0, kInvalidArgument, "eps must be finite and not negative, got {}",
                eps);
  AOTIRT_RETURN_IF_ERROR(shape_product(a));
  AOTIRT_RETURN_IF_ERROR(check_dim(*a->norm_weight, 1, "norm_weight"));
  AOTIRT_ENSURE(a->norm_weight->sizes()[0] == a->k, kInvalidArgument, "norm_weight {} must have x's {} elements",
                shape_str(*a->norm_weight), a->k);
  return Status();
}

Status shape_residual(const FusedLinearArgs& a) {
  if (a.residual->sizes() == a.out_sizes) return Status();
  const TensorImpl want(StorageRef(), a.x->dtype(), a.out_sizes, a.out_sizes, 0);
  return AOTIRT_STATUS(kInvalidArgument, "residual {} must have the product's shape {}", shape_str(*a.residual),
                       shape_str(want));
}

}  // namespace

Result<FusedLinearArgs> rms_norm_linear_args(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                             AtenTensorHandle weight, AtenTensorHandle* bias) {
  FusedLinearArgs a;
  AOTIRT_RETURN_IF_ERROR(norm_product(&a, x, norm_weight, eps, weight));
  a.bias = optional_tensor(bias);
  if (a.bias) {
    AOTIRT_RETURN_IF_ERROR(check_dim(*a.bias, 1, "bias"));
    AOTIRT_ENSURE(a.bias->sizes()[0] == a.n, kInvalidArgument, "bias {} must have weight's {} rows",
                  shape_str(*a.bias), a.n);
  }
  AOTIRT_RETURN_IF_ERROR(check_dtypes(a));
  return a;
}

Result<FusedLinearArgs> linear_add_args(AtenTensorHandle x, AtenTensorHandle weight, AtenTensorHandle residual) {
  FusedLinearArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.x, require_tensor(x, "x"));
  AOTIRT_ASSIGN_OR_RETURN(a.weight, require_tensor(weight, "weight"));
  AOTIRT_ASSIGN_OR_RETURN(a.residual, require_tensor(residual, "residual"));
  AOTIRT_RETURN_IF_ERROR(shape_product(&a));
  AOTIRT_RETURN_IF_ERROR(shape_residual(a));
  AOTIRT_RETURN_IF_ERROR(check_dtypes(a));
  return a;
}

Result<FusedLinearArgs> rms_norm_linear_silu_mul_args(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                                      AtenTensorHandle weight) {
  FusedLinearArgs a;
  a.silu_mul = true;
  AOTIRT_RETURN_IF_ERROR(norm_product(&a, x, norm_weight, eps, weight));
  AOTIRT_ENSURE(a.n % 2 == 0, kInvalidArgument,
                "weight {} must have an even number of rows: the gate's, then as many of up's", shape_str(*a.weight));
  a.out_sizes[a.x->dim() - 1] = a.n / 2;
  AOTIRT_RETURN_IF_ERROR(check_dtypes(a));
  return a;
}

Result<WeightOnlyArgs> int4pack_mm_silu_mul_args(AtenTensorHandle x, AtenTensorHandle qdata, int64_t group,
                                                 AtenTensorHandle scale_and_zero, bool cuda) {
  Result<WeightOnlyArgs> r = [&]() -> Result<WeightOnlyArgs> {
    WeightOnlyArgs a;
    if (cuda) {
      AOTIRT_ASSIGN_OR_RETURN(a, weight_int4pack_mm_cuda_args(x, qdata, group, scale_and_zero));
    } else {
      AOTIRT_ASSIGN_OR_RETURN(a, weight_int4pack_mm_cpu_args(x, qdata, scale_and_zero));
      AOTIRT_RETURN_IF_ERROR(check_int4_group(a, group));
      a.group = group;
    }
    // Both packings hold whole blocks of 8 (CUDA) or 16 (CPU) rows, so N
    // is even and the halves are whole.
    return a;
  }();
  if (!r.ok()) return r.take_status().annotate("aotirt_int4pack_mm_silu_mul");
  return r;
}

}  // namespace ops
}  // namespace aotirt
