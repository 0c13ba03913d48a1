// Launchers for the small kernels around the cuFFT transforms
// (cuda_fft.cu): the normalization scale and the Hermitian fill of a
// two-sided r2c. Plain C++ types only, so the .cu file needs none of
// aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

constexpr int kCudaFftMaxDims = 16;

// Multiplies |count| complex values (complex128 when |dbl|, else complex64)
// at |data|, stored densely, by |scale|.
cudaError_t cuda_fft_scale(void* data, bool dbl, int64_t count, double scale, cudaStream_t stream);

// A complex tensor's layout for cuda_fft_fill_conjugate: |mirrored[d]| marks
// the transformed dims; |last| (one of them) was halved.
struct CudaFftFill {
  int ndim = 0;
  int64_t sizes[kCudaFftMaxDims] = {};
  int64_t strides[kCudaFftMaxDims] = {};
  bool mirrored[kCudaFftMaxDims] = {};
  int last = 0;
  int64_t numel = 0;
};

// Sets every element whose index along |f.last| is at least size / 2 + 1 to
// the conjugate of the element at the mirrored index ((n - i) mod n along
// every transformed dim), which lies in the half a one-sided r2c wrote.
cudaError_t cuda_fft_fill_conjugate(void* data, bool dbl, const CudaFftFill& f, cudaStream_t stream);

}  // namespace aotirt
