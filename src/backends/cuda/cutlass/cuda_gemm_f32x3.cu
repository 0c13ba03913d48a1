// The 3xTF32 kernels of cuda_gemm_f32x3.h, built from CUTLASS's Ampere
// multistage GEMM (cp.async into shared memory, mma.sync m16n8k8 on TF32,
// OpMultiplyAddFastF32 for the split into head and rest), which runs on
// sm_80 and later: single GEMMs with a serial k split, and batched ones.
//
// One change to CUTLASS's warp step: mma.sync adds into its float32
// accumulators with truncation, so a single accumulator per output drifts
// toward zero by about k * 2^-24 of the sum (a hand-written 3xTF32 GEMM with
// one accumulator was 30 times less accurate than cuBLAS's float32 GEMM at
// 197x768x3072: 1.1e-3 against 3.5e-5, bench/notes.md). FreshSumMma
// (cuda_cutlass_fresh_sum.h) takes each warp step (8 values of k, three mma each) into zeroed
// accumulators and adds them to the running sums with a rounded float32 add.
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/gemm.h>
#include <cutlass/gemm/kernel/default_gemm.h>
#include <cutlass/gemm/kernel/gemm.h>
#include <cutlass/gemm/kernel/gemm_batched.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>

#include <type_traits>

#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_cutlass_fresh_sum.h"

namespace aotirt {
namespace {

// CUTLASS's default multistage mainloop |M| with FreshSumMma as its warp step.
template <class M>
using FreshSumMainloop = cutlass::gemm::threadblock::MmaMultistage<
    typename M::Shape, typename M::IteratorA, typename M::SmemIteratorA, M::kCacheOpA, typename M::IteratorB,
    typename M::SmemIteratorB, M::kCacheOpB, typename M::ElementC, typename M::LayoutC,
    cutlass::gemm::threadblock::MmaPolicy<FreshSumMma<typename M::Policy::Operator>,
                                          typename M::Policy::SmemPaddingA, typename M::Policy::SmemPaddingB,
                                          M::Policy::kPartitionsK>,
    M::kStages>;

using RowMajor = cutlass::layout::RowMajor;
using ColumnMajor = cutlass::layout::ColumnMajor;
using SingleSwizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>;
using BatchSwizzle = cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle;

// A kernel shape: TM x TN output tiles of 32x32 warp tiles, |Stages| deep;
// OutAlign floats per access of C and D (4: 16-byte rows and starts); B
// column-major (k contiguous) or row-major; single (with a serial k split)
// or batched.
template <int TM, int TN, int Stages, int OutAlign, class LayoutB, bool Batched>
struct Shape {
  using Epilogue = cutlass::epilogue::thread::LinearCombination<float, OutAlign, float, float>;
  using Swizzle = std::conditional_t<Batched, BatchSwizzle, SingleSwizzle>;
  using Default = typename cutlass::gemm::kernel::DefaultGemm<
      float, RowMajor, 4, float, LayoutB, 4, float, RowMajor, float, cutlass::arch::OpClassTensorOp,
      cutlass::arch::Sm80, cutlass::gemm::GemmShape<TM, TN, 16>, cutlass::gemm::GemmShape<32, 32, 16>,
      cutlass::gemm::GemmShape<16, 8, 8>, Epilogue, SingleSwizzle, Stages, /*SplitKSerial=*/!Batched,
      cutlass::arch::OpMultiplyAddFastF32>::GemmKernel;
  using Mainloop = FreshSumMainloop<typename Default::Mma>;
  using Kernel = std::conditional_t<
      Batched, cutlass::gemm::kernel::GemmBatched<Mainloop, typename Default::Epilogue, Swizzle>,
      cutlass::gemm::kernel::Gemm<Mainloop, typename Default::Epilogue, Swizzle, /*SplitKSerial=*/true>>;
  using LayoutBType = LayoutB;
  static constexpr int kOutAlign = OutAlign;
  static constexpr bool kBatched = Batched;
  static constexpr bool kBRowMajor = std::is_same<LayoutB, RowMajor>::value;
  static constexpr int kSmem = static_cast<int>(sizeof(typename Kernel::SharedStorage));
};

template <class S>
cudaError_t launch(const CudaF32x3Problem& p, int split, int* semaphores, cudaStream_t stream) {
  using Kernel = typename S::Kernel;
  using LayoutB = typename S::LayoutBType;
  const cutlass::gemm::GemmCoord size(p.m, p.n, p.k);
  if (p.b_row_major != S::kBRowMajor || (p.batch > 1) != S::kBatched) return cudaErrorInvalidValue;
  // Rows of a row-major B are read 4 floats at a time along n.
  if (S::kBRowMajor && p.n % 4 != 0) return cudaErrorInvalidValue;
  // With beta 0 the epilogue reads no source; D stands in for a null C.
  const float* c = p.c ? p.c : p.d;
  const int64_t ldc = p.c ? p.ldc : p.ldd;
  typename Kernel::Mma::IteratorA::TensorRef ref_a(const_cast<float*>(p.a), RowMajor(p.lda));
  typename Kernel::Mma::IteratorB::TensorRef ref_b(const_cast<float*>(p.b), LayoutB(p.ldb));
  typename Kernel::Epilogue::OutputTileIterator::TensorRef ref_c(const_cast<float*>(c), RowMajor(ldc));
  typename Kernel::Epilogue::OutputTileIterator::TensorRef ref_d(p.d, RowMajor(p.ldd));
  // Starts, row strides and batch strides against the 4-float accesses of A
  // and B and the OutAlign-float ones of C and D.
  const bool strides_ok = p.stride_a % 4 == 0 && p.stride_b % 4 == 0 && p.stride_c % S::kOutAlign == 0 &&
                          p.stride_d % S::kOutAlign == 0;
  if (!strides_ok || !cutlass::TensorRef_aligned(ref_a, 4) || !cutlass::TensorRef_aligned(ref_b, 4) ||
      !cutlass::TensorRef_aligned(ref_c, S::kOutAlign) || !cutlass::TensorRef_aligned(ref_d, S::kOutAlign))
    return cudaErrorInvalidValue;
  typename Kernel::ThreadblockSwizzle swizzle;
  const cutlass::gemm::GemmCoord tile{Kernel::Mma::Shape::kM, Kernel::Mma::Shape::kN, Kernel::Mma::Shape::kK};
  const typename S::Epilogue::Params epilogue(p.alpha, p.beta);
  if constexpr (S::kBatched) {
    if (split != 1) return cudaErrorInvalidValue;
    const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(size, tile, p.batch);
    typename Kernel::Params params(size, tiled, ref_a, p.stride_a, ref_b, p.stride_b, ref_c, p.c ? p.stride_c : p.stride_d,
                                   ref_d, p.stride_d, epilogue, p.batch);
    cutlass::Kernel<Kernel><<<swizzle.get_grid_shape(tiled), Kernel::kThreadCount, S::kSmem, stream>>>(params);
  } else {
    if (split > 1 && !semaphores) return cudaErrorInvalidValue;
    const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(size, tile, split);
    typename Kernel::Params params(size, tiled, ref_a, ref_b, ref_c, ref_d, epilogue, semaphores);
    cutlass::Kernel<Kernel><<<swizzle.get_grid_shape(tiled), Kernel::kThreadCount, S::kSmem, stream>>>(params);
  }
  return cudaGetLastError();
}

struct Entry {
  CudaF32x3Config config;
  const void* kernel;
  cudaError_t (*launch)(const CudaF32x3Problem&, int, int*, cudaStream_t);
};

template <class S>
Entry entry() {
  CudaF32x3Config c;
  c.tile_m = S::Kernel::Mma::Shape::kM;
  c.tile_n = S::Kernel::Mma::Shape::kN;
  c.threads = S::Kernel::kThreadCount;
  c.smem_bytes = S::kSmem;
  c.out_align = S::kOutAlign;
  c.b_row_major = S::kBRowMajor;
  c.batched = S::kBatched;
  return Entry{c, reinterpret_cast<const void*>(cutlass::Kernel<typename S::Kernel>), &launch<S>};
}

// The shapes built: 32x32 warp tiles throughout (64 accumulators a thread
// with the fresh sums, where 64x64 warp tiles would spill). Blocks of eight
// warps (64x128, 128x64) were measured too and never ran faster than two
// 64x64 blocks: one block of four warps keeps an SM's tensor cores as busy
// as these kernels can. The unaligned shape takes C and D of any row stride
// and start (a classifier with 10 outputs, say).
template <class LayoutB, bool Batched>
using Tile64 = Shape<64, 64, 4, 4, LayoutB, Batched>;
template <class LayoutB, bool Batched>
using Tile32 = Shape<32, 64, 5, 4, LayoutB, Batched>;
template <class LayoutB>
using Tile32Unaligned = Shape<32, 64, 5, 1, LayoutB, false>;

const Entry* entries() {
  static const Entry table[] = {
      entry<Tile64<ColumnMajor, false>>(), entry<Tile32<ColumnMajor, false>>(), entry<Tile32Unaligned<ColumnMajor>>(),
      entry<Tile64<RowMajor, false>>(),    entry<Tile32<RowMajor, false>>(),    entry<Tile32Unaligned<RowMajor>>(),
      entry<Tile64<ColumnMajor, true>>(),  entry<Tile32<ColumnMajor, true>>(),  entry<Tile64<RowMajor, true>>(),
      entry<Tile32<RowMajor, true>>()};
  return table;
}
constexpr int kEntries = 10;

}  // namespace

int cuda_f32x3_config_count() { return kEntries; }

CudaF32x3Config cuda_f32x3_config(int index) {
  return index >= 0 && index < kEntries ? entries()[index].config : CudaF32x3Config{};
}

cudaError_t cuda_f32x3_blocks_per_sm(int index, int* blocks) {
  if (index < 0 || index >= kEntries) return cudaErrorInvalidValue;
  const Entry& e = entries()[index];
  return cuda_kernel_blocks_per_sm(e.kernel, e.config.threads, e.config.smem_bytes, blocks);
}

cudaError_t cuda_f32x3_launch(int index, const CudaF32x3Problem& p, int split, int* semaphores,
                              cudaStream_t stream) {
  if (index < 0 || index >= kEntries || split < 1 || p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch < 1 ||
      p.k % kCudaF32x3KMultiple != 0)
    return cudaErrorInvalidValue;
  return entries()[index].launch(p, split, semaphores, stream);
}

}  // namespace aotirt
