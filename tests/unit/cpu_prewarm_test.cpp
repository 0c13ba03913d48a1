// The CPU backend's prewarm: a model whose library imports convolution or
// GEMM shims gets threads that open oneDNN and OpenBLAS during its load; one
// that imports neither gets none.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "device/device.h"

namespace aotirt {
namespace {

size_t prewarm_threads(const std::vector<std::string>& imported) {
  std::vector<std::thread> threads = prewarm_backend(DeviceId{DeviceType::kCpu, 0}, imported);
  for (std::thread& t : threads) t.join();
  return threads.size();
}

TEST(CpuPrewarmTest, ThreadsFollowTheImportedOps) {
  EXPECT_EQ(prewarm_threads({}), 0u);
  EXPECT_EQ(prewarm_threads({"aoti_torch_empty_strided", "aoti_torch_cpu_topk"}), 0u);
  EXPECT_EQ(prewarm_threads({"aoti_torch_cpu_convolution"}), 1u);
  EXPECT_EQ(prewarm_threads({"aoti_torch_cpu_mkldnn__convolution_pointwise"}), 1u);
  EXPECT_EQ(prewarm_threads({"aoti_torch_cpu_addmm_out"}), 1u);
  EXPECT_EQ(prewarm_threads({"aoti_torch_cpu__linear_pointwise", "aoti_torch_cpu_mm_out",
                             "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu"}),
            2u);
}

}  // namespace
}  // namespace aotirt
