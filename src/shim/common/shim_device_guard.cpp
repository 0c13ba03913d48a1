// Device-generic guards (aoti_torch_create_device_guard and friends). They
// set the current device index for the thread and restore it on delete.
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {
thread_local int32_t t_current_device_index = 0;

struct DeviceGuard {
  int32_t previous;
};
}  // namespace

extern "C" {

AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle* ret_guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret_guard);
    auto* g = new DeviceGuard{t_current_device_index};
    if (device_index >= 0) t_current_device_index = device_index;
    *ret_guard = reinterpret_cast<DeviceGuardHandle>(g);
    return Status();
  });
}

AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    auto* g = reinterpret_cast<DeviceGuard*>(guard);
    t_current_device_index = g->previous;
    delete g;
    return Status();
  });
}

AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    if (device_index >= 0) t_current_device_index = device_index;
    return Status();
  });
}

AOTITorchError aoti_torch_get_current_device_index(int32_t* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret);
    *ret = t_current_device_index;
    return Status();
  });
}

}  // extern "C"
