// The device-neutral rules of the elementwise ops (abs, add, sub, mul, pow,
// gcd, angle, polar, fill_) and amax, as torch gives them: the result dtype
// (c10's result_type, where a Scalar argument is a wrapped number and 0-d
// tensors rank below dimensioned ones), broadcasting, the output strides
// TensorIterator picks, the dtypes each op accepts, the alpha check, the
// range check of a fill value, and amax's dims and output shape. Backends
// convert each input to |common| and compute there.
#pragma once

#include <cstdint>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {
// Nested: general names such as promote_types exist in other op families.
namespace ew {

// How an operand takes part in type promotion (c10's ResultTypeState):
// dimensioned tensors win over 0-d tensors, which win over wrapped numbers
// (a Scalar argument, which the shim passes as a double), unless the lower
// tier is of a higher category (bool < integer < floating < complex).
enum class Tier { kDimensioned, kZeroDim, kWrapped };
struct TypeOperand {
  DType dtype;
  Tier tier;
};
// The operand list's result dtype. A wrapped double counts as float32 (the
// default dtype). UNIMPLEMENTED when the result is a dtype aotirt computes
// nothing in (complex32, float8, uint16/32/64), naming it.
Result<DType> result_type(const std::vector<TypeOperand>& operands);
TypeOperand type_operand(const TensorImpl& t);
TypeOperand wrapped_double();
// The promotion of two dtypes (c10's promoteTypes) over the dtypes below.
DType promote_types(DType a, DType b);
// True for the dtypes the elementwise ops compute in: bool, uint8, int8-64,
// float16, bfloat16, float32, float64, complex64, complex128.
bool elementwise_dtype(DType d);
// UNIMPLEMENTED naming |what| unless elementwise_dtype(d).
Status check_elementwise_dtype(DType d, const char* what);

// numpy broadcasting of two shapes; INVALID_ARGUMENT naming both.
Result<DimVector> broadcast_shapes(const DimVector& a, const DimVector& b);

// One input of a TensorIterator as its layout rules see it: sizes and
// strides after the input was converted to the common dtype (a conversion
// makes a dense copy laid out like the input, as Tensor.to does).
struct IterInput {
  DimVector sizes, strides;
};
IterInput iter_input(const TensorImpl& t, DType common);
// A wrapped Scalar: a 0-d input.
IterInput iter_scalar();
// The strides TensorIterator gives a fresh output of |shape| for |inputs|:
// when every input has |shape| and all are contiguous, all channels-last
// (4-d) or all non-overlapping and dense with equal strides, that layout;
// else the dims ordered by the inputs' strides (first input first, broadcast
// dims ignored, ties to the smaller size) and laid out densely in that order.
DimVector iter_output_strides(const DimVector& shape, const std::vector<IterInput>& inputs);

// Which elementwise op; the rules differ in dtypes and output dtype.
enum class EwOp { kAdd, kSub, kMul, kPow, kGcd, kPolar, kAbs, kAngle };

// A binary op's plan: the inputs converted to |common| (a wrapped Scalar
// becomes a 0-d tensor of |common|), the result in |out_dtype| (|common|,
// except polar's complex) with |out_sizes| and |out_strides|.
struct BinaryArgs {
  EwOp op = EwOp::kAdd;
  const TensorImpl* self = nullptr;   // null when self is a Scalar
  const TensorImpl* other = nullptr;  // null when other is a Scalar
  double self_scalar = 0, other_scalar = 0;
  double alpha = 1;  // add and sub; sub's is already negated
  DType common = DType::kFloat32;
  DType out_dtype = DType::kFloat32;
  DimVector out_sizes, out_strides;
};

// add.Tensor / sub.Tensor / mul.Tensor / pow.Tensor_Tensor / gcd / polar.
Result<BinaryArgs> binary_args(EwOp op, AtenTensorHandle self, AtenTensorHandle other, double alpha);
// What sub.Tensor refuses beyond add.Tensor's rules (bool operands), so a
// subtraction can run as add.Tensor with alpha negated.
Status check_subtract(AtenTensorHandle self, AtenTensorHandle other);
// add.Scalar / mul.Scalar: |other| is a wrapped number.
Result<BinaryArgs> binary_scalar_args(EwOp op, AtenTensorHandle self, double other, double alpha);

// A unary op's plan (abs, angle, pow.Tensor_Scalar, pow.Scalar).
struct UnaryArgs {
  EwOp op = EwOp::kAbs;
  const TensorImpl* self = nullptr;  // pow.Scalar: the exponent tensor
  double scalar = 0;                 // pow's Scalar operand (exponent, or base for pow.Scalar)
  DType common = DType::kFloat32;    // the input is converted to this first
  DType out_dtype = DType::kFloat32;
  DimVector out_sizes, out_strides;
};
Result<UnaryArgs> abs_args(AtenTensorHandle self);
Result<UnaryArgs> angle_args(AtenTensorHandle self);
Result<UnaryArgs> pow_tensor_scalar_args(AtenTensorHandle self, double exponent);
Result<UnaryArgs> pow_scalar_args(double self, AtenTensorHandle exponent);

// fill_.Scalar: |value| converted as c10's checked Scalar conversion does
// (INVALID_ARGUMENT when it overflows the tensor's dtype; integers truncate
// toward zero, bool is value != 0).
struct FillArgs {
  const TensorImpl* self = nullptr;
  int64_t int_value = 0;  // integral dtypes and bool
  double float_value = 0;  // floating and complex (the real part) dtypes
};
Result<FillArgs> fill_args(AtenTensorHandle self, double value);

// The most dims amax reduces a tensor of (UNIMPLEMENTED past it).
constexpr int64_t kMaxAmaxDims = 64;

// amax: the dims wrapped and checked (empty: every dim), the output
// (contiguous, as torch's reductions allocate it).
struct AmaxArgs {
  const TensorImpl* self = nullptr;
  std::vector<bool> reduced;  // per input dim
  DimVector out_sizes;        // with keepdim's 1s
  DimVector out_strides;
};
Result<AmaxArgs> amax_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, bool keepdim);

}  // namespace ew
}  // namespace ops
}  // namespace aotirt
