// The convolution kernels of cuda_conv_tf32.h, from CUTLASS's Ampere
// implicit-GEMM forward convolution (cp.async into shared memory, mma.sync
// m16n8k8 on TF32 with float32 accumulators), which runs on sm_80 and later:
// TF32 ones (each float32 operand rounded to TF32 as it is read) and 3xTF32
// ones at float32 accuracy (OpMultiplyAddFastF32, each warp step's products
// in fresh accumulators: cuda_cutlass_fresh_sum.h). The GEMM is
// [n * p * q, r * s * c] x [r * s * c, k]. A channel split is serial (each
// slice adds its tile into y after the one before, ordered by a semaphore
// per output tile) or parallel (each slice writes its float32 sums to a
// part of a workspace of its own, and add_slices_kernel adds the parts into
// y): a serial slice waits for the one before, a fixed cost per slice
// that deep splits of few tiles (batch 1's last stages) cannot afford, so
// they run parallel.
#include <cutlass/cutlass.h>
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/convolution.h>
#include <cutlass/conv/kernel/default_conv2d_fprop.h>
#include <cutlass/conv/kernel/implicit_gemm_convolution.h>
#include <cutlass/conv/threadblock/implicit_gemm_multistage.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_conv_tf32_entry.h"
#include "backends/cuda/cutlass/cuda_cutlass_fresh_sum.h"

namespace aotirt {
namespace {

using Nhwc = cutlass::layout::TensorNHWC;
using cutlass::conv::IteratorAlgorithm;

// CUTLASS's conv mainloop |M| with FreshSumMma as its warp step.
template <class M>
using FreshSumConvMainloop = cutlass::conv::threadblock::ImplicitGemmMultistage<
    typename M::Shape, typename M::IteratorA, typename M::SmemIteratorA, M::kCacheOpA, typename M::IteratorB,
    typename M::SmemIteratorB, M::kCacheOpB,
    cutlass::gemm::threadblock::MmaPolicy<FreshSumMma<typename M::Policy::Operator>,
                                          typename M::Policy::SmemPaddingA, typename M::Policy::SmemPaddingB,
                                          M::Policy::kPartitionsK>,
    M::kStages>;

// A kernel shape: TM x TN output tiles of WM x WN warp tiles, TK of the
// reduction per k step, |Stages| deep; FixedChannels 0 for CUTLASS's
// optimized iterators (any multiple of 4 channels), else its fixed-channels
// ones for exactly that many; ThreePass for 3xTF32. Every access is 4
// floats.
template <int TM, int TN, int TK, int WM, int WN, int Stages, int FixedChannels, bool ThreePass = false>
struct Shape {
  static constexpr IteratorAlgorithm kAlgorithm =
      FixedChannels == 0 ? IteratorAlgorithm::kOptimized : IteratorAlgorithm::kFixedChannels;
  using Epilogue = cutlass::epilogue::thread::LinearCombination<float, 4, float, float>;
  using MathOp = std::conditional_t<ThreePass, cutlass::arch::OpMultiplyAddFastF32, cutlass::arch::OpMultiplyAdd>;
  using Default = typename cutlass::conv::kernel::DefaultConv2dFprop<
      float, Nhwc, float, Nhwc, float, Nhwc, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
      cutlass::gemm::GemmShape<TM, TN, TK>, cutlass::gemm::GemmShape<WM, WN, TK>, cutlass::gemm::GemmShape<16, 8, 8>,
      Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, Stages, MathOp, kAlgorithm,
      cutlass::conv::StrideSupport::kStrided, 4, 4>::Kernel;
  using Kernel = std::conditional_t<
      ThreePass,
      cutlass::conv::kernel::ImplicitGemmConvolution<FreshSumConvMainloop<typename Default::Mma>,
                                                     typename Default::Epilogue, typename Default::ThreadblockSwizzle,
                                                     cutlass::conv::Operator::kFprop>,
      Default>;
  static constexpr int kFixedChannels = FixedChannels;
  static constexpr bool kThreePass = ThreePass;
  static constexpr int kSmem = static_cast<int>(sizeof(typename Kernel::SharedStorage));
};

cutlass::conv::Conv2dProblemSize problem_size(const CudaConvProblem& p, int split) {
  return cutlass::conv::Conv2dProblemSize(p.n, p.h, p.w, p.c, p.k, p.r, p.s, p.p, p.q, p.pad_h, p.pad_w, p.stride_h,
                                          p.stride_w, p.dil_h, p.dil_w, cutlass::conv::Mode::kCrossCorrelation,
                                          split, /*groups=*/1);
}

bool aligned(const void* ptr, int floats) { return reinterpret_cast<uintptr_t>(ptr) % (floats * 4) == 0; }

template <class S>
cudaError_t check(const CudaConvProblem& p, int split) {
  using Kernel = typename S::Kernel;
  if (p.n <= 0 || p.h <= 0 || p.w <= 0 || p.c <= 0 || p.k <= 0 || p.r <= 0 || p.s <= 0 || p.p <= 0 || p.q <= 0 ||
      split < 1 || !p.x || !p.filter || !p.y)
    return cudaErrorInvalidValue;
  // Each slice needs at least one k step of its own channels; the
  // fixed-channels kernels' k steps cross filter taps, so they are not split.
  if (split > 1 && (S::kFixedChannels != 0 || split > (p.c + Kernel::Mma::Shape::kK - 1) / Kernel::Mma::Shape::kK))
    return cudaErrorInvalidValue;
  if (!aligned(p.x, 4) || !aligned(p.filter, 4) || !aligned(p.y, 4) || (p.bias && !aligned(p.bias, 4)) ||
      p.k % 4 != 0 || p.c % 4 != 0 || (S::kFixedChannels != 0 && p.c != S::kFixedChannels))
    return cudaErrorInvalidValue;
  const cutlass::conv::Conv2dProblemSize size = problem_size(p, split);
  if (Kernel::Mma::IteratorA::can_implement(size) != cutlass::Status::kSuccess ||
      Kernel::Mma::IteratorB::can_implement(size) != cutlass::Status::kSuccess)
    return cudaErrorInvalidValue;
  // CUTLASS's iterators index with 32-bit offsets.
  const uint64_t limit = uint64_t(1) << 31;
  if (uint64_t(size.activation_size()) * 4 >= limit || uint64_t(size.filter_size()) * 4 >= limit ||
      uint64_t(size.output_size()) * 4 >= limit)
    return cudaErrorInvalidValue;
  const cutlass::gemm::GemmCoord tiled = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>::get_tiled_shape(
      cutlass::conv::Operator::kFprop, size,
      {Kernel::Mma::Shape::kM, Kernel::Mma::Shape::kN, Kernel::Mma::Shape::kK}, split);
  if (tiled.n() > std::numeric_limits<uint16_t>::max() || tiled.k() > std::numeric_limits<uint16_t>::max())
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

// y = the |slices| parts of |parts| (|n4| float4s apart) added in slice
// order, plus the bias (|k4| float4s a pixel) if any: a parallel split's
// second kernel.
__global__ void add_slices_kernel(const float4* __restrict__ parts, int64_t n4, int slices,
                                  const float4* __restrict__ bias, int k4, float4* __restrict__ y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    float4 a = parts[i];
    for (int s = 1; s < slices; ++s) {
      const float4 b = parts[s * n4 + i];
      a.x += b.x;
      a.y += b.y;
      a.z += b.z;
      a.w += b.w;
    }
    if (bias) {
      const float4 b = bias[i % k4];
      a.x += b.x;
      a.y += b.y;
      a.z += b.z;
      a.w += b.w;
    }
    y[i] = a;
  }
}

template <class S>
cudaError_t launch(const CudaConvProblem& p, int split, int* semaphores, float* partials, cudaStream_t stream) {
  using Kernel = typename S::Kernel;
  const cudaError_t ok = check<S>(p, split);
  if (ok != cudaSuccess) return ok;
  const bool parallel = split > 1 && partials;
  if (split > 1 && !parallel && !semaphores) return cudaErrorInvalidValue;
  if (parallel && (!aligned(partials, 4) || cuda_conv_tf32_partial_floats(p, split) * 4 >= (uint64_t(1) << 31)))
    return cudaErrorInvalidValue;
  const cutlass::conv::Conv2dProblemSize size = problem_size(p, split);
  // A bias is C with a zero stride (every output pixel reads the same k
  // values) and beta 1; without one, beta 0 and C is not read. A parallel
  // split's slices write their sums alone; the bias comes with their sum.
  const Nhwc out_layout = Nhwc::packed({p.n, p.p, p.q, p.k});
  const Nhwc bias_layout(typename Nhwc::Stride(0));
  float* d = parallel ? partials : p.y;
  const bool add_bias = p.bias && !parallel;
  typename Kernel::Arguments args(
      size, {const_cast<float*>(p.x), Nhwc::packed({p.n, p.h, p.w, p.c})},
      {const_cast<float*>(p.filter), Nhwc::packed({p.k, p.r, p.s, p.c})},
      add_bias ? typename Kernel::TensorRefC(const_cast<float*>(p.bias), bias_layout)
               : typename Kernel::TensorRefC(d, out_layout),
      {d, out_layout}, typename S::Epilogue::Params(1.f, add_bias ? 1.f : 0.f),
      parallel ? cutlass::conv::SplitKMode::kParallel : cutlass::conv::SplitKMode::kSerial);
  const typename Kernel::Params params(args, parallel ? nullptr : semaphores);
  const dim3 grid =
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>().get_grid_shape(params.grid_tiled_shape);
  cutlass::Kernel<Kernel><<<grid, Kernel::kThreadCount, S::kSmem, stream>>>(params);
  if (!parallel) return cudaGetLastError();
  const cudaError_t queued = cudaGetLastError();
  if (queued != cudaSuccess) return queued;
  return cuda_conv_tf32_add_slices(p, split, partials, stream);
}

template <class S>
CudaConvKernelEntry entry() {
  CudaConvConfig c;
  c.tile_m = S::Kernel::Mma::Shape::kM;
  c.tile_n = S::Kernel::Mma::Shape::kN;
  c.tile_k = S::Kernel::Mma::Shape::kK;
  c.threads = S::Kernel::kThreadCount;
  c.smem_bytes = S::kSmem;
  c.fixed_channels = S::kFixedChannels;
  c.three_pass = S::kThreePass;
  return CudaConvKernelEntry{c, reinterpret_cast<const void*>(cutlass::Kernel<typename S::Kernel>), &check<S>,
                             &launch<S>};
}

// The shapes built: eight warps a block for the largest tiles, four for the
// 128- and 64-wide ones, two for the 32x64 one (few output pixels, as at
// batch 1 in a CNN's last stages, where the channel split fills the GPU),
// and two fixed-channels kernels for stems (3 channels padded to 4:
// CUTLASS's few-channels iterator read them one float at a time, several
// times slower than cuDNN on ResNet-50's stem); then the
// Hopper kernels (cuda_conv_tf32_sm90.cu) and the Hopper GEMMs for 1x1
// convolutions (cuda_conv_tf32_gemm_sm90.cu).
const std::vector<CudaConvKernelEntry>& entries() {
  static const std::vector<CudaConvKernelEntry> table = [] {
    std::vector<CudaConvKernelEntry> t = {
        entry<Shape<256, 128, 32, 64, 64, 3, 0>>(), entry<Shape<128, 256, 32, 64, 64, 3, 0>>(),
        entry<Shape<128, 128, 32, 64, 64, 3, 0>>(), entry<Shape<128, 64, 32, 64, 32, 4, 0>>(),
        entry<Shape<64, 64, 32, 32, 32, 5, 0>>(),   entry<Shape<32, 64, 32, 32, 32, 4, 0>>(),
        entry<Shape<128, 64, 32, 64, 32, 4, kCudaConvStemChannels>>(),
        entry<Shape<64, 64, 32, 32, 32, 4, kCudaConvStemChannels>>(),
        // 3xTF32: 32x32 warp tiles (with the fresh sums, 64x64 ones would spill).
        entry<Shape<64, 64, 32, 32, 32, 4, 0, true>>(), entry<Shape<32, 64, 32, 32, 32, 5, 0, true>>(),
        entry<Shape<64, 64, 32, 32, 32, 4, kCudaConvStemChannels, true>>()};
    int hopper = 0;
    const CudaConvKernelEntry* h = cuda_conv_tf32_sm90_entries(&hopper);
    t.insert(t.end(), h, h + hopper);
    h = cuda_conv_tf32_gemm_sm90_entries(&hopper);
    t.insert(t.end(), h, h + hopper);
    return t;
  }();
  return table;
}

int entry_count() { return static_cast<int>(entries().size()); }

}  // namespace

cudaError_t cuda_conv_tf32_add_slices(const CudaConvProblem& p, int split, const float* partials,
                                      cudaStream_t stream) {
  const int64_t n4 = int64_t(p.n) * p.p * p.q * p.k / 4;
  if (split < 1 || n4 <= 0 || !partials || !p.y || p.k % 4 != 0) return cudaErrorInvalidValue;
  const int blocks = static_cast<int>(std::min<int64_t>((n4 + 255) / 256, 4096));
  add_slices_kernel<<<blocks, 256, 0, stream>>>(reinterpret_cast<const float4*>(partials), n4, split,
                                                reinterpret_cast<const float4*>(p.bias), p.k / 4,
                                                reinterpret_cast<float4*>(p.y));
  return cudaGetLastError();
}

int cuda_conv_tf32_config_count() { return entry_count(); }

CudaConvConfig cuda_conv_tf32_config(int index) {
  return index >= 0 && index < entry_count() ? entries()[index].config : CudaConvConfig{};
}

cudaError_t cuda_conv_tf32_blocks_per_sm(int index, int* blocks) {
  if (index < 0 || index >= entry_count()) return cudaErrorInvalidValue;
  const CudaConvKernelEntry& e = entries()[index];
  return cuda_kernel_blocks_per_sm(e.kernel, e.config.threads, e.config.smem_bytes, blocks);
}

cudaError_t cuda_conv_tf32_check(int index, const CudaConvProblem& p, int split) {
  if (index < 0 || index >= entry_count()) return cudaErrorInvalidValue;
  return entries()[index].check(p, split);
}

cudaError_t cuda_conv_tf32_launch(int index, const CudaConvProblem& p, int split, int* semaphores, float* partials,
                                  cudaStream_t stream) {
  if (index < 0 || index >= entry_count()) return cudaErrorInvalidValue;
  return entries()[index].launch(p, split, semaphores, partials, stream);
}

}  // namespace aotirt
