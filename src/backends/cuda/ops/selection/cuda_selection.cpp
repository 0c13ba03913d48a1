// CUDA searchsorted (Tensor and Scalar), bucketize, histc, repeat_interleave
// and segment_reduce (c_shim_cuda.h), and the device-generic
// repeat_interleave's CUDA side. The op layer (src/ops/selection_args)
// checks the arguments and gives shapes and dtypes; here inputs are brought
// into the layout and dtype the kernels (cuda_selection.cu) read, and the
// kernels run on the op's stream. The stream is synchronised only where the
// host must know a value first: histc's range when taken from the data,
// repeat_interleave's output length when not given, and segment_reduce's
// data-dependent checks when not unsafe (torch reads those back as well).
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/selection/cuda_selection_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/op_args.h"
#include "ops/selection_args.h"
#include "shim/abi/cuda_selection.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// |t| (on |device|) as a contiguous tensor of |dtype|: |t| itself when it is
// one already, else a converted copy queued on |stream|.
Result<TensorImpl> contiguous_as(const TensorImpl& t, DType dtype, int device, cudaStream_t stream) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(t.sizes(), dtype, device));
  if (c.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, c, t, false));
  return c;
}

// Device scratch of |bytes| for one CUB call, held by |hold|.
Result<void*> scratch(int device, cudaStream_t stream, size_t bytes, TensorImpl* hold) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  return cuda_op_workspace(device, stream, bytes, hold);
}

// Copies |n| elements of |dtype| at element |offset| of device tensor |t|
// to |host| (which must hold them). Waits for the stream: the caller needs
// the values on the host now.
Status read_back(int device, cudaStream_t stream, const TensorImpl& t, int64_t offset, int64_t n, void* host) {
  TensorImpl view(t.storage(), t.dtype(), DimVector{n}, DimVector{1}, t.storage_offset() + offset);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl h, empty_contiguous(DimVector{n}, t.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, h, view, false));
  std::memcpy(host, h.data_ptr(), static_cast<size_t>(n) * dtype_size(t.dtype()));
  return Status();
}

// ---- searchsorted / bucketize ----

// |t| rounded to |compare| (the dtype torch compares in), then widened
// exactly to |key| (float64 or int64) and made contiguous.
Result<TensorImpl> as_keys(const TensorImpl& t, DType compare, DType key, int device, cudaStream_t stream) {
  TensorImpl cur = t;
  if (cur.dtype() != compare) {
    AOTIRT_ASSIGN_OR_RETURN(cur, contiguous_as(cur, compare, device, stream));
  }
  return contiguous_as(cur, key, device, stream);
}

Status run_search(const ops::SearchArgs& a, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.boundaries, "sorted_sequence"));
  if (a.values) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.values, "self"));
  if (a.sorter) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.sorter, "sorter"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, a.out_dtype, device));
  if (out.numel() > 0) {
    const bool int_keys = !is_floating(a.compare_dtype);
    const DType key = int_keys ? DType::kInt64 : DType::kFloat64;
    TensorImpl bounds;
    if (a.boundaries->numel() > 0) {
      AOTIRT_ASSIGN_OR_RETURN(bounds, as_keys(*a.boundaries, a.compare_dtype, key, device, stream));
    }
    TensorImpl values;
    if (a.values) {
      AOTIRT_ASSIGN_OR_RETURN(values, as_keys(*a.values, a.compare_dtype, key, device, stream));
    } else {
      // The scalar rounded to the compare dtype (always floating here), as
      // torch's conversion of the wrapped number does, then uploaded.
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl h, empty_contiguous(DimVector{}, a.compare_dtype, DeviceId{}));
      store_from_double(h.data_ptr(), a.compare_dtype, a.scalar);
      const double rounded = load_as_double(h.data_ptr(), a.compare_dtype);
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl hk, empty_contiguous(DimVector{}, DType::kFloat64, DeviceId{}));
      std::memcpy(hk.data_ptr(), &rounded, sizeof(double));
      AOTIRT_ASSIGN_OR_RETURN(values, cuda_empty_contiguous(DimVector{}, DType::kFloat64, device));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, values, hk, false));
    }
    TensorImpl sorter;
    if (a.sorter && a.sorter->numel() > 0) {
      AOTIRT_ASSIGN_OR_RETURN(sorter, contiguous_as(*a.sorter, DType::kInt64, device, stream));
    }
    CudaSearchShape s;
    s.n = out.numel();
    s.rows = a.rows;
    s.length = a.length;
    s.values_per_row = a.values && a.values->dim() > 0 ? a.values->sizes()[a.values->dim() - 1] : 1;
    s.right = a.right;
    s.out_int32 = a.out_dtype == DType::kInt32;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_search(
        int_keys, bounds.numel() > 0 ? bounds.data_ptr() : nullptr, values.data_ptr(),
        a.sorter && sorter.numel() > 0 ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr, out.data_ptr(), s,
        stream));
  }
  *ret = new_handle(std::move(out));
  return Status();
}

// ---- histc ----

// |v| rounded to |dtype| (float32 or float64), as torch's CUDA histc holds
// its edges.
double round_to(DType dtype, double v) {
  return dtype == DType::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v;
}

Status histc(AtenTensorHandle self, int64_t bins, double min, double max, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::HistArgs a, ops::histc_args(self, bins, min, max));
  const DType dt = a.self->dtype();
  // torch's CUDA histc refuses float16 outright and has no bfloat16 kernel.
  AOTIRT_ENSURE(dt != DType::kFloat16, kUnimplemented, "'self' has dtype float16: HalfTensor is not supported");
  AOTIRT_ENSURE(dt == DType::kFloat32 || dt == DType::kFloat64, kUnimplemented,
                "'self' has dtype {}; histc on CUDA takes float32 and float64 (torch's CUDA kernel has no {})",
                dtype_name(dt), dtype_name(dt));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{bins}, dt, device));
  AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, out));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, dt, device, stream));
  const int64_t n = in.numel();
  const int kd = static_cast<int>(dt);
  // The edges in the input's dtype; equal ones mean the data's extremes.
  double lo = round_to(dt, a.range[0]), hi = round_to(dt, a.range[1]);
  if (lo == hi && n > 0) {
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_minmax_temp_bytes(kd, n, &bytes));
    TensorImpl hold;
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, stream, bytes, &hold));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl ext, cuda_empty_contiguous(DimVector{2}, DType::kFloat64, device));
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_minmax(kd, in.data_ptr(), n, static_cast<double*>(ext.data_ptr()), temp, bytes, stream));
    // Synchronises: the range must be known (and checked) on the host
    // before the bins can be placed, as in torch's kernel.
    double lo_hi[2];
    AOTIRT_RETURN_IF_ERROR(read_back(device, stream, ext, 0, 2, lo_hi));
    lo = lo_hi[0];
    hi = lo_hi[1];
  }
  if (lo == hi) {
    lo = round_to(dt, lo - 1);
    hi = round_to(dt, hi + 1);
  }
  AOTIRT_RETURN_IF_ERROR(ops::histc_finish_edges(&lo, &hi));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_histc(kd, in.data_ptr(), n, bins, lo, hi, out.data_ptr(), stream));
  *ret = new_handle(std::move(out));
  return Status();
}

// ---- repeat_interleave ----

Status repeat_interleave(AtenTensorHandle repeats, const int64_t* output_size, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* r, ops::repeat_interleave_args(repeats, output_size));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*r, "repeats"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const int64_t n = r->sizes()[0];
  if (n == 0) {
    // torch returns an empty tensor here whatever output_size says.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{0}, r->dtype(), device));
    *ret = new_handle(std::move(out));
    return Status();
  }
  // The inclusive sums, and after them the smallest repeat.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl sums, cuda_empty_contiguous(DimVector{n + 1}, DType::kInt64, device));
  int64_t* cumsum = static_cast<int64_t*>(sums.data_ptr());
  size_t bytes = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_repeat_temp_bytes(static_cast<int>(r->dtype()), n, &bytes));
  TensorImpl hold;
  AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, stream, bytes, &hold));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_repeat_scan(static_cast<int>(r->dtype()), r->data_ptr(), r->strides()[0], n,
                                                      cumsum, output_size ? nullptr : cumsum + n, temp, bytes,
                                                      stream));
  int64_t total = 0;
  if (output_size) {
    // Trusted without a look at the repeats, as torch does: no sync.
    total = *output_size;
  } else {
    // Synchronises: the output's length is the repeats' sum, a device value
    // the host must know to allocate the output.
    int64_t last_and_min[2];
    AOTIRT_RETURN_IF_ERROR(read_back(device, stream, sums, n - 1, 2, last_and_min));
    AOTIRT_ENSURE(last_and_min[1] >= 0, kInvalidArgument, "repeats can not be negative (got {})", last_and_min[1]);
    total = last_and_min[0];
    AOTIRT_ENSURE(total >= 0, kInvalidArgument, "the repeats overflow int64");
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{total}, r->dtype(), device));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_launch_repeat_expand(static_cast<int>(r->dtype()), cumsum, n, out.data_ptr(), total, stream));
  *ret = new_handle(std::move(out));
  return Status();
}

// ---- segment_reduce ----

CudaSegmentOp segment_op(ops::SegmentReduce r) {
  switch (r) {
    case ops::SegmentReduce::kMax: return CudaSegmentOp::kMax;
    case ops::SegmentReduce::kMin: return CudaSegmentOp::kMin;
    case ops::SegmentReduce::kMean: return CudaSegmentOp::kMean;
    case ops::SegmentReduce::kProd: return CudaSegmentOp::kProd;
    case ops::SegmentReduce::kSum: break;
  }
  return CudaSegmentOp::kSum;
}

Status segment_reduce(const ops::SegmentArgs& a, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  const TensorImpl* seg = a.lengths ? a.lengths : a.offsets;
  const char* seg_name = a.lengths ? "lengths" : "offsets";
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.data, "data"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*seg, seg_name));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dt = a.data->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dt, device));
  CudaSegmentShape s;
  s.outer = a.outer;
  s.axis_size = a.axis_size;
  s.inner = a.inner;
  s.segments = a.segments;
  s.offsets = a.offsets != nullptr;
  s.op = segment_op(a.reduce);
  s.has_initial = a.has_initial;
  s.initial = a.initial;
  const int64_t lines = a.outer * a.segments;
  if (lines == 0) {
    // No segment to look at; a row of no lengths still has to cover the axis.
    AOTIRT_ENSURE(a.unsafe || !a.lengths || a.outer == 0 || a.axis_size == 0, kInvalidArgument,
                  "expected all rows of lengths along axis to sum to data.size({}) = {} when !unsafe, but they sum "
                  "to 0",
                  a.axis, a.axis_size);
    *ret = new_handle(std::move(out));
    return Status();
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl segc, contiguous_as(*seg, seg->dtype(), device, stream));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl bounds, cuda_empty_contiguous(DimVector{2, lines}, DType::kInt64, device));
  int64_t* starts = static_cast<int64_t*>(bounds.data_ptr());
  int64_t* ends = starts + lines;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl flags, cuda_empty_contiguous(DimVector{1}, DType::kInt32, device));
  AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, flags));
  {
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_segment_plan_temp_bytes(static_cast<int>(seg->dtype()), s, &bytes));
    TensorImpl hold;
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, stream, bytes, &hold));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_segment_plan(static_cast<int>(seg->dtype()), segc.data_ptr(), s, starts,
                                                         ends, static_cast<int*>(flags.data_ptr()), temp, bytes,
                                                         stream));
  }
  if (!a.unsafe) {
    // Synchronises: the checks torch makes when !unsafe read the lengths'
    // values on the host. With unsafe the plan has clipped every segment to
    // the data, so nothing is read outside it.
    int32_t fault = 0;
    AOTIRT_RETURN_IF_ERROR(read_back(device, stream, flags, 0, 1, &fault));
    AOTIRT_ENSURE(!(fault & kSegNegativeLength), kInvalidArgument, "lengths contains negative value");
    AOTIRT_ENSURE(!(fault & kSegRowSumMismatch), kInvalidArgument,
                  "expected all rows of lengths along axis to sum to data.size({}) = {} when !unsafe", a.axis,
                  a.axis_size);
    AOTIRT_ENSURE(!(fault & kSegDecreasing), kInvalidArgument, "offsets must not decrease (segment_length >= 0)");
    AOTIRT_ENSURE(!(fault & kSegPastEnd), kInvalidArgument, "{} reach outside data.size({}) = {}", seg_name, a.axis,
                  a.axis_size);
  }
  if (out.numel() > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.data, dt, device, stream));
    // torch reduces 1-D data with CUB's segmented reduction, the rest with
    // one thread per output element; so does this, for the same sums.
    const bool one_dim = a.data->dim() == 1;
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_segment_reduce_temp_bytes(static_cast<int>(dt), s, one_dim, &bytes));
    TensorImpl hold;
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, stream, bytes, &hold));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_segment_reduce(static_cast<int>(dt), in.data_ptr(), starts, ends,
                                                           out.data_ptr(), s, one_dim, temp, bytes, stream));
  }
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_searchsorted_Tensor(AtenTensorHandle sorted_sequence, AtenTensorHandle self,
                                                   int32_t out_int32, int32_t right, const char** side,
                                                   AtenTensorHandle* sorter, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(self != nullptr, kInvalidArgument, "'self' is a null tensor handle");
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::searchsorted_args(sorted_sequence, self, 0.0, out_int32 != 0,
                                                                     right != 0, side, sorter));
    return run_search(a, ret0);
  });
}

AOTITorchError aoti_torch_cuda_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self, int32_t out_int32,
                                                   int32_t right, const char** side, AtenTensorHandle* sorter,
                                                   AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::searchsorted_args(sorted_sequence, nullptr, self, out_int32 != 0,
                                                                     right != 0, side, sorter));
    return run_search(a, ret0);
  });
}

AOTITorchError aoti_torch_cuda_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                int32_t out_int32, int32_t right, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::bucketize_args(self, boundaries, out_int32 != 0, right != 0));
    return run_search(a, ret0);
  });
}

AOTITorchError aoti_torch_cuda_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return histc(self, bins, min, max, ret0); });
}

AOTITorchError aoti_torch_cuda_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                        AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return repeat_interleave(repeats, output_size, ret0); });
}

AOTITorchError aoti_torch_cuda_segment_reduce(AtenTensorHandle data, const char* reduce, AtenTensorHandle* lengths,
                                              AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis,
                                              int32_t unsafe, double* initial, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SegmentArgs a, ops::segment_reduce_args(data, reduce, lengths, indices, offsets, axis,
                                                                        unsafe != 0, initial));
    return segment_reduce(a, ret0);
  });
}

}  // extern "C"
