// CUDA kthvalue, mode, median and nanmedian (c_shim_cuda.h). The op layer
// (src/ops/selection_args) checks the arguments and gives the output
// layouts; here the input is copied with the reduced dimension innermost
// (flattened for median), every line is ordered by the stable sort
// of cuda_sort.cu, and cuda_kth.cu picks one element per line straight into
// the contiguous outputs.
//
// Which element torch's CUDA kernels report among equal values follows
// their algorithms: kthvalue lets every thread that sees the k-th value
// store its position (a race; aotirt takes the smallest index, which is what
// lands on lines within one warp), mode's fused kernel (lines up to 2048)
// breaks ties in count by its block reduction's order and reports the
// largest index, its path for longer lines the smallest value and index.
// aotirt reports the same (cuda_kth.cu).
#include <limits>
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/sort/cuda_kth_kernels.h"
#include "backends/cuda/ops/sort/cuda_sort_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/selection_args.h"
#include "shim/abi/cuda_kth.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// |t| viewed with dimension |dim| moved last; a 0-d tensor as one element.
TensorImpl dim_last(const TensorImpl& t, int64_t dim) {
  DimVector s, st;
  const int64_t nd = t.dim();
  s.resize(nd == 0 ? 1 : nd);
  st.resize(nd == 0 ? 1 : nd);
  if (nd == 0) {
    s[0] = 1;
    st[0] = 1;
  } else {
    int64_t j = 0;
    for (int64_t d = 0; d < nd; ++d) {
      if (d == dim) continue;
      s[j] = t.sizes()[d];
      st[j] = t.strides()[d];
      ++j;
    }
    s[nd - 1] = t.sizes()[dim];
    st[nd - 1] = t.strides()[dim];
  }
  return TensorImpl(t.storage(), t.dtype(), s, st, t.storage_offset());
}

// Every line of |view| (its last dimension, |n| long) sorted: values and
// positions, each [lines, n] contiguous.
struct Sorted {
  TensorImpl values, positions;
  int64_t lines = 0;
};

Result<Sorted> sort_lines(const CudaOpScope& scope, const TensorImpl& view, int64_t n) {
  const int dev = scope.device();
  cudaStream_t stream = scope.stream();
  const DType dtype = view.dtype();
  // The sort only reads its input, so a contiguous view is sorted in place.
  TensorImpl dense = view;
  if (!view.is_contiguous()) {
    AOTIRT_ASSIGN_OR_RETURN(dense, cuda_empty_contiguous(view.sizes(), dtype, dev));
    AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, dense, view, false));
  }
  Sorted r;
  r.lines = dense.numel() / n;
  CudaSortShape s;
  s.lines = r.lines;
  s.n = n;
  s.k = n;
  s.dtype = static_cast<int>(dtype);
  s.descending = false;
  AOTIRT_ENSURE(n <= kCudaSortMaxLine, kUnimplemented,
                "the line to order has {} elements; aotirt's CUDA sort takes up to {}", n, kCudaSortMaxLine);
  AOTIRT_ASSIGN_OR_RETURN(r.values, cuda_empty_contiguous(DimVector{r.lines, n}, dtype, dev));
  AOTIRT_ASSIGN_OR_RETURN(r.positions, cuda_empty_contiguous(DimVector{r.lines, n}, DType::kInt64, dev));
  size_t bytes = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_sort_temp_bytes(s, &bytes));
  TensorImpl scratch;
  void* temp = nullptr;
  if (bytes > 0) {
    AOTIRT_ASSIGN_OR_RETURN(scratch, cuda_empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8, dev));
    temp = scratch.data_ptr();
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_sort(s, dense.data_ptr(), r.values.data_ptr(),
                                               static_cast<int64_t*>(r.positions.data_ptr()), temp, bytes, stream));
  return r;
}

// Whether torch's mode takes its one-block kernel for |self|: lines up to
// 2048 elements, and fewer than 2^31 - 1 elements with the last one's
// offset below that too (32-bit index math).
bool mode_takes_fused_kernel(const TensorImpl& self, int64_t n) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (n > 2048 || self.numel() >= kMax) return false;
  int64_t offset = 0;
  for (int64_t d = 0; d < self.dim(); ++d) offset += (self.sizes()[d] - 1) * self.strides()[d];
  return offset < kMax;
}

// kthvalue and mode: one value and index per line, in the outputs' order
// (contiguous, the other dimensions in order), which is the lines' order.
Status pick_along(const ops::LineReduceArgs& a, CudaPickOp op, AtenTensorHandle* values, AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  const TensorImpl& self = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  const int dev = scope->device();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, cuda_empty(a.out_sizes, a.out_strides, self.dtype(), dev));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, cuda_empty(a.out_sizes, a.out_strides, DType::kInt64, dev));
  if (vals.numel() > 0) {
    AOTIRT_ASSIGN_OR_RETURN(Sorted sorted, sort_lines(*scope, dim_last(self, a.dim), a.length));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_pick_sorted(op, static_cast<int>(self.dtype()), sorted.values.data_ptr(),
                                                 static_cast<const int64_t*>(sorted.positions.data_ptr()),
                                                 sorted.lines, a.length, a.k,
                                                 op == CudaPickOp::kMode && mode_takes_fused_kernel(self, a.length),
                                                 vals.data_ptr(),
                                                 static_cast<int64_t*>(idx.data_ptr()), scope->stream()));
  }
  std::unique_ptr<TensorImpl> v(new TensorImpl(std::move(vals)));
  std::unique_ptr<TensorImpl> i(new TensorImpl(std::move(idx)));
  *values = handle_of(v.release());
  *indices = handle_of(i.release());
  return Status();
}

// What torch's CUDA median of an empty tensor holds: a float NaN converted to
// the dtype on the host before the upload, so the CPU's conversion: NaN for
// floating dtypes, the most negative value for int32 and int64 (x86's
// "indefinite" result) and 0 for the narrower integers.
Status store_empty_median(const CudaOpScope& scope, const TensorImpl& out) {
  const DType d = out.dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, empty_contiguous(DimVector{}, d, DeviceId{}));
  if (d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64)
    store_from_double(host.data_ptr(), d, std::numeric_limits<double>::quiet_NaN());
  else if (d == DType::kInt64)
    store_from_int64(host.data_ptr(), d, std::numeric_limits<int64_t>::min());
  else if (d == DType::kInt32)
    store_from_int64(host.data_ptr(), d, std::numeric_limits<int32_t>::min());
  else
    store_from_int64(host.data_ptr(), d, 0);
  return cuda_copy(scope.device(), scope.stream(), out, host, false);
}

Status median(AtenTensorHandle self, bool ignore_nan, const char* op, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::median_args(self, op));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*t, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{}, t->dtype(), scope->device()));
  const int64_t n = t->numel();
  if (n == 0) {
    AOTIRT_RETURN_IF_ERROR(store_empty_median(*scope, out));
  } else {
    TensorImpl flat = *t;
    if (!t->is_contiguous()) {
      AOTIRT_ASSIGN_OR_RETURN(flat, cuda_empty_contiguous(t->sizes(), t->dtype(), scope->device()));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(scope->device(), scope->stream(), flat, *t, false));
    }
    const TensorImpl line(flat.storage(), flat.dtype(), DimVector{1, n}, DimVector{n, 1}, flat.storage_offset());
    AOTIRT_ASSIGN_OR_RETURN(Sorted sorted, sort_lines(*scope, line, n));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_pick_sorted(ignore_nan ? CudaPickOp::kNanMedian : CudaPickOp::kMedian,
                                                 static_cast<int>(t->dtype()), sorted.values.data_ptr(),
                                                 static_cast<const int64_t*>(sorted.positions.data_ptr()), 1, n, 1,
                                                 false, out.data_ptr(), nullptr, scope->stream()));
  }
  std::unique_ptr<TensorImpl> o(new TensorImpl(std::move(out)));
  *ret = handle_of(o.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim, int32_t keepdim,
                                        AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::LineReduceArgs a, ops::kthvalue_args(self, k, dim, keepdim != 0));
    return pick_along(a, CudaPickOp::kKth, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim, AtenTensorHandle* ret0,
                                    AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::LineReduceArgs a, ops::mode_args(self, dim, keepdim != 0));
    return pick_along(a, CudaPickOp::kMode, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_median(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return median(self, false, "median", ret0); });
}

AOTITorchError aoti_torch_cuda_nanmedian(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return median(self, true, "nanmedian", ret0); });
}

}  // extern "C"
