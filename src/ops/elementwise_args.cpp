#include "ops/elementwise_args.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/dtype.h"
#include "ops/layout.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
// Nested: general names such as promote_types exist in other op families.
namespace ew {
namespace {

bool is_float(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}
bool is_complex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128 || d == DType::kComplex32; }
bool is_integer(DType d) {  // excludes bool
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}

// Rank of a signed integer dtype by width.
int int_rank(DType d) {
  switch (d) {
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 3;
    case DType::kInt64: return 4;
    default: return 0;
  }
}

DType to_complex(DType d) {
  switch (d) {
    case DType::kFloat16: return DType::kComplex32;
    case DType::kFloat64: return DType::kComplex128;
    default: return DType::kComplex64;
  }
}

DType complex_value_type(DType d) {
  switch (d) {
    case DType::kComplex32: return DType::kFloat16;
    case DType::kComplex128: return DType::kFloat64;
    default: return DType::kFloat32;
  }
}

using MaybeType = std::optional<DType>;

MaybeType promote_skip_undefined(MaybeType a, MaybeType b) {
  if (!a) return b;
  if (!b) return a;
  return promote_types(*a, *b);
}

// c10's combine_categories: |higher| is the result of the higher tier.
MaybeType combine_categories(MaybeType higher, MaybeType lower) {
  if (higher && is_complex(*higher)) return higher;
  if (lower && is_complex(*lower)) {
    if (higher && is_float(*higher)) return to_complex(*higher);
    return lower;
  }
  if (higher && is_float(*higher)) return higher;
  if ((higher && *higher == DType::kBool) || (lower && is_float(*lower))) return promote_skip_undefined(higher, lower);
  if (higher) return higher;
  return lower;
}

std::string type_list(DType a, DType b) { return std::string(dtype_name(a)) + " and " + dtype_name(b); }

// Dense row-major strides as torch gives them (empty dims count as 1).
DimVector torch_contiguous(const DimVector& sizes) {
  DimVector s;
  s.resize(sizes.size());
  int64_t acc = 1;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    s[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return s;
}

bool contiguous_layout(const IterInput& in) {
  if (numel_of(in.sizes) == 0) return true;
  int64_t expected = 1;
  for (int64_t d = in.sizes.size() - 1; d >= 0; --d) {
    if (in.sizes[d] == 1) continue;
    if (in.strides[d] != expected) return false;
    expected *= in.sizes[d];
  }
  return true;
}

// c10's channels-last contiguity flag (4-d only): C, W, H, N innermost
// first, size-1 dims skipped.
bool channels_last_contiguous(const IterInput& in) {
  if (in.sizes.size() != 4) return false;
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (in.sizes[d] == 1) continue;
    if (in.strides[d] != expected) return false;
    expected *= in.sizes[d];
  }
  return true;
}

bool dense_layout(const IterInput& in) {
  TensorImpl t(StorageRef(), DType::kFloat32, in.sizes, in.strides, 0);
  return is_non_overlapping_and_dense(t);
}

// The strides of |in| seen from an iteration over |shape| (right-aligned;
// 0 where the input broadcasts), as TensorIterator's compute_strides.
DimVector iter_strides(const IterInput& in, const DimVector& shape) {
  const int64_t nd = shape.size(), offset = nd - in.sizes.size();
  DimVector s;
  s.resize(nd);
  for (int64_t d = 0; d < nd; ++d) s[d] = 0;
  for (int64_t i = 0; i < in.sizes.size(); ++i)
    s[offset + i] = (in.sizes[i] == 1 && shape[offset + i] != 1) ? 0 : in.strides[i];
  return s;
}

Status check_device_pair(const TensorImpl& a, const char* a_name, const TensorImpl& b, const char* b_name) {
  // A 0-d CPU tensor may join a tensor on any device, as in torch.
  if (a.device() == b.device() || (b.dim() == 0 && b.device().is_cpu()) || (a.dim() == 0 && a.device().is_cpu()))
    return Status();
  return AOTIRT_STATUS(kInvalidArgument, "'{}' is on {} but '{}' is on {}", a_name, a.device().to_string(), b_name,
                       b.device().to_string());
}

// torch's alpha_check: an integral or bool result takes an integral alpha
// only, and the shim's alpha is always a floating-point Scalar.
Status check_alpha(DType common) {
  AOTIRT_ENSURE(is_float(common) || is_complex(common), kInvalidArgument,
                "for integral input tensors (here the result is {}), argument alpha must not be a floating point "
                "number, and the shim passes alpha as a double",
                dtype_name(common));
  return Status();
}

Status check_sub_inputs(DType a, DType b) {
  AOTIRT_ENSURE(!(a == DType::kBool && b == DType::kBool), kInvalidArgument,
                "subtraction, the `-` operator, with two bool tensors is not supported; use logical_xor() instead");
  AOTIRT_ENSURE(a != DType::kBool && b != DType::kBool, kInvalidArgument,
                "subtraction, the `-` operator, with a bool tensor is not supported; use logical_not() to invert a "
                "mask");
  return Status();
}

// Per-op dtype rules on the common dtype.
Status check_op_dtype(EwOp op, DType common) {
  switch (op) {
    case EwOp::kPow:
      AOTIRT_ENSURE(common != DType::kBool, kInvalidArgument, "pow is not implemented for bool (both inputs bool)");
      break;
    case EwOp::kGcd:
      AOTIRT_ENSURE(is_integer(common), kInvalidArgument,
                    "gcd is implemented for integer dtypes only, got {}", dtype_name(common));
      break;
    default: break;
  }
  return Status();
}

Result<const TensorImpl*> elementwise_tensor(AtenTensorHandle h, const char* what) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, require_tensor(h, what));
  AOTIRT_RETURN_IF_ERROR(check_elementwise_dtype(t->dtype(), what));
  return t;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (is_complex(a) || is_complex(b)) {
    // The complex type whose parts hold both values.
    const DType va = is_complex(a) ? complex_value_type(a) : a;
    const DType vb = is_complex(b) ? complex_value_type(b) : b;
    const DType v = (is_float(va) && is_float(vb)) ? promote_types(va, vb) : (is_float(va) ? va : vb);
    return to_complex(v);
  }
  if (is_float(a) && is_float(b)) {
    if ((a == DType::kFloat16 && b == DType::kBFloat16) || (a == DType::kBFloat16 && b == DType::kFloat16))
      return DType::kFloat32;
    if (a == DType::kFloat64 || b == DType::kFloat64) return DType::kFloat64;
    if (a == DType::kFloat32 || b == DType::kFloat32) return DType::kFloat32;
    return a;  // unreachable: equal types returned above
  }
  if (is_float(a)) return a;
  if (is_float(b)) return b;
  // Two different integer types.
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    const DType s = a == DType::kUInt8 ? b : a;
    return int_rank(s) <= 1 ? DType::kInt16 : s;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

bool elementwise_dtype(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kComplex64:
    case DType::kComplex128: return true;
    default: return false;
  }
}

Status check_elementwise_dtype(DType d, const char* what) {
  AOTIRT_ENSURE(elementwise_dtype(d), kUnimplemented, "'{}' has dtype {}, which aotirt's elementwise ops do not support",
                what, dtype_name(d));
  return Status();
}

TypeOperand type_operand(const TensorImpl& t) { return {t.dtype(), t.dim() == 0 ? Tier::kZeroDim : Tier::kDimensioned}; }
TypeOperand wrapped_double() { return {DType::kFloat64, Tier::kWrapped}; }

Result<DType> result_type(const std::vector<TypeOperand>& operands) {
  MaybeType dim, zero, wrapped;
  for (const TypeOperand& o : operands) {
    DType d = o.dtype;
    // A wrapped float is the default dtype (float32); a wrapped complex the
    // default complex dtype.
    if (o.tier == Tier::kWrapped) d = is_complex(d) ? DType::kComplex64 : is_float(d) ? DType::kFloat32 : d;
    MaybeType& slot = o.tier == Tier::kDimensioned ? dim : o.tier == Tier::kZeroDim ? zero : wrapped;
    slot = promote_skip_undefined(slot, d);
  }
  const MaybeType r = combine_categories(dim, combine_categories(zero, wrapped));
  AOTIRT_ENSURE(r.has_value(), kInvalidArgument, "no operands to promote");
  AOTIRT_ENSURE(elementwise_dtype(*r), kUnimplemented, "the result dtype would be {}, which aotirt does not compute in",
                dtype_name(*r));
  return *r;
}

Result<DimVector> broadcast_shapes(const DimVector& a, const DimVector& b) {
  const int64_t nd = std::max(a.size(), b.size());
  DimVector out;
  out.resize(nd);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t ia = i - (nd - a.size()), ib = i - (nd - b.size());
    const int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    AOTIRT_ENSURE(sa == sb || sa == 1 || sb == 1, kInvalidArgument,
                  "the size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {} "
                  "(shapes {} and {})",
                  sa, sb, i, dims_to_string(a.data(), a.size()), dims_to_string(b.data(), b.size()));
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

IterInput iter_input(const TensorImpl& t, DType common) {
  if (t.dtype() == common) return {t.sizes(), t.strides()};
  return {t.sizes(), empty_like_strides(t)};
}

IterInput iter_scalar() { return {DimVector(), DimVector()}; }

DimVector iter_output_strides(const DimVector& shape, const std::vector<IterInput>& inputs) {
  const int64_t nd = shape.size();
  if (nd == 0) return DimVector();
  bool same_shape = true;
  for (const IterInput& in : inputs) same_shape = same_shape && in.sizes == shape;
  if (same_shape && !inputs.empty()) {
    bool contiguous = true, channels_last = true, dense = true;
    for (const IterInput& in : inputs) {
      contiguous = contiguous && contiguous_layout(in);
      channels_last = channels_last && channels_last_contiguous(in);
      dense = dense && dense_layout(in);
    }
    if (contiguous) return torch_contiguous(shape);
    if (channels_last) return channels_last_strides(shape);
    if (dense) {
      bool equal = true;
      for (const IterInput& in : inputs) equal = equal && in.strides == inputs.front().strides;
      if (equal) return inputs.back().strides;
    }
  }
  // TensorIterator's reorder_dimensions: perm[0] is the fastest dim.
  std::vector<DimVector> strides;
  for (const IterInput& in : inputs) strides.push_back(iter_strides(in, shape));
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  // > 0: dim0 goes after (outside) dim1; < 0: before; 0: undecided.
  auto should_swap = [&](int64_t dim0, int64_t dim1) -> int {
    for (const DimVector& s : strides) {
      const int64_t s0 = s[dim0], s1 = s[dim1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[dim0] > shape[dim1]) return 1;
    }
    return 0;
  };
  if (nd > 1) {
    for (int64_t i = 1; i < nd; ++i) {
      int64_t dim1 = i;
      for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
        const int c = should_swap(perm[dim0], perm[dim1]);
        if (c > 0) {
          std::swap(perm[dim0], perm[dim1]);
          dim1 = dim0;
        } else if (c < 0) {
          break;
        }
      }
    }
  }
  bool inverted = true;
  for (int64_t j = 0; j < nd; ++j) inverted = inverted && perm[j] == nd - 1 - j;
  if (inverted) return torch_contiguous(shape);
  // Dense in perm's order; an empty dim zeroes the strides outside it, as
  // TensorIterator's compatible_stride does.
  DimVector out;
  out.resize(nd);
  int64_t next = 1;
  for (int64_t j = 0; j < nd; ++j) {
    out[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return out;
}

Result<BinaryArgs> binary_args(EwOp op, AtenTensorHandle self, AtenTensorHandle other, double alpha) {
  BinaryArgs a;
  a.op = op;
  const char* self_name = op == EwOp::kPolar ? "abs" : "self";
  const char* other_name = op == EwOp::kPolar ? "angle" : op == EwOp::kPow ? "exponent" : "other";
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, self_name));
  AOTIRT_ASSIGN_OR_RETURN(a.other, elementwise_tensor(other, other_name));
  AOTIRT_RETURN_IF_ERROR(check_device_pair(*a.self, self_name, *a.other, other_name));
  AOTIRT_ASSIGN_OR_RETURN(a.out_sizes, broadcast_shapes(a.self->sizes(), a.other->sizes()));
  if (op == EwOp::kPolar) {
    const DType d = a.self->dtype();
    AOTIRT_ENSURE(d == a.other->dtype(), kInvalidArgument,
                  "'abs' is {} but 'angle' is {}; polar needs both of one dtype", dtype_name(d),
                  dtype_name(a.other->dtype()));
    AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64, kInvalidArgument,
                  "polar takes float32 or float64 inputs on the CPU, got {}", type_list(d, a.other->dtype()));
    a.common = d;
    a.out_dtype = d == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
  } else {
    if (op == EwOp::kSub) AOTIRT_RETURN_IF_ERROR(check_sub_inputs(a.self->dtype(), a.other->dtype()));
    AOTIRT_ASSIGN_OR_RETURN(a.common, result_type({type_operand(*a.self), type_operand(*a.other)}));
    AOTIRT_RETURN_IF_ERROR(check_op_dtype(op, a.common));
    if (op == EwOp::kAdd || op == EwOp::kSub) AOTIRT_RETURN_IF_ERROR(check_alpha(a.common));
    a.out_dtype = a.common;
  }
  a.alpha = op == EwOp::kSub ? -alpha : alpha;
  a.out_strides = iter_output_strides(a.out_sizes, {iter_input(*a.self, a.common), iter_input(*a.other, a.common)});
  return a;
}

Status check_subtract(AtenTensorHandle self, AtenTensorHandle other) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, elementwise_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, elementwise_tensor(other, "other"));
  return check_sub_inputs(s->dtype(), o->dtype());
}

Result<BinaryArgs> binary_scalar_args(EwOp op, AtenTensorHandle self, double other, double alpha) {
  BinaryArgs a;
  a.op = op;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  a.other_scalar = other;
  AOTIRT_ASSIGN_OR_RETURN(a.common, result_type({type_operand(*a.self), wrapped_double()}));
  if (op == EwOp::kAdd || op == EwOp::kSub) AOTIRT_RETURN_IF_ERROR(check_alpha(a.common));
  a.out_dtype = a.common;
  a.alpha = op == EwOp::kSub ? -alpha : alpha;
  a.out_sizes = a.self->sizes();
  a.out_strides = iter_output_strides(a.out_sizes, {iter_input(*a.self, a.common), iter_scalar()});
  return a;
}

Result<UnaryArgs> abs_args(AtenTensorHandle self) {
  UnaryArgs a;
  a.op = EwOp::kAbs;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  const DType d = a.self->dtype();
  // torch's CPU abs refuses bool; its CUDA abs takes it (the identity).
  AOTIRT_ENSURE(d != DType::kBool || a.self->device().type != DeviceType::kCpu, kInvalidArgument,
                "abs is not implemented for bool tensors on the CPU, as in torch");
  a.common = d;
  a.out_sizes = a.self->sizes();
  if (is_complex(d)) {
    // torch allocates the real result with empty_like.
    a.out_dtype = complex_value_type(d);
    a.out_strides = empty_like_strides(*a.self);
  } else {
    a.out_dtype = d;
    a.out_strides = iter_output_strides(a.out_sizes, {iter_input(*a.self, d)});
  }
  return a;
}

Result<UnaryArgs> angle_args(AtenTensorHandle self) {
  UnaryArgs a;
  a.op = EwOp::kAngle;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  const DType d = a.self->dtype();
  AOTIRT_ENSURE(a.self->device().type == DeviceType::kCpu || (d != DType::kFloat16 && d != DType::kBFloat16),
                kUnimplemented, "angle is not implemented for {} on {}, as in torch", dtype_name(d),
                a.self->device().to_string());
  a.out_sizes = a.self->sizes();
  if (is_complex(d)) {
    // torch computes into a complex temporary and copies the real part into
    // a result resized from empty: contiguous.
    a.common = d;
    a.out_dtype = complex_value_type(d);
    a.out_strides = torch_contiguous(a.out_sizes);
  } else {
    // Integers and bool promote to the default float dtype.
    a.common = is_float(d) ? d : DType::kFloat32;
    a.out_dtype = a.common;
    a.out_strides = iter_output_strides(a.out_sizes, {iter_input(*a.self, a.common)});
  }
  return a;
}

Result<UnaryArgs> pow_tensor_scalar_args(AtenTensorHandle self, double exponent) {
  UnaryArgs a;
  a.op = EwOp::kPow;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  a.scalar = exponent;
  // A double exponent is a floating Scalar: integer and bool bases give
  // float32, and torch's "integers to negative integer powers" error never
  // applies through the shim.
  AOTIRT_ASSIGN_OR_RETURN(a.common, result_type({type_operand(*a.self), wrapped_double()}));
  a.out_dtype = a.common;
  a.out_sizes = a.self->sizes();
  a.out_strides = iter_output_strides(a.out_sizes, {iter_input(*a.self, a.common)});
  return a;
}

Result<UnaryArgs> pow_scalar_args(double self, AtenTensorHandle exponent) {
  UnaryArgs a;
  a.op = EwOp::kPow;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(exponent, "exponent"));
  a.scalar = self;
  AOTIRT_ASSIGN_OR_RETURN(a.common, result_type({wrapped_double(), type_operand(*a.self)}));
  a.out_dtype = a.common;
  a.out_sizes = a.self->sizes();
  // torch's pow.Scalar meta allocates the result contiguous.
  a.out_strides = torch_contiguous(a.out_sizes);
  return a;
}

Result<FillArgs> fill_args(AtenTensorHandle self, double value) {
  FillArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  const DType d = a.self->dtype();
  auto overflow = [&]() {
    return AOTIRT_STATUS(kInvalidArgument, "value {} cannot be converted to type {} without overflow", value,
                         dtype_name(d));
  };
  // c10's overflow test compares against the type's limits converted to
  // double (so int64's limit is 2^63); NaN overflows every integer type.
  auto int_range = [&](double lo, double hi) -> Status {
    if (std::isnan(value) || value < lo || value > hi) return overflow();
    return Status();
  };
  switch (d) {
    case DType::kBool: a.int_value = value != 0; break;
    case DType::kUInt8: AOTIRT_RETURN_IF_ERROR(int_range(0, 255)); break;
    case DType::kInt8: AOTIRT_RETURN_IF_ERROR(int_range(-128, 127)); break;
    case DType::kInt16: AOTIRT_RETURN_IF_ERROR(int_range(-32768, 32767)); break;
    case DType::kInt32: AOTIRT_RETURN_IF_ERROR(int_range(-2147483648.0, 2147483647.0)); break;
    case DType::kInt64: AOTIRT_RETURN_IF_ERROR(int_range(-9223372036854775808.0, 9223372036854775808.0)); break;
    default: {
      // Floating and complex: infinities and NaN pass, finite values past the
      // type's largest one overflow.
      double max = std::numeric_limits<double>::max();
      if (d == DType::kFloat16) max = 65504.0;
      if (d == DType::kBFloat16) max = 3.3895313892515355e38;  // 0x7f7f
      if (d == DType::kFloat32 || d == DType::kComplex64) max = std::numeric_limits<float>::max();
      // A one-element float16/bfloat16 CPU tensor takes torch's scalar_fill
      // path, which converts without the check (past the range: infinity);
      // other devices always check.
      const bool unchecked =
          (d == DType::kFloat16 || d == DType::kBFloat16) && a.self->numel() == 1 && a.self->device().is_cpu();
      if (!unchecked && std::isfinite(value) && (value > max || value < -max)) return overflow();
      a.float_value = value;
      return a;
    }
  }
  if (d != DType::kBool) {
    // Truncation toward zero; 2^63 itself passes c10's test and converts to
    // int64's minimum on x86, which torch returns.
    a.int_value = value >= 9223372036854775808.0 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(value);
  }
  return a;
}

Result<AmaxArgs> amax_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, bool keepdim) {
  AmaxArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, elementwise_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_ENSURE(!dtype_is_complex(t.dtype()), kInvalidArgument, "amax is not implemented for complex dtypes, got {}",
                dtype_name(t.dtype()));
  AOTIRT_ENSURE(dim_len >= 0 && (dim_len == 0 || dim != nullptr), kInvalidArgument,
                "'dim' is null with {} entries", dim_len);
  const int64_t rank = t.dim();
  AOTIRT_ENSURE(rank <= kMaxAmaxDims, kUnimplemented, "'self' has {} dims; aotirt's amax takes up to {}", rank,
                kMaxAmaxDims);
  const int64_t extent = rank == 0 ? 1 : rank;
  a.reduced.assign(rank, false);
  std::vector<bool> seen(extent, false);
  for (int64_t i = 0; i < dim_len; ++i) {
    const int64_t d = dim[i];
    AOTIRT_ENSURE(d >= -extent && d < extent, kInvalidArgument,
                  "dimension out of range (expected to be in range of [{}, {}], but got {})", -extent, extent - 1, d);
    const int64_t w = d < 0 ? d + extent : d;
    AOTIRT_ENSURE(!seen[w], kInvalidArgument, "dim {} appears multiple times in the list of dims", w);
    seen[w] = true;
    if (rank > 0) a.reduced[w] = true;
  }
  if (dim_len == 0) {
    AOTIRT_ENSURE(t.numel() != 0, kInvalidArgument,
                  "amax(): expected reduction dim to be specified for input.numel() == 0");
    a.reduced.assign(rank, true);
  }
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (a.reduced[d]) {
      AOTIRT_ENSURE(t.sizes()[d] != 0, kInvalidArgument, "amax(): expected reduction dim {} to have non-zero size", d);
      if (keepdim) sizes.push_back(1);
    } else {
      sizes.push_back(t.sizes()[d]);
    }
  }
  a.out_sizes = DimVector(sizes);
  a.out_strides = torch_contiguous(a.out_sizes);
  return a;
}

}  // namespace ew
}  // namespace ops
}  // namespace aotirt
