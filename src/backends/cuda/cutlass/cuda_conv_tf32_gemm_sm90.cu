// Hopper GEMM kernels for the 1x1 convolutions of cuda_conv_tf32.h (stride
// 1, no padding: on channels-last tensors such a convolution is the product
// [n * h * w, c] x [c, k] of the input's rows and the filters, with no
// im2col at all). CUTLASS's sm_90 GEMM: a producer warp loads both
// operands through the tensor memory accelerator, two consumer warpgroups
// multiply on wgmma (TF32, float32 accumulators) in ping-pong, a 64-row
// tile each, so that one's epilogue (the output's store) runs while the
// other's mainloop has the tensor cores; the blocks are persistent, one an
// SM. Most of ResNet-50's 1x1 convolutions at batch 32 reduce over 64-512
// channels and are bound by the output's stores, which the implicit-GEMM
// kernels (cuda_conv_tf32_sm90.cu: a block a tile, one consumer warpgroup)
// do not overlap with anything.
//
// TF32 wgmma reads both operands k-major: the input's rows are (c
// contiguous), and so are the filters' ([k, c], a column-major B). TF32
// only, no bias, no channel split. Built for sm_90a alone, as the other
// Hopper kernels.
#include <cutlass/cutlass.h>
// Before the collectives, which use it without including it.
#include <cutlass/kernel_hardware_info.hpp>

#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

#include <cstdint>

#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_conv_tf32_sm90_calls.h"

namespace aotirt {
namespace {

using namespace cute;
using RowMajor = cutlass::layout::RowMajor;
using ColumnMajor = cutlass::layout::ColumnMajor;

// A 64 x TN output tile a consumer warpgroup, 32 k elements a stage (one
// 128-byte swizzle row of floats), one-SM clusters, as many stages as
// shared memory holds beside the epilogue's.
template <int TN>
struct Sm90GemmShape {
  using Tile = Shape<_64, Int<TN>, _32>;
  using Cluster = Shape<_1, _1, _1>;
  // No C operand (void): the output is alpha * the accumulators.
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float, void, RowMajor, 4, float, RowMajor, 4, cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, RowMajor, 4, float, ColumnMajor, 4, float, Tile,
      Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;
  // void: the persistent tile scheduler.
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, void>;
  using Op = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr int kTileM = 64, kTileN = TN, kTileK = 32;
};

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// The CUTLASS arguments for |p|, or an error for a problem that is not a
// plain product of the input's rows: a filter larger than 1x1, a stride,
// padding, an output of another size, a bias, a split, channel counts that
// are not multiples of 4, misaligned pointers.
template <class S>
cudaError_t arguments(const CudaConvProblem& p, int split, typename S::Op::Arguments* args) {
  if (p.n <= 0 || p.h <= 0 || p.w <= 0 || p.c <= 0 || p.k <= 0 || p.r != 1 || p.s != 1 || p.stride_h != 1 ||
      p.stride_w != 1 || p.pad_h != 0 || p.pad_w != 0 || p.p != p.h || p.q != p.w || split != 1 || p.bias || !p.x ||
      !p.filter || !p.y || p.c % 4 != 0 || p.k % 4 != 0 || !aligned16(p.x) || !aligned16(p.filter) ||
      !aligned16(p.y))
    return cudaErrorInvalidValue;
  // The tensor maps index each dimension with 32 bits.
  const uint64_t rows = uint64_t(p.n) * p.h * p.w, limit = uint64_t(1) << 31;
  if (rows >= limit || rows * p.c >= limit || rows * p.k >= limit || uint64_t(p.k) * p.c >= limit)
    return cudaErrorInvalidValue;
  using Kernel = typename S::Kernel;
  typename Kernel::StrideA stride_a{};
  get<0>(stride_a) = p.c;
  typename Kernel::StrideB stride_b{};
  get<0>(stride_b) = p.c;
  typename Kernel::StrideD stride_d{};
  get<0>(stride_d) = p.k;
  *args = typename S::Op::Arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {static_cast<int>(rows), p.k, p.c, 1},
                                    {p.x, stride_a, p.filter, stride_b},
                                    {{1.f, 0.f}, nullptr, typename Kernel::StrideC{}, p.y, stride_d}};
  args->hw_info.sm_count = cuda_current_sm_count();
  cudaGetDevice(&args->hw_info.device_id);
  if (S::Op::can_implement(*args) != cutlass::Status::kSuccess || S::Op::get_workspace_size(*args) != 0)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

template <class S>
CudaConvKernelEntry entry() {
  return CudaSm90ConvCalls<S, &arguments<S>>::entry(/*gemm_1x1=*/true);
}

}  // namespace

const CudaConvKernelEntry* cuda_conv_tf32_gemm_sm90_entries(int* count) {
  // 64 output channels (ResNet-50's first stage), 128, and 256 for the
  // wide ones.
  static const CudaConvKernelEntry table[] = {entry<Sm90GemmShape<64>>(), entry<Sm90GemmShape<128>>(),
                                              entry<Sm90GemmShape<256>>()};
  *count = static_cast<int>(sizeof(table) / sizeof(table[0]));
  return table;
}

}  // namespace aotirt
