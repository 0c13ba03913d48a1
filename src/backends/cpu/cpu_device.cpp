// The CPU device: host memory through CpuAllocator, copies done inline.
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_allocator.h"
#include "backends/cpu/cpu_run_threads.h"
#include "core/host_copy.h"
#include "backends/cpu/cpu_sleef.h"
#include "backends/cpu/ops/cpu_onednn.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {

// A CPU run's OpenMP thread budget (cpu_run_threads.h), held by the model
// layer around each run.
class CpuRunScope final : public Device::RunScope {
 private:
  CpuRunThreads threads_{true};
};

class CpuDevice final : public Device {
 public:
  DeviceId id() const override { return DeviceId{DeviceType::kCpu, 0}; }
  std::string description() const override { return "cpu"; }
  Allocator& allocator() override { return allocator_; }
  Status copy(const TensorImpl& dst, const TensorImpl& src, bool) override {
    return host_copy_strided(dst, src);
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
    return host_copy_strided(dst, scalar);
  }
  Status synchronize() override { return Status(); }
  std::unique_ptr<RunScope> enter_run() override { return std::make_unique<CpuRunScope>(); }
  Status prepare_model_load() override { return ensure_sleef_global(); }
  void release_caches() override {
    cpu_ops::onednn_release_primitives();
    allocator_.trim();
  }

 private:
  CpuAllocator allocator_;
};

Result<int> cpu_probe() { return 1; }
Result<std::unique_ptr<Device>> cpu_create(int) { return std::unique_ptr<Device>(new CpuDevice()); }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// oneDNN (convolutions, frozen linears) and OpenBLAS (GEMMs of many rows,
// attention) are opened at their first call; a model that imports their ops
// opens them on threads of their own while its library loads, so that the
// first run does not wait for the dynamic loader.
std::vector<std::thread> cpu_prewarm(int, const std::vector<std::string>& imported) {
  bool dnn = false, blas = false;
  for (const std::string& s : imported) {
    dnn = dnn || s == "aoti_torch_cpu_convolution" || starts_with(s, "aoti_torch_cpu_mkldnn_") ||
          starts_with(s, "aoti_torch_cpu__linear_pointwise") || starts_with(s, "aoti_torch_cpu__qlinear_pointwise") ||
          starts_with(s, "aoti_torch_cpu__qconv");
    blas = blas || s == "aoti_torch_cpu_mm_out" || s == "aoti_torch_cpu_addmm_out" || s == "aoti_torch_cpu_bmm_out" ||
           s == "aoti_torch_cpu_baddbmm_out" || s == "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu";
  }
  std::vector<std::thread> threads;
  // Failures are left for the ops, which report them with their context.
  if (dnn) threads.emplace_back([] { (void)cpu_ops::onednn_open(); });
  if (blas) threads.emplace_back([] { (void)cpu_ops::ensure_blas(); });
  return threads;
}

}  // namespace

const BackendInfo& cpu_backend_info() {
  static const BackendInfo info{DeviceType::kCpu, "cpu", cpu_probe, cpu_create, cpu_prewarm};
  return info;
}

}  // namespace aotirt
