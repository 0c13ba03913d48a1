// The device-neutral rules of the tensor-structure ops, as torch's meta
// functions give them: views (permute, reshape, narrow, slice, squeeze,
// view_as_real/complex, view.dtype) are pure metadata over the input's
// storage; cat and pad compute their output's dtype, sizes and strides here
// and fill it with the device's own copy and zero (device/device.h), so one
// implementation serves every backend without naming any.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {
// Nested so that these general names (promote_types, pad, full, ...) never
// collide with another op family's helpers of the same name.
namespace tensor_ops {

// Wraps |dim| into [0, rank) (a 0-d tensor accepts -1 and 0 when
// |scalar_ok|); INVALID_ARGUMENT naming the range otherwise.
Result<int64_t> wrap_dim(int64_t dim, int64_t rank, bool scalar_ok = true);

// torch.promote_types; UNIMPLEMENTED for the pairs torch refuses too
// (uint16/32/64 with another type, float8 with another type).
Result<DType> promote_types(DType a, DType b);

// c10's checked Scalar conversion: INVALID_ARGUMENT when |value| overflows
// |dtype| (NaN or infinity into an integer, a finite value past a floating
// type's range; bool takes anything). |saturate_half| lets float16 and
// bfloat16 round to infinity instead, as torch.full does.
Status check_scalar_fits(double value, DType dtype, bool saturate_half);

// c10 memory format codes (aoti_torch_memory_format_*).
enum class MemoryFormat : int32_t { kContiguous = 0, kPreserve = 1, kChannelsLast = 2, kChannelsLast3d = 3 };
// c10's suggest_memory_format: channels-last for 4-d / 5-d tensors laid out
// so, else contiguous.
MemoryFormat suggest_memory_format(const TensorImpl& t);
// Strides of a fresh tensor of |sizes| in |format| (contiguous or a
// channels-last one of matching rank).
Result<DimVector> strides_for_format(const DimVector& sizes, MemoryFormat format);

// ---- views: share |self|'s storage ----
Result<TensorImpl> permute_view(const TensorImpl& self, const int64_t* dims, int64_t n);
Result<TensorImpl> narrow_view(const TensorImpl& self, int64_t dim, int64_t start, int64_t length);
Result<TensorImpl> slice_view(const TensorImpl& self, int64_t dim, const int64_t* start, const int64_t* end,
                              int64_t step);
Result<TensorImpl> squeeze_dim_view(const TensorImpl& self, int64_t dim);
Result<TensorImpl> view_as_real(const TensorImpl& self);
Result<TensorImpl> view_as_complex(const TensorImpl& self);
Result<TensorImpl> view_dtype(const TensorImpl& self, int32_t dtype);

// Fills in a -1 of |shape| from |numel| (at::infer_size).
Result<DimVector> infer_size(const int64_t* shape, int64_t n, int64_t numel);
// Strides that view |sizes|/|strides| as |new_sizes| without a copy, or
// nullopt when no such strides exist (at::detail::computeStride).
std::optional<DimVector> view_strides(const DimVector& sizes, const DimVector& strides,
                                      const DimVector& new_sizes);
// reshape: a view when view_strides allows one, else a contiguous copy made
// on |self|'s device.
Result<TensorImpl> reshape(const TensorImpl& self, const int64_t* shape, int64_t n);

// ---- new tensors on any device, through the device registry ----
// A tensor of |sizes| on |id| whose every element is |value| converted to
// |dtype| (as a c10 Scalar(double) would be).
Result<TensorImpl> full(const DimVector& sizes, double value, DType dtype, DeviceId id);
// Sets every element of |t| to |value| with the device's own copy.
Status fill(const TensorImpl& t, double value);
// Zeros |t| with the device's own zero.
Status zero(const TensorImpl& t);

// Factory arguments (dtype, layout, device, pin_memory) of the *_empty,
// *_zeros, full, window ops. Null pointers take |dtype_default| and
// |device_default|.
struct FactoryOptions {
  DType dtype = DType::kFloat32;
  DeviceId device;
};
Result<FactoryOptions> factory_options(const int32_t* dtype, const int32_t* layout, const int32_t* device,
                                       int32_t device_index, DType dtype_default, DeviceId device_default);
// Reads |n| sizes (each >= 0).
Result<DimVector> read_sizes(const int64_t* sizes, int64_t n, const char* what);

// ---- ops that make a new tensor on their input's device ----
// cat's output (dtype, sizes, strides, device) and the inputs that fill it.
struct CatPlan {
  std::vector<const TensorImpl*> inputs;  // in order, legacy empty [0] ones left out
  int64_t dim = 0;                         // wrapped
  DType dtype = DType::kFloat32;
  DeviceId device;
  DimVector sizes, strides;
};
Result<CatPlan> cat_plan(const AtenTensorHandle* tensors, int64_t n, int64_t dim);
// Copies the plan's inputs into |out| (allocated from the plan) with the
// device's copy.
Status cat_copy(const CatPlan& plan, const TensorImpl& out);
Result<TensorImpl> cat(const AtenTensorHandle* tensors, int64_t n, int64_t dim);
Result<TensorImpl> pad(const TensorImpl& self, const int64_t* pad, int64_t n, const char* mode,
                       const double* value);

// ---- in place ----
// resize_ (memory_format may be null) and resize_as_: sizes change in
// place; the storage grows, keeping its bytes, when it is too small.
Status resize_(TensorImpl& self, const DimVector& sizes, const int32_t* memory_format);
Status resize_as_(TensorImpl& self, const TensorImpl& the_template, const int32_t* memory_format);

}  // namespace tensor_ops
}  // namespace ops
}  // namespace aotirt
