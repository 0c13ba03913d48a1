// Launchers for the small elementwise kernels in cuda_op_kernels.cu. Plain C++
// types only, so the .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// The dtypes these kernels take (c10 ScalarType numbers).
constexpr int kCudaOpFloat16 = 5;
constexpr int kCudaOpFloat32 = 6;
constexpr int kCudaOpFloat64 = 7;
constexpr int kCudaOpBFloat16 = 15;

// x[n, c, rest...] += bias[c] for a dense tensor of outer (N) x channels x
// inner (spatial) elements, laid out contiguously (NCHW) or channels-last
// (NHWC) when |channels_last|.
cudaError_t cuda_launch_add_channel_bias(void* x, const void* bias, int dtype, int64_t outer, int64_t channels,
                                         int64_t inner, bool channels_last, cudaStream_t stream);

// The non-overlapping kh x kw patches of a 4-byte-element tensor x[n, c, h,
// w] with any element strides |xs|, as the rows of a patch embedding's GEMM:
// out[b, i, j, ch, u, v] = x[b, ch, i * kh + u, j * kw + v], contiguous, for
// i < oh and j < ow (rows and columns past the last whole patch are left).
cudaError_t cuda_launch_patches(const void* x, const int64_t xs[4], int64_t n, int64_t c, int64_t oh, int64_t ow,
                                int64_t kh, int64_t kw, void* out, cudaStream_t stream);

// out[i, j] = j < c ? x[i, j] : 0 for |rows| rows of 4-byte elements: |c|
// dense channels widened to |c_to| (a stem's 3 channels to the 4 the
// convolution kernels read at once).
cudaError_t cuda_launch_pad_channels(const void* x, int64_t rows, int c, int c_to, void* out, cudaStream_t stream);

// x[i] *= alpha for |n| contiguous elements.
cudaError_t cuda_launch_scale(void* x, int dtype, int64_t n, double alpha, cudaStream_t stream);

// Asks L2 for the |bytes| at |p| (borrowed), one prefetch a 128-byte line;
// writes nothing (cuda_l2_prefetch.h).
cudaError_t cuda_launch_l2_prefetch(const void* p, size_t bytes, cudaStream_t stream);

}  // namespace aotirt
