#include "ops/scan_args.h"

#include "base/status.h"
#include "core/dtype.h"
#include "ops/op_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace ops {
namespace {

bool scannable(DType d) {
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

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

}  // namespace

Result<ScanArgs> scan_args(ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype) {
  ScanArgs a;
  a.kind = kind;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  const int64_t rank = t.dim();
  // A 0-d tensor takes dim 0 or -1, as torch's maybe_wrap_dim does.
  const int64_t extent = rank == 0 ? 1 : rank;
  AOTIRT_ENSURE(dim >= -extent && dim < extent, kInvalidArgument,
                "dim {} is out of range for a tensor of shape {} (expected in [{}, {}])", dim, shape_str(t), -extent,
                extent - 1);
  a.dim = dim < 0 ? dim + extent : dim;
  AOTIRT_ENSURE(scannable(t.dtype()), kUnimplemented, "'self' has dtype {}, which aotirt does not scan",
                dtype_name(t.dtype()));
  if (dtype) {
    AOTIRT_ENSURE(kind == ScanKind::kSum || kind == ScanKind::kProd, kInvalidArgument,
                  "this scan takes no dtype argument");
    AOTIRT_ENSURE(dtype_is_valid(*dtype), kInvalidArgument, "invalid dtype code {}", *dtype);
    const DType d = static_cast<DType>(*dtype);
    AOTIRT_ENSURE(scannable(d), kUnimplemented, "dtype {} is not one aotirt scans in", dtype_name(d));
    a.out_dtype = d;
  } else if ((kind == ScanKind::kSum || kind == ScanKind::kProd) && dtype_is_integral(t.dtype())) {
    a.out_dtype = DType::kInt64;
  } else {
    a.out_dtype = t.dtype();
  }
  if (kind == ScanKind::kLogSumExp)
    AOTIRT_ENSURE(is_floating(t.dtype()), kUnimplemented,
                  "logcumsumexp of dtype {}: aotirt computes it for floating dtypes only", dtype_name(t.dtype()));
  for (int64_t i = 0; i < rank; ++i) {
    if (i < a.dim) a.outer *= t.sizes()[i];
    if (i > a.dim) a.inner *= t.sizes()[i];
  }
  a.length = rank == 0 ? 1 : t.sizes()[a.dim];
  return a;
}

}  // namespace ops
}  // namespace aotirt
