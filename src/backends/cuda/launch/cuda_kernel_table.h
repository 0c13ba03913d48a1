// The kernels of one of aotirt's own kernel families (GEMMs, convolutions)
// as they run on one device, for the choosers in cuda_matmul.cpp and
// cuda_convolution.cpp: which shapes have an image for the GPU and how many
// blocks of each fit on one of its multiprocessors.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/log.h"

namespace aotirt {

template <class Config>
struct KernelTable {
  std::vector<Config> configs;
  std::vector<int> blocks;
  std::vector<int> index;
  int sm_count = 0;
};

template <class Config, int (*Count)(), Config (*Get)(int), cudaError_t (*BlocksPerSm)(int, int*)>
inline const KernelTable<Config>& kernel_table(int device, const char* none_message) {
  static std::mutex mutex;
  static std::array<std::unique_ptr<KernelTable<Config>>, kCudaMaxDevices> tables;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<KernelTable<Config>>& t = tables[device];
  if (!t) {
    t = std::make_unique<KernelTable<Config>>();
    Result<CudaDevice*> dev = cuda_device(device);
    if (dev.ok() && (*dev)->properties().major >= 8) {
      for (int i = 0; i < Count(); ++i) {
        int blocks = 0;
        if (BlocksPerSm(i, &blocks) != cudaSuccess || blocks < 1) {
          cudaGetLastError();  // clear it: no kernel image is not an error of the caller's
          continue;
        }
        t->configs.push_back(Get(i));
        t->blocks.push_back(blocks);
        t->index.push_back(i);
      }
      t->sm_count = (*dev)->properties().sm_count;
    }
    if (t->configs.empty()) AOTIRT_LOG(kDebug, "device {}: {}", device, none_message);
  }
  return *t;
}

}  // namespace aotirt
