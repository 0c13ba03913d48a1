// aotirt's direct TF32 convolution for CNN stems: 1-4 input channels (RGB
// images), any filter size, stride, padding and dilation, output channels a
// multiple of 32, channels-last. CUTLASS's kernels read whole k steps of
// channels from each filter tap, so a 3-channel stem runs on them only
// padded to 4 channels (a copy of the input) and on its fixed-channels
// iterators, which gather every k step from global memory: ResNet-50's stem
// ran no faster there, copies included, than on cuDNN. This kernel, written
// by hand for that reason, loads a block's input rows into shared memory
// once, with the filters, and builds every k step of the implicit GEMM from
// there (mma.sync m16n8k8 on TF32), reading the 3-channel input as it is,
// in under half that time.
//
// Plain CUDA (no CUTLASS); sm_80 and newer. The shim (cuda_convolution.cpp)
// decides when it applies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/ops/conv/cuda_conv_tf32.h"

namespace aotirt {

// The longest reduction (filter taps times channels) the kernel takes: its
// filters stay in shared memory for the whole block.
constexpr int kCudaConvStemMaxReduction = 256;

// A block's shape for |p| (host arithmetic, shared by the check, the launch
// and the tests): a tile of |rows| output rows by |cols| output columns
// (|frags_per_row| fragments of 16 columns each) and 64 output channels; the
// shared memory a block takes, in bytes (two tiles' input windows and the
// filters); whether it runs the fast path (3 channels of stride 2,
// whole rows of 7 fragments: ResNet's stem).
struct CudaConvStemGeometry {
  int frags_per_row = 0, rows = 0, cols = 0;
  int in_rows = 0, in_row_floats = 0;  // the input window in shared memory
  int reduction = 0, padded_reduction = 0;
  int filter_row = 0;  // floats a reduction index's filters take (transposed)
  bool fast = false;
  int64_t window_words = 0;  // one input window's floats, a 16-byte multiple
  int64_t smem_bytes = 0;
  int64_t tiles = 0;           // blocks' worth of outputs for 64 channels
  int64_t channel_blocks = 0;  // ceil(k / 64)
};
// False where |p| is no problem for this kernel (see cuda_conv_stem_check),
// without looking at the device.
bool cuda_conv_stem_geometry(const CudaConvProblem& p, CudaConvStemGeometry* g);

// cudaSuccess when the kernel takes |p| on the current device: 1-4
// channels, k a multiple of 32, a reduction of at most
// kCudaConvStemMaxReduction, 4-byte aligned operands (8 for |y|), a block's
// shared memory within the device's limit, at most 65535 blocks of 64
// channels, a GPU of compute capability 8.0 or newer; cudaErrorInvalidValue
// otherwise (or the runtime's error where it
// cannot say). Queues nothing.
cudaError_t cuda_conv_stem_check(const CudaConvProblem& p);

// Queues y = conv(x, filter) (+ bias) on |stream|. Pointers are borrowed
// for the launch. Returns cudaErrorInvalidValue where cuda_conv_stem_check
// would refuse |p|.
cudaError_t cuda_conv_stem_launch(const CudaConvProblem& p, cudaStream_t stream);

}  // namespace aotirt
