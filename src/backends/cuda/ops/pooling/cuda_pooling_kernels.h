// Launchers for the CUDA pooling kernels (cuda_pooling.cu): average, max
// (with indices) and max-unpooling over a [N, C, T, H, W] view of the input,
// 2-d ops having T = 1. Inputs and outputs are read and written through
// their element strides, so any layout takes the same kernels. Plain C++
// types only, so the .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// The geometry every pooling kernel shares: the 5-d view of the input and
// of the outputs (values and indices share the output strides).
struct CudaPoolGeometry {
  int64_t batch = 1, channels = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t in_strides[5] = {0, 0, 0, 0, 0};
  int64_t out_strides[5] = {0, 0, 0, 0, 0};
  // Walk outputs with channels innermost (channels-last outputs), so that
  // neighbouring threads write neighbouring elements.
  bool channels_inner = false;
};

// How an average is taken, as torch's CUDA kernels take it (the sum is
// always accumulated in float for the half types, double for float64):
//  - kWindow: avg_pool2d/3d, divided once by the divisor (override, the
//    padded window or the part inside the input);
//  - kAdaptiveSteps: _adaptive_avg_pool2d on a contiguous input, divided by
//    the window's height, then by its width;
//  - kAdaptiveVolume: _adaptive_avg_pool3d, divided once by the window's
//    volume;
//  - kAdaptiveReciprocal: _adaptive_avg_pool2d on a channels-last input,
//    multiplied by 1 / area rounded to the storage dtype.
enum class CudaAvgMode : int { kWindow = 0, kAdaptiveSteps = 1, kAdaptiveVolume = 2, kAdaptiveReciprocal = 3 };

struct CudaAvgParams {
  CudaAvgMode mode = CudaAvgMode::kWindow;
  // kWindow only.
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  bool count_include_pad = true;
  bool has_divisor = false;
  int64_t divisor = 0;
};

// How max windows are placed:
//  - kWindow: max_pool2d/3d (kernel, stride, padding, dilation);
//  - kAdaptive: adaptive_max_pool2d/3d;
//  - kFractional: fractional_max_pool2d/3d, windows of |kernel| starting
//    where the per-plane random samples put them.
enum class CudaMaxMode : int { kWindow = 0, kAdaptive = 1, kFractional = 2 };

struct CudaMaxParams {
  CudaMaxMode mode = CudaMaxMode::kWindow;
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  // kFractional: the samples (dtype of the input) of plane (n, c) for
  // spatial dim j at samples[n * s0 + c * s1 + j * s2]; |spatial| is 2 or 3
  // (2-d samples run W, H; 3-d ones T, H, W).
  const void* samples = nullptr;
  int64_t sample_strides[3] = {0, 0, 0};
  int spatial = 2;
};

// |dtype| is a c10 number: float32, float64, float16 or bfloat16. Each
// launcher queues its kernels on |stream| and returns the launch status;
// nothing is queued when the output is empty.
cudaError_t cuda_launch_avg_pool(int dtype, const void* in, void* out, const CudaPoolGeometry& g,
                                 const CudaAvgParams& p, cudaStream_t stream);

// Values in the input's dtype; indices (int64) flattened over T, H, W of the
// input plane. A NaN wins a window and the last one stays.
cudaError_t cuda_launch_max_pool(int dtype, const void* in, void* values, int64_t* indices,
                                 const CudaPoolGeometry& g, const CudaMaxParams& p, cudaStream_t stream);

// Zeroes the output (|out_bytes| bytes, which must be dense), then writes
// each input element at its index within its output plane (indices read
// through |index_strides|, the input's 5-d view). Indices outside the plane
// are skipped: the device cannot report them without a synchronisation.
cudaError_t cuda_launch_max_unpool(int dtype, const void* in, const int64_t* indices, const int64_t index_strides[5],
                                   void* out, size_t out_bytes, const CudaPoolGeometry& g, cudaStream_t stream);

}  // namespace aotirt
