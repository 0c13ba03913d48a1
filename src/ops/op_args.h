// The device-neutral op layer's argument checks: resolving handles, ranks,
// dtypes and shapes, with messages that name the offending tensors (the shim
// wrapper prefixes the op's name). Every backend's ops use these, so a rule
// is written once; device checks stay with each backend.
#pragma once

#include <cstdint>
#include <string>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// "[2, 3]" for |t|'s sizes.
std::string shape_str(const TensorImpl& t);
// "sizes [2, 3] strides [3, 1]".
std::string layout_str(const TensorImpl& t);

// Resolves a required handle; INVALID_ARGUMENT naming |what| when null.
Result<const TensorImpl*> require_tensor(AtenTensorHandle h, const char* what);
// Resolves an optional tensor argument (AtenTensorHandle* that may be null or
// point to null); returns null when absent.
const TensorImpl* optional_tensor(AtenTensorHandle* h);

// Fails unless |t| has |dim| dimensions.
Status check_dim(const TensorImpl& t, int64_t dim, const char* what);
// Fails unless |a| and |b| share a dtype.
Status check_same_dtype(const TensorImpl& a, const char* a_name, const TensorImpl& b, const char* b_name);
// Fails (UNIMPLEMENTED) unless |dtype| is float32, float64, bfloat16 or float16.
Status check_float_dtype(DType dtype, const char* what);

}  // namespace ops
}  // namespace aotirt
