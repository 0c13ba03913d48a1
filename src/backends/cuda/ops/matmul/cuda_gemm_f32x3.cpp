// The choice of kernel shape and k split for the 3xTF32 GEMM (declared in
// cuda_gemm_f32x3.h). Plain arithmetic, so it is tested without a GPU.
// Batched problems take batched kernels, whole k.
#include <cstdint>

#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"

namespace aotirt {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A time model, in microseconds, fitted to the kernels' times on an H200
// machine over ViT-B/16's and BERT-base's GEMMs at every shape and split
// (CudaF32x3Test.Timing; bench/notes.md, row 15): an SM runs its blocks one
// after another at |kMacsPerUs| float32 multiply-adds a microsecond for a
// block of four warps (three TF32 passes each; a second block beside it
// gains nothing), |kTwoWarpMacsPerUs| for a block of two, plus |kTileUs|
// per output element for the block's epilogue; a launch costs |kLaunchUs|
// more, and each further k slice |kSliceUs|, waiting for the one before it
// to add its tile to D.
constexpr double kMacsPerUs = 220e3;
constexpr double kTwoWarpMacsPerUs = 160e3;
constexpr double kTileUs = 1.0 / (64 * 64);  // per output element of a block
constexpr double kLaunchUs = 2.0;
constexpr double kSliceUs = 2.0;
// Slices shorter than this spend more on the prologue than they save.
constexpr int64_t kMinSliceK = 128;
constexpr int kMaxSplit = 8;

}  // namespace

CudaF32x3Choice cuda_f32x3_choose(const CudaF32x3Problem& p, int out_align, int sm_count,
                                  const CudaF32x3Config* configs, const int* blocks, int count) {
  CudaF32x3Choice best;
  const int64_t m = p.m, n = p.n, k = p.k, batch = p.batch;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || k % kCudaF32x3KMultiple != 0 || sm_count <= 0) return best;
  if (p.b_row_major && n % 4 != 0) return best;
  double best_us = 0;
  for (int i = 0; i < count; ++i) {
    const CudaF32x3Config& c = configs[i];
    if (blocks[i] < 1 || c.tile_m <= 0 || c.tile_n <= 0 || c.threads <= 0 || c.out_align > out_align ||
        c.b_row_major != p.b_row_major || c.batched != (batch > 1))
      continue;
    const int64_t tiles = ceil_div(m, c.tile_m) * ceil_div(n, c.tile_n) * batch;
    const double rate = c.threads >= 128 ? kMacsPerUs : kTwoWarpMacsPerUs;
    for (int split = 1; split <= (c.batched ? 1 : kMaxSplit); ++split) {
      const int64_t slice = ceil_div(ceil_div(k, kCudaF32x3KMultiple), split) * kCudaF32x3KMultiple;
      if (split > 1 && (slice < kMinSliceK || slice * (split - 1) >= k)) break;
      // The busiest SM's blocks, one after another.
      const int64_t per_sm = ceil_div(tiles * split, sm_count);
      const double tile = static_cast<double>(c.tile_m) * c.tile_n;
      const double us = per_sm * tile * (slice / rate + kTileUs) + kLaunchUs + (split - 1) * kSliceUs;
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
