// The CPU device: host memory through CpuAllocator, copies done inline.
#include <cstring>

#include "backends/cpu/cpu_allocator.h"
#include "backends/cpu/cpu_copy.h"
#include "backends/cpu/cpu_sleef.h"
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {

class CpuDevice final : public Device {
 public:
  DeviceId id() const override { return DeviceId{DeviceType::kCpu, 0}; }
  std::string description() const override { return "cpu"; }
  Allocator& allocator() override { return allocator_; }
  Status copy(const TensorImpl& dst, const TensorImpl& src, bool) override {
    return cpu_copy_strided(dst, src);
  }
  Status zero(const TensorImpl& dst) override {
    if (dst.numel() == 0) return Status();
    if (dst.is_contiguous()) {
      std::memset(dst.data_ptr(), 0, dst.nbytes());
      return Status();
    }
    // Strided: broadcast a zero scalar of the same dtype through the copy path.
    uint64_t zeros[2] = {0, 0};
    Storage* s = Storage::new_borrowed(zeros, sizeof(zeros), id());
    TensorImpl scalar(StorageRef::adopt(s), dst.dtype(), DimVector(), DimVector(), 0);
    return cpu_copy_strided(dst, scalar);
  }
  Status synchronize() override { return Status(); }
  Status prepare_model_load() override { return ensure_sleef_global(); }

 private:
  CpuAllocator allocator_;
};

Result<int> cpu_probe() { return 1; }
Result<std::unique_ptr<Device>> cpu_create(int) { return std::unique_ptr<Device>(new CpuDevice()); }

}  // namespace

const BackendInfo& cpu_backend_info() {
  static const BackendInfo info{DeviceType::kCpu, "cpu", cpu_probe, cpu_create};
  return info;
}

}  // namespace aotirt
