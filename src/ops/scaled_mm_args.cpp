#include "ops/scaled_mm_args.h"

#include "base/status.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

bool is_fp8(DType d) { return d == DType::kFloat8_e4m3fn || d == DType::kFloat8_e5m2; }

bool is_output_dtype(DType d) {
  return is_fp8(d) || d == DType::kFloat32 || d == DType::kBFloat16 || d == DType::kFloat16;
}

Status check_scale(const TensorImpl& s, const char* what) {
  AOTIRT_ENSURE(s.dtype() == DType::kFloat32, kInvalidArgument, "'{}' must be float32, got {}", what,
                dtype_name(s.dtype()));
  AOTIRT_ENSURE(s.numel() == 1, kUnimplemented,
                "'{}' of shape {}: only per-tensor (one-element) scales are implemented, as in torch's CPU op", what,
                shape_str(s));
  return Status();
}

}  // namespace

Result<ScaledMmArgs> scaled_mm_args(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                    AtenTensorHandle scale_b, AtenTensorHandle* bias, const int32_t* out_dtype,
                                    bool allow_rowwise) {
  ScaledMmArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.mat2, require_tensor(mat2, "mat2"));
  AOTIRT_ASSIGN_OR_RETURN(a.scale_a, require_tensor(scale_a, "scale_a"));
  AOTIRT_ASSIGN_OR_RETURN(a.scale_b, require_tensor(scale_b, "scale_b"));
  a.bias = optional_tensor(bias);
  AOTIRT_RETURN_IF_ERROR(check_dim(*a.self, 2, "self"));
  AOTIRT_RETURN_IF_ERROR(check_dim(*a.mat2, 2, "mat2"));
  AOTIRT_ENSURE(is_fp8(a.self->dtype()), kInvalidArgument, "'self' must be float8_e4m3fn or float8_e5m2, got {}",
                dtype_name(a.self->dtype()));
  AOTIRT_ENSURE(is_fp8(a.mat2->dtype()), kInvalidArgument, "'mat2' must be float8_e4m3fn or float8_e5m2, got {}",
                dtype_name(a.mat2->dtype()));
  a.m = a.self->sizes()[0];
  a.k = a.self->sizes()[1];
  a.n = a.mat2->sizes()[1];
  AOTIRT_ENSURE(a.mat2->sizes()[0] == a.k, kInvalidArgument, "self {} and mat2 {} cannot be multiplied",
                shape_str(*a.self), shape_str(*a.mat2));
  const TensorImpl &sa = *a.scale_a, &sb = *a.scale_b;
  a.rowwise = allow_rowwise && sa.dim() == 2 && sb.dim() == 2 && sa.sizes()[0] == a.m && sa.sizes()[1] == 1 &&
              sb.sizes()[0] == 1 && sb.sizes()[1] == a.n && (sa.numel() != 1 || sb.numel() != 1);
  if (a.rowwise) {
    AOTIRT_ENSURE(sa.dtype() == DType::kFloat32 && sb.dtype() == DType::kFloat32, kInvalidArgument,
                  "row-wise scales must be float32, got {} and {}", dtype_name(sa.dtype()), dtype_name(sb.dtype()));
  } else {
    AOTIRT_RETURN_IF_ERROR(check_scale(sa, "scale_a"));
    AOTIRT_RETURN_IF_ERROR(check_scale(sb, "scale_b"));
  }
  if (a.bias) {
    AOTIRT_ENSURE(a.bias->dim() == 1 && a.bias->sizes()[0] == a.n, kInvalidArgument,
                  "'bias' must have shape [{}], got {}", a.n, shape_str(*a.bias));
  }
  a.out_dtype = a.self->dtype();
  if (out_dtype) {
    AOTIRT_ENSURE(dtype_is_valid(*out_dtype), kInvalidArgument, "invalid out_dtype code {}", *out_dtype);
    a.out_dtype = static_cast<DType>(*out_dtype);
  }
  AOTIRT_ENSURE(is_output_dtype(a.out_dtype), kUnimplemented,
                "out_dtype {}: _scaled_mm gives float32, bfloat16, float16 or float8 here",
                dtype_name(a.out_dtype));
  return a;
}

Status check_scaled_mm_cuda(const ScaledMmArgs& a) {
  AOTIRT_ENSURE(a.k % 16 == 0, kInvalidArgument,
                "Expected trailing dimension of mat1 to be divisible by 16 but got mat1 shape: ({}x{})", a.m, a.k);
  AOTIRT_ENSURE(a.n % 16 == 0, kInvalidArgument, "mat2 shape ({}x{}) must be divisible by 16", a.k, a.n);
  AOTIRT_ENSURE(!(a.self->dtype() == DType::kFloat8_e5m2 && a.mat2->dtype() == DType::kFloat8_e5m2),
                kInvalidArgument, "Multiplication of two Float8_e5m2 matrices is not supported");
  // cuBLASLt's float8 kernels read self [M, K] with K contiguous and mat2
  // [K, N] with K contiguous.
  const TensorImpl &s = *a.self, &w = *a.mat2;
  const bool self_rows = (a.k <= 1 || s.strides()[1] == 1) && (a.m <= 1 || s.strides()[0] >= a.k);
  const bool mat2_cols = (a.k <= 1 || w.strides()[0] == 1) && (a.n <= 1 || w.strides()[1] >= a.k);
  AOTIRT_ENSURE(self_rows, kInvalidArgument, "self must be row_major, got {}", layout_str(s));
  AOTIRT_ENSURE(mat2_cols, kInvalidArgument, "mat2 must be col_major, got {}", layout_str(w));
  AOTIRT_ENSURE(!a.rowwise || a.out_dtype == DType::kBFloat16, kInvalidArgument,
                "Only bf16 high precision output types are supported for row-wise scaling, got {}",
                dtype_name(a.out_dtype));
  if (a.bias) {
    AOTIRT_ENSURE(a.bias->dtype() == DType::kFloat32 || a.bias->dtype() == DType::kBFloat16 ||
                      a.bias->dtype() == DType::kFloat16,
                  kInvalidArgument, "'bias' must be float32, bfloat16 or float16, got {}",
                  dtype_name(a.bias->dtype()));
  }
  return Status();
}

}  // namespace ops
}  // namespace aotirt
