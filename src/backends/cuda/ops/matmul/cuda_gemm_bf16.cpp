// The choice of kernel shape for the bfloat16 GEMM (cuda_gemm_bf16.h). Plain
// arithmetic, so it is tested without a GPU.
#include <cstdint>

#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"

namespace aotirt {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A time model in microseconds: an SM runs its tiles one after another at
// |kBigMacsPerUs| multiply-adds a microsecond in the Ampere kernels'
// 128x128 tiles (64x64 warp tiles) and |kSmallMacsPerUs| in their 64x64
// ones (32x32 warp tiles); a Hopper tile (64 rows, one consumer
// warpgroup's) takes a fixed time for each 64-deep stage of k plus a time
// for each of its columns, so narrow tiles run fewer multiply-adds a
// microsecond but spread over more SMs
// (counted a tile an SM at a time, though two warpgroups take turns on two).
// Then the epilogue's writes and a launch; a k split adds the reduction's
// launch and its reads of the float32 slices. Small problems take small
// tiles or k slices, large ones big tiles, which read each operand less
// often. An Ampere SM runs two tiles at once, and one alone at about half
// the rate, so its tiles are counted in pairs. Fitted to GPT-2's 512-token
// GEMMs and Llama-3.2-1B's prefill GEMMs of 1920 and 128 rows, each
// kernel's calls replayed from a CUDA graph (CudaBf16Test.Timing) on an
// H200 and an H100 machine: the Hopper kernels lead on GPT-2's, Ampere's
// 128x128 tiles on Llama's 1920-row attention and MLP down projections
// (k = 2048 and 8192, 240 tiles). The Ampere terms also decide on other
// GPUs and with AOTIRT_CUDA_GEMM=aotirt.
constexpr double kBigMacsPerUs = 2.5e6;
constexpr double kSmallMacsPerUs = 0.8e6;
constexpr double kSm90StageUs = 0.05;          // per 64 k of a 64-row tile
constexpr double kSm90StageColumnUs = 0.00125;  // per column, likewise
constexpr double kTileUs = 0.3 / (64 * 64);  // per output element
constexpr double kLaunchUs = 2.0;
constexpr double kReduceBytesPerUs = 0.7e6;
constexpr int64_t kMinSliceK = 256;
constexpr int kMaxSplit = 8;

// One tile's products over |slice| of k on one SM.
double tile_product_us(const CudaBf16Config& c, int64_t slice) {
  const double tile = static_cast<double>(c.tile_m) * c.tile_n;
  if (c.sm90)
    return ceil_div(slice, 64) * (c.tile_m / 64.0) * (kSm90StageUs + kSm90StageColumnUs * c.tile_n);
  return tile * slice / (tile >= 128 * 128 ? kBigMacsPerUs : kSmallMacsPerUs);
}

// Whether config |c| takes |p| by its layout and alignment; a Hopper one
// also needs n a multiple of 8 (its tensor maps' rows) and no general C:
// none, or a bias row added as it is.
bool takes(const CudaBf16Config& c, const CudaBf16Problem& p, int out_align) {
  if (c.tile_m <= 0 || c.tile_n <= 0 || c.out_align > out_align || c.b_row_major != p.b_row_major) return false;
  if (!c.sm90) return true;
  if (p.n % 8 != 0) return false;
  return !p.c || p.beta == 0.f || (p.ldc == 0 && p.beta == 1.f);
}

}  // namespace

CudaBf16Choice cuda_bf16_choose(const CudaBf16Problem& p, int out_align, int sm_count,
                                const CudaBf16Config* configs, int count) {
  CudaBf16Choice best;
  const int64_t m = p.m, n = p.n, k = p.k;
  if (m <= 0 || n <= 0 || k <= 0 || k % kCudaBf16KMultiple != 0 || sm_count <= 0) return best;
  if (p.b_row_major && n % kCudaBf16KMultiple != 0) return best;
  double best_us = 0;
  for (int i = 0; i < count; ++i) {
    const CudaBf16Config& c = configs[i];
    if (!takes(c, p, out_align)) continue;
    const double tile = static_cast<double>(c.tile_m) * c.tile_n;
    const int64_t tiles = ceil_div(m, c.tile_m) * ceil_div(n, c.tile_n);
    for (int split = c.split_k ? 2 : 1; split <= (c.split_k ? kMaxSplit : 1); ++split) {
      const int64_t slice = ceil_div(ceil_div(k, 32), split) * 32;
      if (split > 1 && (slice < kMinSliceK || k / 32 < split)) break;
      int64_t per_sm = ceil_div(tiles * split, sm_count);
      if (!c.sm90) per_sm = ceil_div(per_sm, 2) * 2;
      double us = per_sm * (tile_product_us(c, slice) + tile * kTileUs) + kLaunchUs;
      if (split > 1) us += kLaunchUs + static_cast<double>(split) * m * n * 4 / kReduceBytesPerUs;
      // Aligned kernels first at equal times.
      if (c.out_align < out_align) us += 0.5;
      if (best.config < 0 || us < best_us) {
        best.config = i;
        best.split = split;
        best_us = us;
      }
    }
  }
  return best;
}

}  // namespace aotirt
