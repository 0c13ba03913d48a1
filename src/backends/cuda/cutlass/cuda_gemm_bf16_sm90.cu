// The Hopper kernels of cuda_gemm_bf16.h: CUTLASS's sm_90 GEMM, whose
// producer warp loads A and B through the tensor memory accelerator while
// two consumer warpgroups multiply on wgmma (bfloat16 operands, float32
// accumulators) in ping-pong: each warpgroup owns a 64x128 output tile,
// and one's epilogue runs while the other's mainloop has the tensor cores.
// The blocks are persistent (one an SM, walking the tiles). These ran
// GPT-2's 512-token projections, whose few tiles (the MLP projection: 24 of
// 128x128, k 3072) leave most SMs idle, in little more than half the time
// of CUTLASS's cooperative 128x128 kernel with a stream-K scheduler, and
// the other products as fast (bench/notes.md, row 32).
//
// Output D = alpha * A @ B (+ a bias row), rounded to bfloat16 once; no
// general C. This file is built for sm_90a only (wgmma is not part of
// compute_90): on any other GPU its kernels have no image and the kernel
// table leaves them out. The tensor maps are encoded on the host by the
// driver, which CUTLASS reaches through cudaGetDriverEntryPoint.
#include <cutlass/cutlass.h>
// Before the collectives, which use it without including it.
#include <cutlass/kernel_hardware_info.hpp>

#include <cute/tensor.hpp>
#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_gemm_bf16_entry.h"

namespace aotirt {
namespace {

using namespace cute;
using Bf16 = cutlass::bfloat16_t;
using RowMajor = cutlass::layout::RowMajor;
using ColumnMajor = cutlass::layout::ColumnMajor;

// A TM x TN output tile a consumer warpgroup (TM 64: one wgmma's rows), 64
// k elements a stage (one 128-byte swizzle row of bfloat16), one-SM
// clusters (two-SM ones, multicasting B, timed no faster), as many stages
// as shared memory holds beside the epilogue's. B column-major (k
// contiguous: a tied embedding read as the output layer) or row-major
// (GPT-2's Conv1D weights, [in, out]).
template <int TM, int TN, class LayoutB>
struct Sm90Shape {
  using Tile = Shape<Int<TM>, Int<TN>, _64>;
  using Cluster = Shape<_1, _1, _1>;
  // No C operand (void); the bias is a row broadcast down the columns,
  // read only when its pointer is set.
  using Fusion = cutlass::epilogue::fusion::LinCombPerColBias<Bf16, float, Bf16, Bf16, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
      float, float, void, RowMajor, 8, Bf16, RowMajor, 8, cutlass::epilogue::TmaWarpSpecialized, Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Bf16, RowMajor, 8, Bf16, LayoutB, 8, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;
  // void: the persistent tile scheduler.
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, void>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static constexpr bool kBRowMajor = std::is_same<LayoutB, RowMajor>::value;
  static constexpr int kTileM = TM, kTileN = TN;
};

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// The CUTLASS arguments for |p|, or an error for a problem these kernels
// do not take: a general C (only none or a bias row), a split (they do not
// split k), misaligned operands, bias or output rows.
template <class S>
cudaError_t arguments(const CudaBf16Problem& p, int split, typename S::Gemm::Arguments* args) {
  const bool bias = p.c != nullptr && p.beta != 0.f;
  if (split != 1 || p.b_row_major != S::kBRowMajor || (bias && (p.ldc != 0 || p.beta != 1.f || p.n % 8 != 0)) ||
      (!bias && p.beta != 0.f) || !aligned16(p.a) || !aligned16(p.b) || !aligned16(p.d) ||
      (bias && !aligned16(p.c)) || p.lda % 8 != 0 || p.ldb % 8 != 0 || p.ldd % 8 != 0 || p.k % 8 != 0)
    return cudaErrorInvalidValue;
  using Kernel = typename S::Kernel;
  typename Kernel::StrideA stride_a{};
  get<0>(stride_a) = p.lda;
  typename Kernel::StrideB stride_b{};
  // (n, k) strides: k contiguous for a column-major B, n for a row-major one.
  if constexpr (S::kBRowMajor)
    get<1>(stride_b) = p.ldb;
  else
    get<0>(stride_b) = p.ldb;
  typename Kernel::StrideD stride_d{};
  get<0>(stride_d) = p.ldd;
  *args = typename S::Gemm::Arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                      {p.m, p.n, p.k, 1},
                                      {static_cast<const Bf16*>(p.a), stride_a, static_cast<const Bf16*>(p.b), stride_b},
                                      {{}, nullptr, typename Kernel::StrideC{}, static_cast<Bf16*>(p.d), stride_d}};
  args->epilogue.thread.alpha = p.alpha;
  args->epilogue.thread.beta = 0.f;
  args->epilogue.thread.bias_ptr = bias ? static_cast<const Bf16*>(p.c) : nullptr;
  args->hw_info.sm_count = cuda_current_sm_count();
  cudaGetDevice(&args->hw_info.device_id);
  if (S::Gemm::can_implement(*args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
  return cudaSuccess;
}

template <class S>
cudaError_t workspace_bytes(const CudaBf16Problem& p, int split, size_t* bytes) {
  typename S::Gemm::Arguments args;
  const cudaError_t ok = arguments<S>(p, split, &args);
  if (ok != cudaSuccess) return ok;
  *bytes = S::Gemm::get_workspace_size(args);
  return cudaSuccess;
}

template <class S>
cudaError_t launch(const CudaBf16Problem& p, int split, float* workspace, cudaStream_t stream) {
  typename S::Gemm::Arguments args;
  const cudaError_t ok = arguments<S>(p, split, &args);
  if (ok != cudaSuccess) return ok;
  if (S::Gemm::get_workspace_size(args) > 0 && (!workspace || !aligned16(workspace))) return cudaErrorInvalidValue;
  typename S::Gemm gemm;
  // Also prepares |workspace| where the scheduler asks for one (a memset
  // on |stream|) and has the driver encode the tensor maps.
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess) {
    const cudaError_t err = cudaGetLastError();
    return err != cudaSuccess ? err : cudaErrorInvalidValue;
  }
  if (gemm.run(stream) != cutlass::Status::kSuccess) {
    const cudaError_t err = cudaGetLastError();
    return err != cudaSuccess ? err : cudaErrorLaunchFailure;
  }
  return cudaGetLastError();
}

template <class S>
CudaBf16KernelEntry entry() {
  CudaBf16Config c;
  c.tile_m = S::kTileM;
  c.tile_n = S::kTileN;
  c.threads = static_cast<int>(S::Kernel::MaxThreadsPerBlock);
  c.smem_bytes = static_cast<int>(S::Kernel::SharedStorageSize);
  c.out_align = 8;
  c.b_row_major = S::kBRowMajor;
  c.split_k = false;
  c.sm90 = true;
  return CudaBf16KernelEntry{c, reinterpret_cast<const void*>(cutlass::device_kernel<typename S::Kernel>),
                             &launch<S>, &workspace_bytes<S>};
}

}  // namespace

const CudaBf16KernelEntry* cuda_gemm_bf16_sm90_entries(int* count) {
  // 64x64 tiles for products of few columns (96 blocks where 64x128 tiles
  // give 48), 64x192 for those of a few thousand (one tile a block where
  // 64x128 tiles give some blocks two), each for both layouts of B: a
  // Linear's weight is read column-major, a Conv1D's (GPT-2's own) row-major.
  static const CudaBf16KernelEntry table[] = {
      entry<Sm90Shape<64, 128, ColumnMajor>>(), entry<Sm90Shape<64, 128, RowMajor>>(),
      entry<Sm90Shape<64, 64, RowMajor>>(),     entry<Sm90Shape<64, 192, RowMajor>>(),
      entry<Sm90Shape<64, 64, ColumnMajor>>(),  entry<Sm90Shape<64, 192, ColumnMajor>>()};
  *count = static_cast<int>(sizeof(table) / sizeof(table[0]));
  return table;
}

}  // namespace aotirt
