// The calls behind a Hopper convolution kernel's table entry
// (cuda_conv_tf32_entry.h), shared by the implicit-GEMM kernels
// (cuda_conv_tf32_sm90.cu) and the GEMM kernels for 1x1 convolutions
// (cuda_conv_tf32_gemm_sm90.cu): both are a CUTLASS 3 device adapter whose
// initialize() has the driver encode the tensor maps and whose run()
// launches. Included by those sm_90a-only files alone.
#pragma once

#include <cutlass/cutlass.h>

#include <cstdint>

#include "backends/cuda/launch/cuda_dependent_launch.h"
#include "backends/cuda/launch/cuda_fork.h"
#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_conv_tf32_entry.h"

namespace aotirt {

// S names the adapter (S::Op), its kernel (S::Kernel) and its tile (kTileM,
// kTileN, kTileK); Arguments fills the adapter's arguments for a problem
// (for a split, its first slice's), or refuses one the kernel does not
// take (cudaErrorInvalidValue). Slice, where not null, fills them for one
// slice of a parallel split, writing its part of the workspace: the slices
// run as launches of their own on forked streams (cuda_fork.h), and the
// Ampere kernels' second kernel adds the parts. Without it the kernel takes
// no split. These kernels need no semaphores or CUTLASS workspace.
template <class S, cudaError_t (*Arguments)(const CudaConvProblem&, int, typename S::Op::Arguments*),
          cudaError_t (*Slice)(const CudaConvProblem&, int, int, float*, typename S::Op::Arguments*) = nullptr>
struct CudaSm90ConvCalls {
  // Also has the driver encode the tensor maps (host work only, no launch),
  // so a problem the driver refuses is refused here, not at the launch; and
  // makes the side streams a split forks to, outside any capture.
  static cudaError_t check(const CudaConvProblem& p, int split) {
    typename S::Op::Arguments args;
    const cudaError_t ok = Arguments(p, split, &args);
    if (ok != cudaSuccess) return ok;
    typename S::Op op;
    if (op.initialize(args, nullptr, nullptr) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    return split > 1 ? cuda_fork_prepare() : cudaSuccess;
  }

  static cudaError_t run(const typename S::Op::Arguments& args, cudaStream_t stream, bool pdl = false) {
    typename S::Op op;
    if (op.initialize(args, nullptr, stream) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    if (pdl) {
      // What the adapter's run() launches (one-SM clusters: no cluster
      // launch), with the attribute. These files are built with
      // CUTLASS_ENABLE_GDC_FOR_SM90, so CUTLASS's kernel waits for the
      // kernel before it (griddepcontrol.wait) in its producer warp, after
      // the block's prologue and before its first load, and lets the
      // kernel after it start once its mainloop is done.
      static_assert(cute::size(typename S::Cluster{}) == 1, "PDL launches assume one-SM clusters");
      auto* kernel = cutlass::device_kernel<typename S::Kernel>;
      const size_t smem = static_cast<size_t>(S::Kernel::SharedStorageSize);
      cudaError_t err = cuda_reserve_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
      if (err != cudaSuccess) return err;
      return cuda_launch_dependent(kernel, S::Kernel::get_grid_shape(op.params()), S::Kernel::get_block_shape(),
                                   smem, stream, op.params());
    }
    if (op.run(stream) != cutlass::Status::kSuccess) {
      const cudaError_t err = cudaGetLastError();
      return err != cudaSuccess ? err : cudaErrorLaunchFailure;
    }
    return cudaGetLastError();
  }

  static cudaError_t launch(const CudaConvProblem& p, int split, int* /*semaphores*/, float* partials,
                            cudaStream_t stream) {
    typename S::Op::Arguments args;
    cudaError_t ok = Arguments(p, split, &args);
    if (ok != cudaSuccess) return ok;
    if (split == 1) return run(args, stream, p.pdl);
    // A split is parallel only: no serial slices (their epilogue would
    // have to read y).
    if constexpr (Slice == nullptr) {
      return cudaErrorInvalidValue;
    } else {
      if (!partials || reinterpret_cast<uintptr_t>(partials) % 16 != 0 || split > kCudaMaxForks)
        return cudaErrorInvalidValue;
      cudaStream_t streams[kCudaMaxForks];
      ok = cuda_fork(stream, split, streams);
      for (int i = 0; ok == cudaSuccess && i < split; ++i) {
        ok = Slice(p, split, i, partials, &args);
        if (ok == cudaSuccess) ok = run(args, streams[i]);
      }
      const cudaError_t joined = cuda_join(stream, split, streams);
      if (ok != cudaSuccess) return ok;
      if (joined != cudaSuccess) return joined;
      return cuda_conv_tf32_add_slices(p, split, partials, stream);
    }
  }

  static CudaConvKernelEntry entry(bool gemm_1x1, bool persistent = false) {
    CudaConvConfig c;
    c.tile_m = S::kTileM;
    c.tile_n = S::kTileN;
    c.tile_k = S::kTileK;
    c.threads = static_cast<int>(S::Kernel::MaxThreadsPerBlock);
    c.smem_bytes = static_cast<int>(S::Kernel::SharedStorageSize);
    c.sm90 = true;
    c.gemm_1x1 = gemm_1x1;
    c.persistent = persistent;
    return CudaConvKernelEntry{c, reinterpret_cast<const void*>(cutlass::device_kernel<typename S::Kernel>), &check,
                               &launch};
  }
};

}  // namespace aotirt
