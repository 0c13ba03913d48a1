// The calls behind a Hopper convolution kernel's table entry
// (cuda_conv_tf32_entry.h), shared by the implicit-GEMM kernels
// (cuda_conv_tf32_sm90.cu) and the GEMM kernels for 1x1 convolutions
// (cuda_conv_tf32_gemm_sm90.cu): both are a CUTLASS 3 device adapter whose
// initialize() has the driver encode the tensor maps and whose run()
// launches. Included by those sm_90a-only files alone.
#pragma once

#include <cutlass/cutlass.h>

#include "backends/cuda/ops/cutlass/cuda_conv_tf32_entry.h"

namespace aotirt {

// S names the adapter (S::Op), its kernel (S::Kernel) and its tile (kTileM,
// kTileN, kTileK); Arguments fills the adapter's arguments for a problem,
// or refuses one the kernel does not take (cudaErrorInvalidValue). These
// kernels take no channel split, so they need no semaphores or workspace.
template <class S, cudaError_t (*Arguments)(const CudaConvProblem&, int, typename S::Op::Arguments*)>
struct CudaSm90ConvCalls {
  // Also has the driver encode the tensor maps (host work only, no launch),
  // so a problem the driver refuses is refused here, not at the launch.
  static cudaError_t check(const CudaConvProblem& p, int split) {
    typename S::Op::Arguments args;
    const cudaError_t ok = Arguments(p, split, &args);
    if (ok != cudaSuccess) return ok;
    typename S::Op op;
    return op.initialize(args, nullptr, nullptr) == cutlass::Status::kSuccess ? cudaSuccess : cudaErrorInvalidValue;
  }

  static cudaError_t launch(const CudaConvProblem& p, int split, int* /*semaphores*/, float* /*partials*/,
                            cudaStream_t stream) {
    typename S::Op::Arguments args;
    const cudaError_t ok = Arguments(p, split, &args);
    if (ok != cudaSuccess) return ok;
    typename S::Op op;
    if (op.initialize(args, nullptr, stream) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    if (op.run(stream) != cutlass::Status::kSuccess) {
      const cudaError_t err = cudaGetLastError();
      return err != cudaSuccess ? err : cudaErrorLaunchFailure;
    }
    return cudaGetLastError();
  }

  static CudaConvKernelEntry entry(bool gemm_1x1) {
    CudaConvConfig c;
    c.tile_m = S::kTileM;
    c.tile_n = S::kTileN;
    c.tile_k = S::kTileK;
    c.threads = static_cast<int>(S::Kernel::MaxThreadsPerBlock);
    c.smem_bytes = static_cast<int>(S::Kernel::SharedStorageSize);
    c.sm90 = true;
    c.gemm_1x1 = gemm_1x1;
    return CudaConvKernelEntry{c, reinterpret_cast<const void*>(cutlass::device_kernel<typename S::Kernel>), &check,
                               &launch};
  }
};

}  // namespace aotirt
