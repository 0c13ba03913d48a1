// Copies, clones and fills. The owning device does the work, so host/device
// and strided copies work for every dtype on every backend.
#include "device/device.h"
#include "shim/common/shim_util.h"

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * d, checked_impl(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * s, checked_impl(src, "src"));
    return copy_tensor(*d, *s, non_blocking != 0);
  });
}

AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst) noexcept {
  return aoti_torch_copy_(dst, src, 0);
}

AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    AOTIRT_REQUIRE_OUT(ret);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, clone_tensor(*t));
    *ret = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    AOTIRT_REQUIRE_OUT(ret);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(t->sizes(), t->strides(), t->dtype(), t->device()));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *t, false));
    *ret = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_zero_(AtenTensorHandle self) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    // An undefined tensor has no memory to clear (and would look like a scalar).
    AOTIRT_ENSURE(t->defined(), kInvalidArgument, "self is an undefined tensor");
    AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(t->device()));
    return dev->zero(*t);
  });
}

}  // extern "C"
