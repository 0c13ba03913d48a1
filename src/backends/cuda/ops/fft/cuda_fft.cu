// Kernels around the cuFFT transforms of cuda_fft.cpp: scaling by the
// normalization factor, and filling the half of a two-sided r2c that cuFFT
// leaves out (X[k] = conj(X[-k]) for real input). Grid-stride loops over
// 64-bit indices, so any size fits one launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/fft/cuda_fft_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535LL * 8;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

template <class R>
__global__ void scale_kernel(R* data, int64_t n, R scale) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) data[i] *= scale;
}

// Each complex value is two R's: real, then imaginary.
template <class R>
__global__ void fill_conjugate_kernel(R* data, CudaFftFill f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t half = f.sizes[f.last] / 2 + 1;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < f.numel; i += step) {
    int64_t rest = i, dst = 0, src = 0;
    bool needed = true;
    for (int d = f.ndim - 1; d >= 0; --d) {
      const int64_t n = f.sizes[d];
      const int64_t k = rest % n;
      rest /= n;
      if (d == f.last && k < half) needed = false;
      dst += k * f.strides[d];
      src += (f.mirrored[d] ? (n - k) % n : k) * f.strides[d];
    }
    if (needed) {
      data[2 * dst] = data[2 * src];
      data[2 * dst + 1] = -data[2 * src + 1];
    }
  }
}

}  // namespace

cudaError_t cuda_fft_scale(void* data, bool dbl, int64_t count, double scale, cudaStream_t stream) {
  const int64_t n = 2 * count;
  if (n == 0) return cudaSuccess;
  if (dbl)
    scale_kernel<double><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<double*>(data), n, scale);
  else
    scale_kernel<float><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<float*>(data), n,
                                                                 static_cast<float>(scale));
  return cudaGetLastError();
}

cudaError_t cuda_fft_fill_conjugate(void* data, bool dbl, const CudaFftFill& f, cudaStream_t stream) {
  if (f.numel == 0) return cudaSuccess;
  if (dbl)
    fill_conjugate_kernel<double><<<blocks_for(f.numel), kThreads, 0, stream>>>(static_cast<double*>(data), f);
  else
    fill_conjugate_kernel<float><<<blocks_for(f.numel), kThreads, 0, stream>>>(static_cast<float*>(data), f);
  return cudaGetLastError();
}

}  // namespace aotirt
