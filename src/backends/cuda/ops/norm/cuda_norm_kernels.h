// Launchers for the CUDA row normalizations (cuda_norm.cu): _fused_rms_norm
// over a contiguous input viewed as [rows, n]. Plain C++ types only, so the
// .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// y[r, i] = x[r, i] * rstd[r] (* w[i]) with rstd[r] = 1 / sqrt(mean_i(x[r, i]^2)
// + eps). |x|, |w| (null for none) and |y| are contiguous and of |dtype| (a
// c10 number: float16, float32, float64 or bfloat16); |rstd| is float32
// (float64 for a float64 input). Sums in float32 for the 16-bit and float32
// inputs and in float64 for float64 ones, as torch's CUDA kernel does. An
// empty row (n == 0) gives a NaN rstd, as torch's does.
cudaError_t cuda_launch_rms_norm(int dtype, const void* x, const void* w, void* y, void* rstd, int64_t rows,
                                 int64_t n, double eps, cudaStream_t stream);

}  // namespace aotirt
