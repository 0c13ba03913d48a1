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
                                    AtenTensorHandle scale_b, AtenTensorHandle* bias, const int32_t* out_dtype) {
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
  AOTIRT_RETURN_IF_ERROR(check_scale(*a.scale_a, "scale_a"));
  AOTIRT_RETURN_IF_ERROR(check_scale(*a.scale_b, "scale_b"));
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

}  // namespace ops
}  // namespace aotirt
