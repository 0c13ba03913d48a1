// Programmatic dependent launch (Hopper and later): a kernel launched this
// way may start before the kernel ahead of it on the stream has finished;
// it must wait for that kernel (griddepcontrol.wait) before it reads what
// the kernel wrote. One launch helper for the kernels that do so, and the
// two device-side calls, for inclusion from CUDA sources only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace aotirt {

// Launches |kernel| on |grid| x |block| with |smem| bytes of dynamic shared
// memory and the programmatic-stream-serialization attribute.
template <class... Params, class... Args>
cudaError_t cuda_launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                                  cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// Device side (no-ops before Hopper, and when the kernel was launched
// plainly): wait until the kernel ahead on the stream has finished and its
// writes are visible; let the kernel after this one start early (it waits
// the same way before it reads this one's output).
__device__ __forceinline__ void dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void dependents_may_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A 32-bit load that stays after dependency_wait() in the machine code. A
// read-only load (__ldg, const __restrict__) may be issued ahead of the
// wait, since the wait's memory clobber does not order loads the compiler
// knows to be of unchanging memory; data the kernel ahead writes must come
// through this (or a plain load the compiler cannot prove read-only). A
// volatile asm keeps its place among the others, the wait's included; no
// memory clobber, so that other loads still move around it.
__device__ __forceinline__ uint32_t load_after_wait(const void* p) {
  uint32_t v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

}  // namespace aotirt
