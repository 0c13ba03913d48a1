#include "ops/scaled_mm_args.h"

#include <algorithm>
#include <cstdint>

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

namespace {

// torch's stride rule for a grouped operand: column-major (true) or
// row-major (false) in the last two dims, the leading stride covering the
// other dim and a multiple of 16 bytes, the data 16-byte aligned.
Result<bool> grouped_transposed(const TensorImpl& t, const char* what) {
  AOTIRT_ENSURE(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0, kInvalidArgument,
                "expected '{}' data_ptr to be aligned to 16 bytes", what);
  const int64_t end = t.dim() - 1;
  const int64_t align = 16 / static_cast<int64_t>(t.element_size());
  const DimVector &st = t.strides(), &sz = t.sizes();
  if (st[end - 1] == 1 && st[end] >= std::max<int64_t>(1, sz[end - 1])) {
    AOTIRT_ENSURE(st[end] % align == 0, kInvalidArgument, "'{}': strides should be multiple of 16 bytes, got {}",
                  what, layout_str(t));
    return true;
  }
  if (st[end] == 1 && st[end - 1] >= std::max<int64_t>(1, sz[end])) {
    AOTIRT_ENSURE(st[end - 1] % align == 0, kInvalidArgument, "'{}': strides should be multiple of 16 bytes, got {}",
                  what, layout_str(t));
    return false;
  }
  return AOTIRT_STATUS(kInvalidArgument, "'{}': invalid strides/sizes, got {}", what, layout_str(t));
}

// torch's row-wise scale rule: |dim| 0 scales |mat|'s rows (scale_a), 1 its
// columns (scale_b); a 2-D operand's scale is 1-D and contiguous, with
// |multiplier| (the groups of a 2d x 2d product) times the scaled size; a
// 3-D operand's is [G, size], contiguous in its last dim.
Status check_rowwise_scale(const TensorImpl& mat, const TensorImpl& scale, int dim, int64_t multiplier,
                           const char* what) {
  if (mat.dim() == 2) {
    AOTIRT_ENSURE(scale.dim() == 1, kInvalidArgument, "'{}' must be a 1D tensor, but got shape {}", what,
                  shape_str(scale));
    AOTIRT_ENSURE(scale.is_contiguous(), kInvalidArgument, "'{}' must be contiguous, got {}", what,
                  layout_str(scale));
    AOTIRT_ENSURE(scale.sizes()[0] == mat.sizes()[dim] * multiplier, kInvalidArgument,
                  "'{}' must have {} elements, got {}", what, mat.sizes()[dim] * multiplier, scale.sizes()[0]);
  } else {
    AOTIRT_ENSURE(scale.dim() == 2, kInvalidArgument, "'{}' must be a 2D tensor, but got shape {}", what,
                  shape_str(scale));
    AOTIRT_ENSURE(scale.strides()[1] == 1, kInvalidArgument, "'{}' must be contiguous in the last dimension, got {}",
                  what, layout_str(scale));
    AOTIRT_ENSURE(scale.sizes()[0] == mat.sizes()[0], kInvalidArgument,
                  "'{}' must have the batch dimension {} of its operand, got shape {}", what, mat.sizes()[0],
                  shape_str(scale));
    AOTIRT_ENSURE(scale.sizes()[1] == mat.sizes()[1 + dim], kInvalidArgument,
                  "'{}' must have {} scales per group, got shape {}", what, mat.sizes()[1 + dim],
                  shape_str(scale));
  }
  return Status();
}

}  // namespace

Result<ScaledGroupedMmArgs> scaled_grouped_mm_args(AtenTensorHandle self, AtenTensorHandle mat2,
                                                   AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                                   AtenTensorHandle* offs, AtenTensorHandle* bias,
                                                   AtenTensorHandle* scale_result, const int32_t* out_dtype) {
  ScaledGroupedMmArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.mat2, require_tensor(mat2, "mat2"));
  AOTIRT_ASSIGN_OR_RETURN(a.scale_a, require_tensor(scale_a, "scale_a"));
  AOTIRT_ASSIGN_OR_RETURN(a.scale_b, require_tensor(scale_b, "scale_b"));
  a.offs = optional_tensor(offs);
  const TensorImpl &x = *a.self, &w = *a.mat2;
  AOTIRT_ENSURE(x.dim() == 2 || x.dim() == 3, kInvalidArgument, "'self' has to be 2 or 3d, got shape {}",
                shape_str(x));
  AOTIRT_ENSURE(w.dim() == 2 || w.dim() == 3, kInvalidArgument, "'mat2' has to be 2 or 3d, got shape {}",
                shape_str(w));
  AOTIRT_ENSURE(x.dtype() == DType::kFloat8_e4m3fn && w.dtype() == DType::kFloat8_e4m3fn, kInvalidArgument,
                "Expected inputs of float8_e4m3fn, got self {} and mat2 {}", dtype_name(x.dtype()),
                dtype_name(w.dtype()));
  AOTIRT_ASSIGN_OR_RETURN(bool x_transposed, grouped_transposed(x, "self"));
  AOTIRT_ENSURE(!x_transposed, kInvalidArgument, "Expected self to not be transposed (row-major), got {}",
                layout_str(x));
  AOTIRT_ASSIGN_OR_RETURN(bool w_transposed, grouped_transposed(w, "mat2"));
  AOTIRT_ENSURE(w_transposed, kInvalidArgument, "Expected mat2 to be transposed (column-major), got {}",
                layout_str(w));
  const bool x2 = x.dim() == 2, w2 = w.dim() == 2;
  const int64_t xk = x.sizes()[x.dim() - 1], wk = w.sizes()[w.dim() - 2], wn = w.sizes()[w.dim() - 1];
  AOTIRT_ENSURE((x2 && w2) || xk == wk, kInvalidArgument,
                "contraction dimension of self {} and mat2 {} must match", shape_str(x), shape_str(w));
  AOTIRT_ENSURE(xk % 16 == 0, kInvalidArgument, "Expected trailing dimension of self to be divisible by 16, got {}",
                shape_str(x));
  AOTIRT_ENSURE(wk % 16 == 0 && wn % 16 == 0, kInvalidArgument,
                "Expected mat2 shape to be divisible by 16, got {}", shape_str(w));
  AOTIRT_ENSURE(optional_tensor(bias) == nullptr, kUnimplemented, "'bias' is not supported (torch's op refuses it)");
  AOTIRT_ENSURE(optional_tensor(scale_result) == nullptr, kUnimplemented,
                "'scale_result' is not supported (torch's op refuses it)");
  AOTIRT_ENSURE((a.offs != nullptr) == (x2 || w2), kInvalidArgument,
                "offs must be given exactly when an operand is 2d (self {}, mat2 {})", shape_str(x), shape_str(w));
  if (a.offs) {
    AOTIRT_ENSURE(a.offs->dim() == 1, kInvalidArgument, "'offs' has to be 1D, got shape {}", shape_str(*a.offs));
    AOTIRT_ENSURE(a.offs->dtype() == DType::kInt32, kInvalidArgument, "'offs' has to be int32, got {}",
                  dtype_name(a.offs->dtype()));
  }
  const DType sa = a.scale_a->dtype(), sb = a.scale_b->dtype();
  AOTIRT_ENSURE(sa == DType::kFloat32 && sb == DType::kFloat32, kInvalidArgument,
                "scale_a and scale_b must both be float32, got {} and {}", dtype_name(sa), dtype_name(sb));
  if (x2 && w2) {
    a.kind = GroupedMmKind::k2d2d;
    a.groups = a.offs->sizes()[0];
    a.offs_limit = std::min(xk, wk);
    a.out_sizes = DimVector{a.groups, x.sizes()[0], wn};
  } else if (x2) {
    a.kind = GroupedMmKind::k2d3d;
    a.groups = a.offs->sizes()[0];
    AOTIRT_ENSURE(a.groups == w.sizes()[0], kInvalidArgument, "matrix batch sizes have to match: offs {} and mat2 {}",
                  shape_str(*a.offs), shape_str(w));
    a.offs_limit = x.sizes()[0];
    a.out_sizes = DimVector{x.sizes()[0], wn};
  } else if (w2) {
    a.kind = GroupedMmKind::k3d2d;
    a.groups = a.offs->sizes()[0];
    AOTIRT_ENSURE(a.groups == x.sizes()[0], kInvalidArgument, "matrix batch sizes have to match: offs {} and self {}",
                  shape_str(*a.offs), shape_str(x));
    a.offs_limit = wn;
    a.out_sizes = DimVector{x.sizes()[1], wn};
  } else {
    a.kind = GroupedMmKind::k3d3d;
    a.groups = x.sizes()[0];
    AOTIRT_ENSURE(a.groups == w.sizes()[0], kInvalidArgument, "batched dimension has to match: self {} and mat2 {}",
                  shape_str(x), shape_str(w));
    a.out_sizes = DimVector{a.groups, x.sizes()[1], wn};
  }
  const int64_t multiplier = a.kind == GroupedMmKind::k2d2d ? a.groups : 1;
  AOTIRT_RETURN_IF_ERROR(check_rowwise_scale(x, *a.scale_a, 0, multiplier, "scale_a"));
  AOTIRT_RETURN_IF_ERROR(check_rowwise_scale(w, *a.scale_b, 1, multiplier, "scale_b"));
  if (out_dtype) {
    AOTIRT_ENSURE(dtype_is_valid(*out_dtype), kInvalidArgument, "invalid out_dtype code {}", *out_dtype);
    a.out_dtype = static_cast<DType>(*out_dtype);
  }
  AOTIRT_ENSURE(a.out_dtype == DType::kBFloat16, kInvalidArgument,
                "Only bf16 high precision output types are supported for grouped gemm, got {}",
                dtype_name(a.out_dtype));
  // torch pads the output's rows to 16 bytes.
  const int64_t align = 16 / static_cast<int64_t>(dtype_size(a.out_dtype));
  const int64_t padded = (a.out_sizes[a.out_sizes.size() - 1] + align - 1) / align * align;
  if (a.out_sizes.size() == 3)
    a.out_strides = DimVector{a.out_sizes[1] * padded, padded, 1};
  else
    a.out_strides = DimVector{padded, 1};
  return a;
}

}  // namespace ops
}  // namespace aotirt
