// Getters over a handle. Sizes and strides are returned as borrowed pointers
// into the TensorImpl, valid for the handle's life.
#include "shim/common/shim_util.h"

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->data_ptr();
    return Status();
  });
}

AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->storage() ? static_cast<int64_t>(t->storage()->nbytes()) : 0;
    return Status();
  });
}

AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->storage() ? static_cast<int64_t>(t->storage()->nbytes() / t->element_size()) : 0;
    return Status();
  });
}

AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->dim();
    return Status();
  });
}

AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->numel();
    return Status();
  });
}

AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->mutable_sizes().data();
    return Status();
  });
}

AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    const int64_t nd = t->dim(), given = d;
    if (d < 0) d += nd;
    AOTIRT_ENSURE(d >= 0 && d < nd, kOutOfRange, "dim {} out of range for a {}-d tensor", given, nd);
    *ret = t->sizes()[d];
    return Status();
  });
}

AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->mutable_strides().data();
    return Status();
  });
}

AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    const int64_t nd = t->dim(), given = d;
    if (d < 0) d += nd;
    AOTIRT_ENSURE(d >= 0 && d < nd, kOutOfRange, "dim {} out of range for a {}-d tensor", given, nd);
    *ret = t->strides()[d];
    return Status();
  });
}

AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = static_cast<int32_t>(t->dtype());
    return Status();
  });
}

AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = static_cast<int32_t>(t->device().type);
    return Status();
  });
}

AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    // PyTorch reports -1 for the CPU's index.
    *ret = t->device().is_cpu() ? -1 : t->device().index;
    return Status();
  });
}

AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    (void)t;
    AOTIRT_REQUIRE_OUT(ret);
    *ret = 0;  // strided: the only layout aotirt creates
    return Status();
  });
}

AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->storage_offset();
    return Status();
  });
}

AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t->is_contiguous();
    return Status();
  });
}

AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret);
    *ret = tensor != nullptr && impl_of(tensor)->defined();
    return Status();
  });
}

}  // extern "C"
