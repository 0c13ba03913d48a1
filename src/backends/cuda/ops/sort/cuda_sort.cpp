// CUDA sort, sort.stable and topk (c_shim_cuda.h). The op layer
// (src/ops/sort_args) checks the arguments and gives the output layouts;
// here the input is viewed with the sorted dimension innermost (copied so
// only when that view is not contiguous), every line is ordered on the
// device (cuda_sort.cu), and the first k of each line are written to the
// outputs (through a contiguous copy only when their view is not). Every sort here is stable, so
// sort.stable needs nothing more; topk may narrow lines by a radix select
// first, so its equal values come in no promised index order (nor do
// torch's).
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/sort/cuda_sort_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/sort_args.h"
#include "shim/abi/cuda_scan_sort.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// |t| (sizes |sizes|, strides |strides|) viewed with dimension |dim| moved
// last; a 0-d tensor as one element.
TensorImpl dim_last(const TensorImpl& t, const DimVector& sizes, const DimVector& strides, int64_t dim) {
  DimVector s, st;
  if (sizes.size() == 0) {
    s = DimVector{1};
    st = DimVector{1};
  } else {
    for (int64_t d = 0; d < sizes.size(); ++d) {
      if (d == dim) continue;
      s.resize(s.size() + 1);
      st.resize(st.size() + 1);
      s[s.size() - 1] = sizes[d];
      st[st.size() - 1] = strides[d];
    }
    s.resize(s.size() + 1);
    st.resize(st.size() + 1);
    s[s.size() - 1] = sizes[dim];
    st[st.size() - 1] = strides[dim];
  }
  return TensorImpl(t.storage(), t.dtype(), s, st, t.storage_offset());
}

// Whether |t| (a view with the sorted dimension last) is [lines, n]
// contiguous in memory.
bool lines_contiguous(const TensorImpl& t) { return t.is_contiguous(); }

// |select|: topk, which only wants each line's first k in order and lets
// the device narrow lines to k before sorting (cuda_sort_kernels.h).
Status order(const ops::SortArgs& a, bool select, AtenTensorHandle* values, AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  const TensorImpl& self = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, cuda_empty(a.out_sizes, a.out_strides, self.dtype(), device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, cuda_empty(a.out_sizes, a.out_strides, DType::kInt64, device));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[a.dim];
  if (vals.numel() > 0 && n > 0 && a.k > 0) {
    AOTIRT_ENSURE(n <= kCudaSortMaxLine, kUnimplemented,
                  "{}: dimension {} has {} elements; aotirt's CUDA sort takes up to {} along the sorted dimension",
                  select ? "topk" : "sort", a.dim, n, kCudaSortMaxLine);
    // The input is read in place when its lines are already contiguous,
    // and the outputs are written in place when theirs are; otherwise
    // through a contiguous copy.
    const TensorImpl in_view = dim_last(self, self.sizes(), self.strides(), a.dim);
    TensorImpl dense = in_view;
    if (!lines_contiguous(in_view)) {
      AOTIRT_ASSIGN_OR_RETURN(dense, cuda_empty_contiguous(in_view.sizes(), self.dtype(), device));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, dense, in_view, false));
    }
    CudaSortShape s;
    s.n = n;
    s.lines = dense.numel() / n;
    s.k = a.k;
    s.dtype = static_cast<int>(self.dtype());
    s.descending = a.descending;
    s.select = select;
    const TensorImpl vals_view = dim_last(vals, a.out_sizes, a.out_strides, a.dim);
    const TensorImpl idx_view = dim_last(idx, a.out_sizes, a.out_strides, a.dim);
    const bool direct = lines_contiguous(vals_view) && lines_contiguous(idx_view);
    TensorImpl picked = vals_view, picked_idx = idx_view;
    if (!direct) {
      AOTIRT_ASSIGN_OR_RETURN(picked, cuda_empty_contiguous(vals_view.sizes(), self.dtype(), device));
      AOTIRT_ASSIGN_OR_RETURN(picked_idx, cuda_empty_contiguous(vals_view.sizes(), DType::kInt64, device));
    }
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_sort_temp_bytes(s, &bytes));
    // Scratch of the sort's own (keys, positions, CUB's), freed with the op
    // rather than kept in the shared workspace: it grows with the input.
    TensorImpl scratch;
    void* temp = nullptr;
    if (bytes > 0) {
      AOTIRT_ASSIGN_OR_RETURN(scratch, cuda_empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8,
                                                             device));
      temp = scratch.data_ptr();
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_sort(s, dense.data_ptr(), picked.data_ptr(),
                                                 static_cast<int64_t*>(picked_idx.data_ptr()), temp, bytes, stream));
    if (!direct) {
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, vals_view, picked, false));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, idx_view, picked_idx, false));
    }
  }
  std::unique_ptr<TensorImpl> v(new TensorImpl(std::move(vals)));
  std::unique_ptr<TensorImpl> i(new TensorImpl(std::move(idx)));
  *values = handle_of(v.release());
  *indices = handle_of(i.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_sort(AtenTensorHandle self, int64_t dim, int32_t descending, AtenTensorHandle* ret0,
                                    AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::sort_args(self, dim, descending != 0));
    return order(a, false, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim, int32_t descending,
                                           AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  (void)stable;  // every sort here is stable
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::sort_args(self, dim, descending != 0));
    return order(a, false, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest, int32_t sorted,
                                    AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  (void)sorted;  // the k values always come out in order, which sorted=False allows
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::topk_args(self, k, dim, largest != 0));
    return order(a, true, ret0, ret1);
  });
}

}  // extern "C"
