// The bfloat16 tensor-core kernels of cuda_gemm_bf16.h, from CUTLASS's
// Ampere multistage GEMM (cp.async into shared memory, mma.sync m16n8k16
// with float32 accumulators), which runs on sm_80 and later. A k split is
// parallel: each slice writes its float32 sums to a workspace and a second
// kernel adds them, applies alpha, beta and C, and rounds to bfloat16 once
// (CUTLASS's serial split would add the slices in D, in bfloat16).
#include <cutlass/cutlass.h>
#include <cutlass/bfloat16.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/gemm.h>
#include <cutlass/gemm/kernel/default_gemm.h>
#include <cutlass/gemm/kernel/default_gemm_splitk_parallel.h>
#include <cutlass/gemm/kernel/gemm.h>
#include <cutlass/gemm/kernel/gemm_splitk_parallel.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/launch/cuda_kernel_occupancy.h"
#include "backends/cuda/cutlass/cuda_gemm_bf16_entry.h"

namespace aotirt {
namespace {

using Bf16 = cutlass::bfloat16_t;
using RowMajor = cutlass::layout::RowMajor;
using ColumnMajor = cutlass::layout::ColumnMajor;
using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>;

// A kernel shape: TM x TN output tiles of WM x WN warp tiles, k steps of
// 32, |Stages| deep; OutAlign elements per access of C and D (8: 16-byte
// rows and starts); B column-major (k contiguous) or row-major.
template <int TM, int TN, int WM, int WN, int Stages, int OutAlign, class LayoutB>
struct Shape {
  using Epilogue = cutlass::epilogue::thread::LinearCombination<Bf16, OutAlign, float, float>;
  using Kernel = typename cutlass::gemm::kernel::DefaultGemm<
      Bf16, RowMajor, 8, Bf16, LayoutB, 8, Bf16, RowMajor, float, cutlass::arch::OpClassTensorOp,
      cutlass::arch::Sm80, cutlass::gemm::GemmShape<TM, TN, 32>, cutlass::gemm::GemmShape<WM, WN, 32>,
      cutlass::gemm::GemmShape<16, 8, 16>, Epilogue, Swizzle, Stages, /*SplitKSerial=*/false,
      cutlass::arch::OpMultiplyAdd>::GemmKernel;
  using LayoutBType = LayoutB;
  static constexpr int kOutAlign = OutAlign;
  static constexpr bool kBRowMajor = std::is_same<LayoutB, RowMajor>::value;
  static constexpr bool kSplit = false;
  static constexpr int kSmem = static_cast<int>(sizeof(typename Kernel::SharedStorage));
};

// A split shape: TM x TN tiles whose k slices write float32 sums.
template <int TM, int TN, int WM, int WN, int Stages, class LayoutB>
struct SplitShape {
  using Epilogue = cutlass::epilogue::thread::LinearCombination<float, 4, float, float>;
  using Kernel = typename cutlass::gemm::kernel::DefaultGemmSplitKParallel<
      Bf16, RowMajor, 8, Bf16, LayoutB, 8, float, RowMajor, float, cutlass::arch::OpClassTensorOp,
      cutlass::arch::Sm80, cutlass::gemm::GemmShape<TM, TN, 32>, cutlass::gemm::GemmShape<WM, WN, 32>,
      cutlass::gemm::GemmShape<16, 8, 16>, Epilogue, cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle,
      Stages, cutlass::arch::OpMultiplyAdd>::GemmKernel;
  using LayoutBType = LayoutB;
  static constexpr int kOutAlign = 8;  // of the bfloat16 D the reduction writes: any
  static constexpr bool kBRowMajor = std::is_same<LayoutB, RowMajor>::value;
  static constexpr bool kSplit = true;
  static constexpr int kSmem = static_cast<int>(sizeof(typename Kernel::SharedStorage));
};

// D = bf16(alpha * (sum of the slices) + beta * C): a thread per four
// columns of a row (one 16-byte load from each slice: |ldw| is a multiple
// of 4), the rows strided over the grid's y blocks: faster than one
// element a thread, with a 64-bit division each (bench/notes.md, row 31).
__global__ void reduce_slices_kernel(CudaBf16Problem p, int split, const float* ws, int64_t ldw) {
  const int64_t j = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (j >= p.n) return;
  const int64_t slice = static_cast<int64_t>(p.m) * ldw;
  const __nv_bfloat16* c = static_cast<const __nv_bfloat16*>(p.c);
  __nv_bfloat16* d = static_cast<__nv_bfloat16*>(p.d);
  for (int64_t i = blockIdx.y; i < p.m; i += gridDim.y) {
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    const float* w = ws + i * ldw + j;
    for (int s = 0; s < split; ++s, w += slice) {
      const float4 v = *reinterpret_cast<const float4*>(w);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    const float parts[4] = {sum.x, sum.y, sum.z, sum.w};
    for (int t = 0; t < 4 && j + t < p.n; ++t) {
      float v = p.alpha * parts[t];
      if (p.beta != 0.f) v += p.beta * __bfloat162float(c[i * p.ldc + j + t]);
      d[i * p.ldd + j + t] = __float2bfloat16_rn(v);
    }
  }
}

template <class S>
bool operands_ok(const CudaBf16Problem& p) {
  if (p.b_row_major != S::kBRowMajor) return false;
  if (S::kBRowMajor && p.n % 8 != 0) return false;
  typename S::Kernel::Mma::IteratorA::TensorRef ref_a(static_cast<Bf16*>(const_cast<void*>(p.a)), RowMajor(p.lda));
  typename S::Kernel::Mma::IteratorB::TensorRef ref_b(static_cast<Bf16*>(const_cast<void*>(p.b)),
                                                      typename S::LayoutBType(p.ldb));
  return cutlass::TensorRef_aligned(ref_a, 8) && cutlass::TensorRef_aligned(ref_b, 8);
}

template <class S>
cudaError_t launch(const CudaBf16Problem& p, int split, float* ws, cudaStream_t stream) {
  using Kernel = typename S::Kernel;
  using LayoutB = typename S::LayoutBType;
  if (!operands_ok<S>(p)) return cudaErrorInvalidValue;
  const cutlass::gemm::GemmCoord size(p.m, p.n, p.k);
  typename Kernel::Mma::IteratorA::TensorRef ref_a(static_cast<Bf16*>(const_cast<void*>(p.a)), RowMajor(p.lda));
  typename Kernel::Mma::IteratorB::TensorRef ref_b(static_cast<Bf16*>(const_cast<void*>(p.b)), LayoutB(p.ldb));
  const cutlass::gemm::GemmCoord tile{Kernel::Mma::Shape::kM, Kernel::Mma::Shape::kN, Kernel::Mma::Shape::kK};
  if constexpr (S::kSplit) {
    if (split < 2 || !ws || reinterpret_cast<uintptr_t>(ws) % 16 != 0 || p.k / 32 < split)
      return cudaErrorInvalidValue;
    const int64_t ldw = cuda_bf16_workspace_ld(p.n);
    typename Kernel::Epilogue::OutputTileIterator::TensorRef ref_w(ws, RowMajor(ldw));
    typename Kernel::ThreadblockSwizzle swizzle;
    const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(size, tile, split);
    typename Kernel::Params params(size, tiled, ref_a, ref_b, ref_w, typename S::Epilogue::Params(1.f, 0.f),
                                   static_cast<int64_t>(p.m) * ldw);
    cutlass::Kernel<Kernel><<<swizzle.get_grid_shape(tiled), Kernel::kThreadCount, S::kSmem, stream>>>(params);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    const unsigned col_blocks = static_cast<unsigned>((ldw / 4 + 127) / 128);
    const unsigned row_blocks = static_cast<unsigned>(std::min<int64_t>(p.m, 65535));
    reduce_slices_kernel<<<dim3(col_blocks, row_blocks), 128, 0, stream>>>(p, split, ws, ldw);
  } else {
    if (split != 1) return cudaErrorInvalidValue;
    // With beta 0 the epilogue reads no source; D stands in for a null C.
    const void* c = p.c ? p.c : p.d;
    const int64_t ldc = p.c ? p.ldc : p.ldd;
    typename Kernel::Epilogue::OutputTileIterator::TensorRef ref_c(static_cast<Bf16*>(const_cast<void*>(c)),
                                                                   RowMajor(ldc));
    typename Kernel::Epilogue::OutputTileIterator::TensorRef ref_d(static_cast<Bf16*>(p.d), RowMajor(p.ldd));
    if (!cutlass::TensorRef_aligned(ref_c, S::kOutAlign) || !cutlass::TensorRef_aligned(ref_d, S::kOutAlign))
      return cudaErrorInvalidValue;
    Swizzle swizzle;
    const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(size, tile, 1);
    typename Kernel::Params params(size, tiled, ref_a, ref_b, ref_c, ref_d,
                                   typename S::Epilogue::Params(p.alpha, p.beta), nullptr);
    cutlass::Kernel<Kernel><<<swizzle.get_grid_shape(tiled), Kernel::kThreadCount, S::kSmem, stream>>>(params);
  }
  return cudaGetLastError();
}

template <class S>
cudaError_t workspace_bytes(const CudaBf16Problem& p, int split, size_t* bytes) {
  *bytes = static_cast<size_t>(cuda_bf16_workspace_floats(p, S::kSplit ? split : 1)) * sizeof(float);
  return cudaSuccess;
}

template <class S>
CudaBf16KernelEntry entry() {
  CudaBf16Config c;
  c.tile_m = S::Kernel::Mma::Shape::kM;
  c.tile_n = S::Kernel::Mma::Shape::kN;
  c.threads = S::Kernel::kThreadCount;
  c.smem_bytes = S::kSmem;
  c.out_align = S::kOutAlign;
  c.b_row_major = S::kBRowMajor;
  c.split_k = S::kSplit;
  return CudaBf16KernelEntry{c, reinterpret_cast<const void*>(cutlass::Kernel<typename S::Kernel>), &launch<S>,
                             &workspace_bytes<S>};
}

// 128x128 tiles of 64x64 warp tiles for large products, 64x64 tiles of
// 32x32 for small ones (more blocks over the SMs), shapes of both that
// write C and D of any row stride and start (an output layer of 50257
// columns, say), and 128x128 tiles over k slices for products with few
// output tiles and a long k.
template <class LayoutB>
using Big = Shape<128, 128, 64, 64, 3, 8, LayoutB>;
template <class LayoutB>
using Small = Shape<64, 64, 32, 32, 4, 8, LayoutB>;
template <class LayoutB>
using BigUnaligned = Shape<128, 128, 64, 64, 3, 1, LayoutB>;
template <class LayoutB>
using SmallUnaligned = Shape<64, 64, 32, 32, 4, 1, LayoutB>;
template <class LayoutB>
using BigSplit = SplitShape<128, 128, 64, 64, 3, LayoutB>;

// The Ampere kernels, then the Hopper ones.
const std::vector<CudaBf16KernelEntry>& entries() {
  static const std::vector<CudaBf16KernelEntry> table = [] {
    std::vector<CudaBf16KernelEntry> t = {
        entry<Big<ColumnMajor>>(),          entry<Small<ColumnMajor>>(), entry<BigUnaligned<ColumnMajor>>(),
        entry<SmallUnaligned<ColumnMajor>>(), entry<BigSplit<ColumnMajor>>(), entry<Big<RowMajor>>(),
        entry<Small<RowMajor>>(),           entry<BigUnaligned<RowMajor>>(), entry<SmallUnaligned<RowMajor>>(),
        entry<BigSplit<RowMajor>>()};
    int count = 0;
    const CudaBf16KernelEntry* sm90 = cuda_gemm_bf16_sm90_entries(&count);
    t.insert(t.end(), sm90, sm90 + count);
    return t;
  }();
  return table;
}

}  // namespace

int cuda_bf16_config_count() { return static_cast<int>(entries().size()); }

CudaBf16Config cuda_bf16_config(int index) {
  return index >= 0 && index < cuda_bf16_config_count() ? entries()[index].config : CudaBf16Config{};
}

cudaError_t cuda_bf16_blocks_per_sm(int index, int* blocks) {
  if (index < 0 || index >= cuda_bf16_config_count()) return cudaErrorInvalidValue;
  const CudaBf16KernelEntry& e = entries()[index];
  return cuda_kernel_blocks_per_sm(e.kernel, e.config.threads, e.config.smem_bytes, blocks);
}

cudaError_t cuda_bf16_launch(int index, const CudaBf16Problem& p, int split, float* workspace,
                             cudaStream_t stream) {
  if (index < 0 || index >= cuda_bf16_config_count() || p.m <= 0 || p.n <= 0 || p.k <= 0 ||
      p.k % kCudaBf16KMultiple != 0 || p.lda % 8 != 0 || p.ldb % 8 != 0 || (p.beta != 0.f && !p.c))
    return cudaErrorInvalidValue;
  return entries()[index].launch(p, split, workspace, stream);
}

cudaError_t cuda_bf16_workspace_bytes(int index, const CudaBf16Problem& p, int split, size_t* bytes) {
  if (index < 0 || index >= cuda_bf16_config_count() || p.m <= 0 || p.n <= 0 || p.k <= 0) return cudaErrorInvalidValue;
  return entries()[index].workspace_bytes(p, split, bytes);
}

}  // namespace aotirt
