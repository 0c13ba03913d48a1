// The device-neutral rules of the scans along one dimension (cumsum,
// cumprod, logcumsumexp, cummax, cummin), as torch's meta functions give
// them: the dimension wrapped (a 0-d tensor scans as one element), the
// output dtype (cumsum and cumprod of an integral or bool input give int64
// unless a dtype is passed; the others keep the input's), contiguous
// outputs of the input's sizes, and the [outer, length, inner] walk every
// backend makes over them.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

enum class ScanKind { kSum, kProd, kLogSumExp, kMax, kMin };

struct ScanArgs {
  const TensorImpl* self = nullptr;
  ScanKind kind = ScanKind::kSum;
  int64_t dim = 0;        // wrapped; 0 for a 0-d input
  DType out_dtype = DType::kFloat32;
  // The output (contiguous, the input's sizes) as [outer, length, inner].
  int64_t outer = 1, length = 1, inner = 1;
};

// Checks a scan's arguments. |dtype| is cumsum's and cumprod's optional
// dtype (null: torch's default). UNIMPLEMENTED for dtypes no backend scans
// (complex, float8, the unsigned types past uint8), naming the op's input.
Result<ScanArgs> scan_args(ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype);

}  // namespace ops
}  // namespace aotirt
