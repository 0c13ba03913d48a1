// The choice of kernel shape and channel split for the TF32 convolutions
// (declared in cuda_conv_tf32.h). Plain arithmetic, so it is tested without
// a GPU.
#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/cuda_conv_tf32.h"

namespace aotirt {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A time model, in microseconds, fitted to the kernels' times on an H200
// machine over ResNet-50's convolutions at batch 1 and 32, every shape and
// split (CudaConvTf32Test.Timing: each launch replayed in a CUDA graph after
// an eviction of the L2 cache, as the weights come from memory in a model):
// a block runs at its shape's rate of multiply-adds a microsecond, the
// blocks an SM holds at once share at most kSmMacsPerUs, and the busiest SM
// runs its waves one after another. A launch costs about 3.6 us, each
// further channel slice about 2 us (it waits for the slice before it to add
// its tile into the output), and every byte of input and output passes
// through memory at about 2.7 TB/s at best (problems under that floor tie,
// and the first kernel in the table's order wins). With the Hopper rates
// below, the choices over those 46 problems take 1195 us in all, where the
// best measured ones take 1177 (the rates fitted with warm caches chose
// 1209). The fit favours the Hopper kernels' problems: among the Ampere
// kernels alone (other GPUs, AOTIRT_CUDA_CONV_SM90=0) its choices take 1584
// us where the best take 1398.
constexpr double kSmMacsPerUs = 0.28e6;
constexpr double kLaunchUs = 3.6;
constexpr double kSliceUs = 2.0;
constexpr double kBytesPerUs = 2.66e6;
constexpr int kMaxSplit = 16;
// Slices shorter than this spend more on the prologue and the ordered
// epilogue than they save.
constexpr int64_t kMinSliceK = 512;

// 3xTF32 kernels (three tensor-core products for each one of TF32), refit
// on their own timings of the same problems: the TF32 rates taken three
// times slower chose 3457 us in all (measured); these choose 3198-3372 us
// by the same table, depending on the blocks per SM the device reports
// (2-4 for 64x64, 2-6 for 32x64); the best choices take 3185.
constexpr double kThreePassSmMacsPerUs = 0.4e6 / 3;

// Hopper's wgmma kernels (sm90), fitted with the rest: a block's rate
// alone on an SM, and what the blocks on one SM share (the H200's TF32 peak
// is about 1.9e6 multiply-adds a microsecond per SM).
struct Sm90Rates {
  int m, n;
  double block, sm;
};
Sm90Rates sm90_rates(const CudaConvConfig& c) {
  static const Sm90Rates kRates[] = {{128, 128, 1.9e6, 1.9e6},
                                     {128, 64, 0.93e6, 1.9e6},
                                     {64, 128, 0.72e6, 1.9e6},
                                     {64, 256, 0.94e6, 1.9e6},
                                     {64, 64, 0.72e6, 0.84e6}};
  for (const Sm90Rates& r : kRates)
    if (r.m == c.tile_m && r.n == c.tile_n) return r;
  // A shape not measured: by its area, from the 64x128 one.
  const double area = c.tile_m * c.tile_n / (64.0 * 128.0);
  return {c.tile_m, c.tile_n, std::min(1.9e6, 0.72e6 * area), 1.9e6};
}

double block_rate(const CudaConvConfig& c) {
  struct Rate {
    int m, n;
    double macs_per_us;
  };
  static const Rate kRates[] = {{256, 128, 0.25e6}, {128, 256, 0.22e6}, {128, 128, 0.84e6},
                                {128, 64, 0.22e6},  {64, 64, 0.25e6},   {32, 64, 0.29e6}};
  static const Rate kThreePassRates[] = {{64, 64, 0.4e6 / 3}, {32, 64, 0.2e6 / 3}};
  if (c.three_pass) {
    for (const Rate& r : kThreePassRates)
      if (r.m == c.tile_m && r.n == c.tile_n) return r.macs_per_us;
    return std::min(0.4e6, 0.2e6 * c.tile_m * c.tile_n / (32.0 * 64.0)) / 3;
  }
  if (c.sm90) return sm90_rates(c).block;
  for (const Rate& r : kRates)
    if (r.m == c.tile_m && r.n == c.tile_n) return r.macs_per_us;
  // A shape not measured: by its area, as the small tiles scale.
  return std::min(0.84e6, 0.25e6 * c.tile_m * c.tile_n / (64.0 * 64.0));
}

}  // namespace

int64_t cuda_conv_tf32_tiles(const CudaConvProblem& p, const CudaConvConfig& c) {
  if (c.tile_m <= 0 || c.tile_n <= 0) return 0;
  return ceil_div(static_cast<int64_t>(p.n) * p.p * p.q, c.tile_m) * ceil_div(p.k, c.tile_n);
}

CudaConvChoice cuda_conv_tf32_choose(const CudaConvProblem& p, int sm_count, const CudaConvConfig* configs,
                                     const int* blocks, const bool* takes, int count) {
  CudaConvChoice best;
  if (p.n <= 0 || p.p <= 0 || p.q <= 0 || p.k <= 0 || p.c <= 0 || p.r <= 0 || p.s <= 0 || sm_count <= 0)
    return best;
  const int64_t taps = static_cast<int64_t>(p.r) * p.s;
  const double bytes = 4.0 * (static_cast<double>(p.n) * p.h * p.w * p.c + static_cast<double>(p.n) * p.p * p.q * p.k +
                              static_cast<double>(p.k) * taps * p.c);
  double best_us = 0;
  for (int i = 0; i < count; ++i) {
    const CudaConvConfig& c = configs[i];
    if (!takes[i] || blocks[i] < 1 || c.tile_m <= 0 || c.tile_n <= 0 || c.tile_k <= 0) continue;
    const int64_t tiles = cuda_conv_tf32_tiles(p, c);
    const int64_t steps = ceil_div(p.c, c.tile_k);  // k steps per filter tap
    const int max_split =
        c.fixed_channels || c.sm90 ? 1 : static_cast<int>(std::min<int64_t>(kMaxSplit, steps));
    for (int split = 1; split <= max_split; ++split) {
      // The padded reduction length one block runs.
      const int64_t slice = c.fixed_channels ? ceil_div(taps * p.c, c.tile_k) * c.tile_k
                                             : taps * ceil_div(steps, split) * c.tile_k;
      if (split > 1 && slice < kMinSliceK) break;
      const int64_t resident = std::min<int64_t>(blocks[i], ceil_div(tiles * split, sm_count));
      const double sm_rate = c.three_pass ? kThreePassSmMacsPerUs : c.sm90 ? sm90_rates(c).sm : kSmMacsPerUs;
      const double rate = std::min(block_rate(c), sm_rate / static_cast<double>(resident));
      const int64_t waves = ceil_div(tiles * split, static_cast<int64_t>(sm_count) * blocks[i]);
      const double compute = static_cast<double>(waves) * c.tile_m * c.tile_n * slice / rate;
      const double us = std::max(compute, bytes / kBytesPerUs) + kLaunchUs + (split - 1) * kSliceUs;
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
