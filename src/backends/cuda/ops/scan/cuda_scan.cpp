// CUDA scans along one dimension: cumsum, cumprod, logcumsumexp, cummax and
// cummin (c_shim_cuda.h). The op layer (src/ops/scan_args) checks the
// arguments and gives the output dtype and the [outer, length, inner] walk;
// here the input is made contiguous in the dtype the kernels scan, the
// kernels (cuda_scan.cu) run, and the result is converted back where that
// dtype differs from the output's. Narrow integer and bool dtypes scan in
// int64, which gives the same wrapped sums and products, and the same
// extremes, as scanning in the narrow type; few lines along a strided
// dimension are transposed so the dimension is innermost.
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/scan/cuda_scan_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/scan_args.h"
#include "shim/abi/cuda_scan_sort.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// The dtype the kernels scan |out_dtype| in.
DType kernel_dtype(DType out_dtype) {
  switch (out_dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt64: return out_dtype;
    default: return DType::kInt64;
  }
}

CudaScanOp kernel_op(ops::ScanKind kind) {
  switch (kind) {
    case ops::ScanKind::kSum: return CudaScanOp::kSum;
    case ops::ScanKind::kProd: return CudaScanOp::kProd;
    case ops::ScanKind::kLogSumExp: return CudaScanOp::kLogSumExp;
    case ops::ScanKind::kMax: return CudaScanOp::kMax;
    case ops::ScanKind::kMin: return CudaScanOp::kMin;
  }
  return CudaScanOp::kSum;
}

// A view of contiguous |t| as [outer, length, inner], or of a contiguous
// [outer, inner, length] tensor |t| in that same order (transposed).
TensorImpl as_walk(const TensorImpl& t, const ops::ScanArgs& a, bool transposed) {
  DimVector sizes{a.outer, a.length, a.inner};
  DimVector strides = transposed ? DimVector{a.inner * a.length, 1, a.length} : DimVector{a.length * a.inner, a.inner, 1};
  return TensorImpl(t.storage(), t.dtype(), sizes, strides, t.storage_offset());
}

struct ScanResult {
  TensorImpl values, indices;
};

Result<ScanResult> run_scan(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype) {
  AOTIRT_ASSIGN_OR_RETURN(ops::ScanArgs a, ops::scan_args(kind, self, dim, dtype));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const bool extreme = kind == ops::ScanKind::kMax || kind == ops::ScanKind::kMin;
  ScanResult r;
  AOTIRT_ASSIGN_OR_RETURN(r.values, cuda_empty_contiguous(a.self->sizes(), a.out_dtype, device));
  if (extreme) {
    AOTIRT_ASSIGN_OR_RETURN(r.indices, cuda_empty_contiguous(a.self->sizes(), DType::kInt64, device));
  }
  if (r.values.numel() == 0) return r;

  const DType kd = kernel_dtype(a.out_dtype);
  const CudaScanShape natural{a.outer, a.length, a.inner};
  const bool transpose = a.inner > 1 && !cuda_scan_per_thread(natural);
  const CudaScanShape shape = transpose ? CudaScanShape{a.outer * a.inner, a.length, 1} : natural;

  // The kernels' input: contiguous, in kd, in the walk's order.
  TensorImpl in;
  if (!transpose && a.self->dtype() == kd && a.self->is_contiguous()) {
    in = *a.self;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(in, cuda_empty_contiguous(transpose ? DimVector{a.outer, a.inner, a.length}
                                                                : a.self->sizes(),
                                                      kd, device));
    if (transpose) {
      // Two steps: the input's own layout may not fold into [outer, length,
      // inner] as a view.
      TensorImpl dense = *a.self;
      if (!a.self->is_contiguous()) {
        AOTIRT_ASSIGN_OR_RETURN(dense, cuda_empty_contiguous(a.self->sizes(), a.self->dtype(), device));
        AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, dense, *a.self, false));
      }
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, as_walk(in, a, true), as_walk(dense, a, false), false));
    } else {
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, in, *a.self, false));
    }
  }
  // The kernels' outputs: the results themselves when nothing is left to do.
  const bool direct = !transpose && kd == a.out_dtype;
  TensorImpl out = r.values, idx = r.indices;
  if (!direct) {
    AOTIRT_ASSIGN_OR_RETURN(out, cuda_empty_contiguous(in.sizes(), kd, device));
    if (extreme && transpose) {
      AOTIRT_ASSIGN_OR_RETURN(idx, cuda_empty_contiguous(in.sizes(), DType::kInt64, device));
    }
  }
  const CudaScanOp op = kernel_op(kind);
  size_t bytes = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_scan_temp_bytes(op, static_cast<int>(kd), shape, &bytes));
  TensorImpl hold;
  void* temp = nullptr;
  if (bytes > 0) {
    AOTIRT_ASSIGN_OR_RETURN(temp, cuda_op_workspace(device, stream, bytes, &hold));
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scan(op, static_cast<int>(kd), in.data_ptr(), out.data_ptr(),
                                               extreme ? static_cast<int64_t*>(idx.data_ptr()) : nullptr, shape,
                                               temp, bytes, stream));
  if (!direct) {
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, as_walk(r.values, a, false), as_walk(out, a, transpose), false));
    if (extreme && transpose)
      AOTIRT_RETURN_IF_ERROR(
          cuda_copy(device, stream, as_walk(r.indices, a, false), as_walk(idx, a, true), false));
  }
  return r;
}

Status scan_to(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, const int32_t* dtype, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ScanResult r, run_scan(kind, self, dim, dtype));
  *ret = new_handle(std::move(r.values));
  return Status();
}

Status scan_extreme(ops::ScanKind kind, AtenTensorHandle self, int64_t dim, AtenTensorHandle* values,
                    AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  AOTIRT_ASSIGN_OR_RETURN(ScanResult r, run_scan(kind, self, dim, nullptr));
  std::unique_ptr<TensorImpl> v(new TensorImpl(std::move(r.values)));
  std::unique_ptr<TensorImpl> i(new TensorImpl(std::move(r.indices)));
  *values = handle_of(v.release());
  *indices = handle_of(i.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kSum, self, dim, dtype, ret0); });
}

AOTITorchError aoti_torch_cuda_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kProd, self, dim, dtype, ret0); });
}

AOTITorchError aoti_torch_cuda_logcumsumexp(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return scan_to(ops::ScanKind::kLogSumExp, self, dim, nullptr, ret0); });
}

AOTITorchError aoti_torch_cuda_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                      AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] { return scan_extreme(ops::ScanKind::kMax, self, dim, ret0, ret1); });
}

AOTITorchError aoti_torch_cuda_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                                      AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] { return scan_extreme(ops::ScanKind::kMin, self, dim, ret0, ret1); });
}

}  // extern "C"
