// CUDA tensor-structure shims (c_shim_cuda.h): views, reshape, cat, pad,
// resize and the zero tensor. The op layer (src/ops/tensor_args) holds every
// rule and moves data with the device's own copy and zero, so these only
// check that the tensors are CUDA tensors and hand back new handles, the
// same as the CPU's (backends/cpu/ops/cpu_tensor.cpp).
#include <utility>

#include "base/status.h"
#include "device/device.h"
#include "ops/op_args.h"
#include "ops/tensor_args.h"
#include "shim/abi/cuda_tensor.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
namespace tops = aotirt::ops::tensor_ops;

namespace {

Status check_cuda(const TensorImpl& t, const char* what) {
  AOTIRT_ENSURE(t.device().type == DeviceType::kCuda, kInvalidArgument, "'{}' is on {}, expected a CUDA tensor", what,
                t.device().to_string());
  return Status();
}

Result<const TensorImpl*> cuda_tensor(AtenTensorHandle h, const char* what) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(h, what));
  AOTIRT_RETURN_IF_ERROR(check_cuda(*t, what));
  return t;
}

// Runs |fn| (a view, or an op making a new tensor) on a CUDA tensor and
// hands back a new handle for its result.
template <class Fn>
Status on_device(AtenTensorHandle self, AtenTensorHandle* ret, Fn&& fn) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, cuda_tensor(self, "self"));
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl v, fn(*t));
  *ret = new_handle(std::move(v));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cuda_permute(AtenTensorHandle self, const int64_t* dims, int64_t dims_len_,
                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::permute_view(t, dims, dims_len_); });
  });
}

AOTITorchError aoti_torch_cuda_reshape(AtenTensorHandle self, const int64_t* shape, int64_t shape_len_,
                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::reshape(t, shape, shape_len_); });
  });
}

AOTITorchError aoti_torch_cuda_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::narrow_view(t, dim, start, length); });
  });
}

AOTITorchError aoti_torch_cuda_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start, int64_t* end,
                                            int64_t step, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::slice_view(t, dim, start, end, step); });
  });
}

AOTITorchError aoti_torch_cuda_squeeze_dim(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::squeeze_dim_view(t, dim); });
  });
}

AOTITorchError aoti_torch_cuda_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::view_as_complex(t); });
  });
}

AOTITorchError aoti_torch_cuda_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::view_as_real(t); });
  });
}

AOTITorchError aoti_torch_cuda_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::view_dtype(t, dtype); });
  });
}

AOTITorchError aoti_torch_cuda_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim,
                                   AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    for (int64_t i = 0; tensors && i < tensors_len_; ++i)
      if (tensors[i]) AOTIRT_RETURN_IF_ERROR(check_cuda(*impl_of(tensors[i]), "tensors"));
    AOTIRT_ASSIGN_OR_RETURN(tops::CatPlan plan, tops::cat_plan(tensors, tensors_len_, dim));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(plan.sizes, plan.strides, plan.dtype, plan.device));
    AOTIRT_RETURN_IF_ERROR(tops::cat_copy(plan, out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cuda_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode,
                                   double* value, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_device(self, ret0, [&](const TensorImpl& t) { return tops::pad(t, pad, pad_len_, mode, value); });
  });
}

AOTITorchError aoti_torch_cuda_resize_(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                       int32_t* memory_format) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_RETURN_IF_ERROR(cuda_tensor(self, "self").status());
    AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len_, "size"));
    return tops::resize_(*impl_of(self), sizes, memory_format);
  });
}

AOTITorchError aoti_torch_cuda_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template,
                                          int32_t* memory_format) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_RETURN_IF_ERROR(cuda_tensor(self, "self").status());
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* tmpl, ops::require_tensor(the_template, "the_template"));
    return tops::resize_as_(*impl_of(self), *tmpl, memory_format);
  });
}

AOTITorchError aoti_torch_cuda__efficientzerotensor(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                    int32_t* layout, int32_t* device, int32_t device_index_,
                                                    int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  (void)pin_memory;
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len_, "size"));
    AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o,
                            tops::factory_options(dtype, layout, device, device_index_, DType::kFloat32,
                                                  DeviceId{DeviceType::kCuda, device_index_ < 0 ? 0 : device_index_}));
    AOTIRT_ENSURE(o.device.type == DeviceType::kCuda, kInvalidArgument, "a CUDA op was asked for a tensor on {}",
                  o.device.to_string());
    // A real tensor of zeros: torch's storage-less zero tensor is a marker
    // only its own kernels read, and the values are the same.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(sizes, o.dtype, o.device));
    AOTIRT_RETURN_IF_ERROR(tops::zero(out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

}  // extern "C"
