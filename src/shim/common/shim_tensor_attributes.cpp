// Getters over a handle. Sizes and strides are returned as borrowed pointers
// into the TensorImpl, valid for the handle's life.
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

// The shape every getter shares: check the handle and the out pointer, then
// store |read(tensor)|.
template <class T, class Read>
AOTITorchError get_attribute(const char* name, AtenTensorHandle tensor, T* ret, Read read) noexcept {
  return shim_call(name, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    *ret = read(*t);
    return Status();
  });
}

// Element |d| (negative counts from the end) of |dims|, for get_size/get_stride.
AOTITorchError get_dim_entry(const char* name, AtenTensorHandle tensor, int64_t d, int64_t* ret,
                             const DimVector& (TensorImpl::*dims)() const) noexcept {
  return shim_call(name, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    AOTIRT_REQUIRE_OUT(ret);
    const int64_t nd = t->dim();
    const int64_t i = d < 0 ? d + nd : d;
    AOTIRT_ENSURE(i >= 0 && i < nd, kOutOfRange, "dim {} out of range for a {}-d tensor", d, nd);
    *ret = (t->*dims)()[i];
    return Status();
  });
}

int64_t storage_nbytes(const TensorImpl& t) {
  return t.storage() ? static_cast<int64_t>(t.storage()->nbytes()) : 0;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return t.data_ptr(); });
}

AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, storage_nbytes);
}

AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) {
    return storage_nbytes(t) / static_cast<int64_t>(t.element_size());
  });
}

AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return t.dim(); });
}

AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return t.numel(); });
}

// The generated code reads sizes and strides through these pointers for the
// handle's whole life, so they point into the TensorImpl itself.
AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret) noexcept {
  return get_attribute(__func__, tensor, ret,
                       [](const TensorImpl& t) { return const_cast<int64_t*>(t.sizes().data()); });
}

AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret) noexcept {
  return get_attribute(__func__, tensor, ret,
                       [](const TensorImpl& t) { return const_cast<int64_t*>(t.strides().data()); });
}

AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret) noexcept {
  return get_dim_entry(__func__, tensor, d, ret, &TensorImpl::sizes);
}

AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret) noexcept {
  return get_dim_entry(__func__, tensor, d, ret, &TensorImpl::strides);
}

AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return static_cast<int32_t>(t.dtype()); });
}

AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret,
                       [](const TensorImpl& t) { return static_cast<int32_t>(t.device().type); });
}

AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret) noexcept {
  // PyTorch reports -1 for the CPU's index.
  return get_attribute(__func__, tensor, ret,
                       [](const TensorImpl& t) { return t.device().is_cpu() ? -1 : t.device().index; });
}

AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret) noexcept {
  // Strided is the only layout aotirt creates.
  return get_attribute(__func__, tensor, ret, [](const TensorImpl&) { return int32_t{0}; });
}

AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return t.storage_offset(); });
}

AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret) noexcept {
  return get_attribute(__func__, tensor, ret, [](const TensorImpl& t) { return t.is_contiguous(); });
}

AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret);
    *ret = tensor != nullptr && impl_of(tensor)->defined();
    return Status();
  });
}

}  // extern "C"
