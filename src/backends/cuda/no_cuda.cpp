// Stub linked when aotirt is built without CUDA: the device reports UNAVAILABLE.
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {
Result<int> no_cuda_probe() {
  return AOTIRT_STATUS(kUnavailable, "CUDA is unavailable: this aotirt was built without CUDA support");
}
Result<std::unique_ptr<Device>> no_cuda_create(int) { return no_cuda_probe().take_status(); }
}  // namespace

const BackendInfo& cuda_backend_info() {
  static const BackendInfo info{DeviceType::kCuda, "cuda", no_cuda_probe, no_cuda_create, nullptr, nullptr, true};
  return info;
}

}  // namespace aotirt
