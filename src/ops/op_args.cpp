#include "ops/op_args.h"

#include "base/status.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace ops {

std::string shape_str(const TensorImpl& t) { return dims_to_string(t.sizes().data(), t.dim()); }

std::string layout_str(const TensorImpl& t) {
  return "sizes " + shape_str(t) + " strides " + dims_to_string(t.strides().data(), t.dim());
}

Result<const TensorImpl*> require_tensor(AtenTensorHandle h, const char* what) {
  if (!h) return AOTIRT_STATUS(kInvalidArgument, "'{}' is a null tensor handle", what);
  return static_cast<const TensorImpl*>(impl_of(h));
}

const TensorImpl* optional_tensor(AtenTensorHandle* h) {
  if (!h || !*h) return nullptr;
  return impl_of(*h);
}

Status check_dim(const TensorImpl& t, int64_t dim, const char* what) {
  AOTIRT_ENSURE(t.dim() == dim, kInvalidArgument, "'{}' must be {}-D, got shape {}", what, dim, shape_str(t));
  return Status();
}

Status check_same_dtype(const TensorImpl& a, const char* a_name, const TensorImpl& b, const char* b_name) {
  AOTIRT_ENSURE(a.dtype() == b.dtype(), kInvalidArgument,
                "'{}' is {} but '{}' is {}; they must have the same dtype", a_name, dtype_name(a.dtype()),
                b_name, dtype_name(b.dtype()));
  return Status();
}

Status check_float_dtype(DType dtype, const char* what) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBFloat16:
    case DType::kFloat16: return Status();
    default:
      return AOTIRT_STATUS(kUnimplemented,
                           "'{}' has dtype {}; only float32, float64, bfloat16 and float16 are supported",
                           what, dtype_name(dtype));
  }
}

}  // namespace ops
}  // namespace aotirt
