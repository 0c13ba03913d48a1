// Device helpers of the one- and few-row bfloat16 kernels
// (cuda_gemv_bf16.cu, cuda_fused_decode.cu): 16 bytes of activations in
// one load and eight bfloat16 values unpacked to float.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace aotirt {
namespace bf16_loads {

// Eight bfloat16 values from 16 aligned bytes.
__device__ __forceinline__ void unpack8(const uint4& v, float out[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// 16 bytes of activations in one load. A plain dereference of a uint4
// pointer was split into four 4-byte loads by the compiler; the activations
// may have been written by the kernel ahead, so no read-only path either.
__device__ __forceinline__ uint4 load16(const __nv_bfloat16* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

}  // namespace bf16_loads
}  // namespace aotirt
