// aotirt's own float32 2-d convolutions on tensor cores: CUTLASS's Ampere
// implicit-GEMM convolution (mma.sync m16n8k8), and on Hopper its sm_90 one
// (TMA, wgmma), on channels-last (NHWC) inputs and filters. PyTorch lets
// cuDNN use TF32 for float32 convolutions by default; the TF32 kernels do
// the same arithmetic, and 3xTF32 ones keep float32 accuracy where TF32 is
// off. So a channels-last float32 CNN
// (ResNet-50 as inductor exports it) runs without cuDNN, and without the
// host memory and the start-up time that cuDNN's libraries (and the
// cuBLASLt they open) cost once loaded.
//
// The kernels are built only where CUTLASS's headers were found at
// configure time (cutlass/); otherwise cuda_conv_tf32_config_count() is
// 0. Plain C++ types only: cuda_convolution.cpp decides when they apply.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>


namespace aotirt {

// y[n, p, q, k] = sum over r, s, c of x[n, h, w, c] * w[k, r, s, c] (+
// bias[k]), h = p * stride_h - pad_h + r * dil_h and likewise for w; taps
// outside the input read zero. x, w and y are dense NHWC / KRSC / NPQK
// (channels innermost). bias is null or |k| floats. Pointers are borrowed
// for the launch.
struct CudaConvProblem {
  int n = 0, h = 0, w = 0, c = 0;  // input
  int k = 0, r = 0, s = 0;         // filters
  int p = 0, q = 0;                // output height and width
  int pad_h = 0, pad_w = 0;
  int stride_h = 1, stride_w = 1;
  int dil_h = 1, dil_w = 1;
  const float* x = nullptr;
  const float* filter = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  // The Hopper kernels (unsplit) launch with programmatic dependent launch:
  // their blocks may be scheduled before the kernel queued before them on
  // the stream has finished, and wait before their first load until its
  // writes are visible, so the gap between the two kernels shrinks. Other
  // kernels ignore it. Not part of a plan's identity.
  bool pdl = false;
};

// A compiled kernel shape: output tile (rows of n * p * q by output
// channels), the reduction per k step, threads and shared memory per block,
// and the input channels it takes: 0 for any multiple of 4 (CUTLASS's
// optimized iterators: a k step is tile_k channels of one filter tap), or
// exactly |fixed_channels| (its fixed-channels iterators, for a stem: a k
// step spans tile_k / fixed_channels taps). Every kernel reads and writes 4
// floats at a time: channel counts and starts must be multiples of 4.
struct CudaConvConfig {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int threads = 0;
  int smem_bytes = 0;
  int fixed_channels = 0;
  // 3xTF32 (float32 accuracy: each operand split into a TF32 head and rest,
  // three TF32 products each), for when TF32 is not allowed; else TF32.
  bool three_pass = false;
  // A Hopper kernel (sm_90a: TMA loads, wgmma; a block a tile, as the
  // Ampere ones): TF32 only, no bias; a channel split is parallel only, in
  // slices of as many whole k steps each (launches on forked streams).
  bool sm90 = false;
  // A Hopper GEMM kernel (sm90 too) for 1x1 convolutions of stride 1
  // without padding alone, which are products of the input's rows: two
  // consumer warpgroups in ping-pong, a tile_m x tile_n tile each, in
  // persistent blocks (one an SM).
  bool gemm_1x1 = false;
  // A Hopper implicit-GEMM kernel in aotirt's persistent ping-pong kernel
  // (sm90 too; cutlass/cuda_conv_sm90_pingpong.h): one block an SM walks
  // its tiles, two consumer warpgroups a tile each in turn.
  bool persistent = false;
};

// The largest parallel-split workspace the shim hands out (16 MiB): the
// parts are meant to stay in L2 for the second kernel.
constexpr uint64_t kCudaConvMaxPartialFloats = uint64_t(4) << 20;

// The channel count stems of 1-3 channels are padded to (with zeros in the
// input and the filters) for the fixed-channels kernels.
constexpr int kCudaConvStemChannels = 4;

// The kernel shapes built into this library (0 without CUTLASS).
int cuda_conv_tf32_config_count();
CudaConvConfig cuda_conv_tf32_config(int index);
// How many blocks of config |index| fit on one multiprocessor.
cudaError_t cuda_conv_tf32_blocks_per_sm(int index, int* blocks);

// cudaSuccess when config |index| takes |p| with its input channels split
// into |split| slices (alignment, channel counts, sizes; the Hopper
// kernels' slices are parallel only); cudaErrorInvalidValue otherwise.
// Queues nothing.
cudaError_t cuda_conv_tf32_check(int index, const CudaConvProblem& p, int split);

// Queues |p| on config |index| with its input channels in |split| slices.
// With |partials| null the split is serial: each slice adds its part to y
// in float32 after the one before, and with |split| > 1 |semaphores| holds
// at least cuda_conv_tf32_tiles(...) zeroed ints, left zero when the kernel
// ends. With |partials| (16-byte aligned, at least
// cuda_conv_tf32_partial_floats(p, split) floats) and |split| > 1 it is
// parallel: each slice writes its float32 sums to a part of |partials| of
// its own, and a second kernel adds the parts in slice order (and the bias)
// into y; |semaphores| is not used. The Hopper kernels refuse a serial
// split, and run a parallel one's slices on streams forked from |stream|
// and joined to it again. Returns cudaErrorInvalidValue where
// cuda_conv_tf32_check would.
cudaError_t cuda_conv_tf32_launch(int index, const CudaConvProblem& p, int split, int* semaphores, float* partials,
                                  cudaStream_t stream);

// The workspace a parallel split of |p| in |split| slices writes: |split|
// outputs' worth of floats (0 for one slice).
uint64_t cuda_conv_tf32_partial_floats(const CudaConvProblem& p, int split);

// Output tiles of |p| on a kernel of |config|.
int64_t cuda_conv_tf32_tiles(const CudaConvProblem& p, const CudaConvConfig& config);

// The choice of kernel shape and split for |p| on |sm_count|
// multiprocessors, among |count| configs with their blocks per
// multiprocessor (|blocks|) and whether each takes |p| at all (|takes|: the
// caller also leaves out the kind of kernel, TF32 or 3xTF32, it does not
// want). config -1: none does. A parallel split is chosen only where its
// workspace is at most |max_partial_floats|.
struct CudaConvChoice {
  int config = -1;
  int split = 1;
  bool parallel = false;  // the split's slices meet in a workspace (see cuda_conv_tf32_launch)
};
CudaConvChoice cuda_conv_tf32_choose(const CudaConvProblem& p, int sm_count, const CudaConvConfig* configs,
                                     const int* blocks, const bool* takes, int count,
                                     uint64_t max_partial_floats = kCudaConvMaxPartialFloats);

}  // namespace aotirt
