// The Hopper kernels of cuda_conv_tf32.h: CUTLASS's sm_90 implicit-GEMM
// forward convolution, whose producer warp loads the input through the
// tensor memory accelerator in im2col mode (and the filters in tiled mode)
// while one consumer warpgroup multiplies on wgmma (TF32, float32
// accumulators), a block an output tile. Ampere's mma.sync kernels
// (cuda_conv_tf32.cu) reach a fraction of Hopper's TF32 rate on ResNet-50's
// batch-32 convolutions; these are for the large ones.
//
// This file is built for sm_90a only (wgmma and the im2col loads are not
// part of compute_90): on any other GPU its kernels have no image and the
// kernel table leaves them out. The tensor maps are encoded on the host by
// the driver, which CUTLASS reaches through cudaGetDriverEntryPoint: this
// library links no libcuda. TF32 only and no bias: such problems stay on
// the Ampere kernels. CUTLASS has no channel split for them, so a split is
// one launch per slice of whole k steps, each a view of its channels with
// the full tensors' strides, on streams forked for them (cuda_fork.h), and
// the Ampere kernels' second kernel adds the parts: ResNet-50's 3x3
// convolutions with 7x7 outputs are 52 tiles of 128x128 at batch 32 for
// 132 SMs.
#include <cutlass/cutlass.h>
// Before the collectives, which use it without including it.
#include <cutlass/kernel_hardware_info.hpp>

#include <cute/tensor.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/device/conv_universal_adapter.hpp>
#include <cutlass/conv/dispatch_policy.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_conv_sm90_pingpong.h"
#include "backends/cuda/cutlass/cuda_conv_tf32_sm90_calls.h"

namespace aotirt {
namespace {

using namespace cute;
using Nhwc = cutlass::layout::TensorNHWC;

// A TM x TN output tile, 32 channels per k step (one 128-byte swizzle row of
// floats), one-SM clusters, |Stages| deep (0: as many as shared memory
// holds; fewer let the small tiles put two or three blocks on an SM, so one's
// epilogue overlaps another's loads). CUTLASS 4.2 has no persistent or
// cooperative schedule for convolutions: its kernel is one producer warp
// (TMA) and one consumer warpgroup, a block a tile; |Pingpong| runs the
// same collectives in aotirt's persistent kernel instead
// (cuda_conv_sm90_pingpong.h: two consumer warpgroups, a tile each in
// turn), whose shared memory holds the epilogue's buffers beside the
// stages, not in their place.
template <int TM, int TN, int Stages, bool Pingpong = false>
struct Sm90Shape {
  using Tile = Shape<Int<TM>, Int<TN>, Shape<_32>>;
  using Cluster = Shape<_1, _1, _1>;
  // No C operand (void): the output is alpha * the accumulators.
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float, void, Nhwc, 4, float, Nhwc, 4, cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;
  // The ping-pong kernel's order barrier and epilogue pipeline: a little
  // more than the base kernel's.
  static constexpr int kCarveout = static_cast<int>(sizeof(typename Epilogue::SharedStorage)) + (Pingpong ? 256 : 0);
  using StageCount =
      std::conditional_t<Stages == 0, cutlass::conv::collective::StageCountAutoCarveout<kCarveout>,
                         cutlass::conv::collective::StageCount<(Stages > 0 ? Stages : 1)>>;
  using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop, float, Nhwc, 4, float, Nhwc,
      4, float, Tile, Cluster, StageCount, cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;
  using Problem = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, 2>;
  using Kernel = std::conditional_t<Pingpong, CudaConvSm90Pingpong<Problem, Mainloop, Epilogue>,
                                    cutlass::conv::kernel::ConvUniversal<Problem, Mainloop, Epilogue>>;
  using Op = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
  static constexpr int kTileM = TM, kTileN = TN, kTileK = 32;
  static constexpr bool kPingpong = Pingpong;
};

// |p| over |c| of its input channels, the tensors' rows |p.c| floats apart
// (a slice of a channel split: the view of channels c0 .. c0 + c, its
// pointers moved to c0 by the caller); c = p.c is the whole problem.
template <class S>
typename S::Problem problem_shape(const CudaConvProblem& p, int c) {
  const int64_t row = p.c;
  return typename S::Problem(cutlass::conv::Mode::kCrossCorrelation, {p.n, p.h, p.w, c},
                             {int64_t(p.h) * p.w * row, int64_t(p.w) * row, row, 1}, {p.k, p.r, p.s, c},
                             {int64_t(p.r) * p.s * row, int64_t(p.s) * row, row, 1}, {p.pad_h, p.pad_w},
                             {p.pad_h, p.pad_w}, {p.stride_h, p.stride_w}, {p.dil_h, p.dil_w},
                             /*groups=*/1);
}

// The output of |p|'s arguments goes to |y| (p.y, or a split's part).
template <class S>
typename S::Op::Arguments conv_arguments(const CudaConvProblem& p, const typename S::Problem& shape, float* y) {
  using StrideD = typename S::Kernel::StrideD;
  StrideD stride_d{};
  // The output's strides, outermost mode first in ConvProblemShape and
  // innermost first in the epilogue's stride.
  cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{},
                 [&](auto i) { cute::get<0, i>(stride_d) = shape.stride_C[S::Problem::RankT - 2 - i]; });
  typename S::Op::Arguments args{
      shape,
      {p.x, p.filter},
      {{1.f, 0.f}, nullptr, typename S::Kernel::StrideC{}, y, stride_d}};
  args.hw_info.sm_count = cuda_current_sm_count();
  cudaGetDevice(&args.hw_info.device_id);
  return args;
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// The channels of each slice when |p|'s are split |split| ways: whole k
// steps (32 channels) each, the same for every slice; 0 where |p| cannot
// be split so.
template <class S>
int slice_channels(const CudaConvProblem& p, int split) {
  if (split < 1 || split > kCudaMaxForks || p.c % (S::kTileK * split) != 0) return 0;
  return p.c / split;
}

// The checks that need no driver call: sizes, alignment, a problem CUTLASS
// takes (padding and corner limits of the im2col loads), an output of the
// size PyTorch computed. For a split, its first slice's arguments (each
// slice's tensors are as aligned: a slice starts a multiple of 32 channels
// on).
template <class S>
cudaError_t check_shape(const CudaConvProblem& p, int split, typename S::Op::Arguments* args) {
  const int c = slice_channels<S>(p, split);
  if (p.n <= 0 || p.h <= 0 || p.w <= 0 || p.c <= 0 || p.k <= 0 || p.r <= 0 || p.s <= 0 || p.p <= 0 || p.q <= 0 ||
      (split != 1 && c == 0) || p.bias || !p.x || !p.filter || !p.y || p.c % 4 != 0 || p.k % 4 != 0 ||
      !aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.y))
    return cudaErrorInvalidValue;
  // The tensor maps index each dimension with 32 bits.
  const uint64_t limit = uint64_t(1) << 31;
  if (uint64_t(p.n) * p.h * p.w * p.c >= limit || uint64_t(p.k) * p.r * p.s * p.c >= limit ||
      uint64_t(p.n) * p.p * p.q * p.k >= limit)
    return cudaErrorInvalidValue;
  const typename S::Problem shape = problem_shape<S>(p, split == 1 ? p.c : c);
  if (shape.shape_C[0] != p.n || shape.shape_C[1] != p.p || shape.shape_C[2] != p.q || shape.shape_C[3] != p.k)
    return cudaErrorInvalidValue;
  *args = conv_arguments<S>(p, shape, p.y);
  if (S::Op::can_implement(*args) != cutlass::Status::kSuccess || S::Op::get_workspace_size(*args) != 0)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Slice |slice| of |split|: channels slice * c .. (slice + 1) * c of the
// input and filters, its sums to its own part of |partials| (the parts
// n * p * q * k floats apart, as cuda_conv_tf32_add_slices reads them).
template <class S>
cudaError_t slice_arguments(const CudaConvProblem& p, int split, int slice, float* partials,
                            typename S::Op::Arguments* args) {
  const int c = slice_channels<S>(p, split);
  if (c == 0 || slice < 0 || slice >= split || !partials) return cudaErrorInvalidValue;
  CudaConvProblem part = p;
  part.x = p.x + int64_t(slice) * c;
  part.filter = p.filter + int64_t(slice) * c;
  *args = conv_arguments<S>(part, problem_shape<S>(p, c), partials + int64_t(slice) * p.n * p.p * p.q * p.k);
  return cudaSuccess;
}

template <class S>
CudaConvKernelEntry entry() {
  return CudaSm90ConvCalls<S, &check_shape<S>, &slice_arguments<S>>::entry(/*gemm_1x1=*/false, S::kPingpong);
}

}  // namespace

const CudaConvKernelEntry* cuda_conv_tf32_sm90_entries(int* count) {
  // 128x128 tiles in the persistent ping-pong kernel, as deep a pipeline
  // as fits (one block an SM); 128x64 and 64x128 for 64-channel layers and
  // fewer output pixels; 64x256 for wide layers with few pixels; 64x64 for
  // the smallest, three blocks an SM.
  static const CudaConvKernelEntry table[] = {
      entry<Sm90Shape<128, 128, 0, true>>(),
      entry<Sm90Shape<128, 64, 4>>(), entry<Sm90Shape<64, 128, 4>>(), entry<Sm90Shape<64, 256, 3>>(),
      entry<Sm90Shape<64, 64, 4>>()};
  *count = static_cast<int>(sizeof(table) / sizeof(table[0]));
  return table;
}

}  // namespace aotirt
