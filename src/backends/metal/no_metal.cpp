// Stub linked when aotirt is built without Metal (every non-Apple build).
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {
Result<int> no_metal_probe() {
  return AOTIRT_STATUS(kUnavailable, "Metal (mps) is unavailable: this aotirt was built without Metal support");
}
Result<std::unique_ptr<Device>> no_metal_create(int) { return no_metal_probe().take_status(); }
}  // namespace

const BackendInfo& metal_backend_info() {
  static const BackendInfo info{DeviceType::kMps, "mps", no_metal_probe, no_metal_create};
  return info;
}

}  // namespace aotirt
