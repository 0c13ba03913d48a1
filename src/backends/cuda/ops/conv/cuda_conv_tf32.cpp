// The choice of kernel shape and channel split for the TF32 convolutions
// (declared in cuda_conv_tf32.h). Plain arithmetic, so it is tested without
// a GPU.
#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/conv/cuda_conv_tf32.h"

namespace aotirt {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A time model, in microseconds, fitted to the kernels' times on an H200
// machine over ResNet-50's convolutions at batch 1 and 32, every shape and
// split (CudaConvTf32Test.Timing: each launch replayed in a CUDA graph after
// an eviction of the L2 cache, as the weights come from memory in a model):
// a block runs at its shape's rate of multiply-adds a microsecond, the
// blocks an SM holds at once share at most |sm_macs_per_us|, and the
// busiest SM runs its waves one after another; a launch costs |launch_us|,
// each further channel slice |slice_us| (it waits for the slice before it
// to add its tile into the output), and every byte of input and output
// passes through memory at |bytes_per_us| at best (problems under that
// floor tie, and the first kernel in the table's order wins).
struct Rate {
  int m, n;
  double macs_per_us;
};
struct Terms {
  double sm_macs_per_us, launch_us, slice_us, bytes_per_us;
  Rate rates[6];
};

// Ampere's kernels beside Hopper's, fitted with the Hopper rates below (the
// 64x64 and 32x64 rates refit with the parallel split, kParallel). These
// terms favour the problems the Hopper kernels do not win, so they are used
// only when a Hopper kernel is among the candidates.
constexpr Terms kBesideSm90 = {0.28e6, 3.6, 2.0, 2.66e6,
                               {{256, 128, 0.25e6},
                                {128, 256, 0.22e6},
                                {128, 128, 0.84e6},
                                {128, 64, 0.22e6},
                                {64, 64, 0.15e6},
                                {32, 64, 0.22e6}}};
// Ampere's kernels alone (other GPUs, AOTIRT_CUDA_DISABLE=conv_sm90, a
// bias), fitted on their own rows of the same table.
constexpr Terms kAmpereAlone = {0.73e6, 3.1, 4.5, 3.8e6,
                                {{256, 128, 0.23e6},
                                 {128, 256, 0.29e6},
                                 {128, 128, 1.39e6},
                                 {128, 64, 0.24e6},
                                 {64, 64, 0.15e6},
                                 {32, 64, 0.10e6}}};
// 3xTF32 kernels (three tensor-core products for each one of TF32), fitted
// on their own timings of the same problems (by direct launches, warm
// caches): the TF32 rates taken three times slower chose slower kernels.
constexpr Terms kThreePass = {0.4e6 / 3, 2.0, 3.0, 3.0e6, {{64, 64, 0.4e6 / 3}, {32, 64, 0.2e6 / 3}}};

// A parallel split (any Ampere-family kernel but the fixed-channels ones,
// and the Hopper implicit-GEMM kernels in slices of whole k steps):
// the slices run as the serial ones do but wait for none; the second kernel
// and the parts it reads cost |fixed_us| plus the parts' bytes at
// |bytes_per_us| (they come from L2); slices shorter than |min_slice_k| are
// not worth a block. Fitted on the TF32 kernels' rows of the same table,
// where batch 1's deep 3x3 convolutions ran faster on parallel slices than
// on serial ones, and than on cuDNN. The 3xTF32 kernels use the same terms,
// which took about a fifth off ResNet-50's strict-float32 batch 1 against
// serial splits alone (bench/notes.md, row 28).
struct ParallelTerms {
  double fixed_us, bytes_per_us;
  int64_t min_slice_k;
};
constexpr ParallelTerms kParallel = {1.0, 2.0e6, 256};

constexpr int kMaxSplit = 16;
// Slices shorter than this spend more on the prologue and the ordered
// epilogue than they save.
constexpr int64_t kMinSliceK = 512;

// Hopper's wgmma kernels (sm90), fitted with kBesideSm90: a block's rate
// alone on an SM, and what the blocks on one SM share (the H200's TF32 peak
// is about 1.9e6 multiply-adds a microsecond per SM).
struct Sm90Rates {
  int m, n;
  double block, sm;
};
// A parallel split of a Hopper kernel launches each further slice on a
// forked stream: this much more a slice, beside the second kernel's terms
// (kParallel). Fitted on four machines' tables (CudaConvTf32Test.Timing):
// the 1.0 first guessed kept some of batch 1's 3x3 convolutions on too few
// slices, and 0.4 or less splits too often.
constexpr double kSm90ForkUs = 0.55;

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

// Hopper's GEMM kernels for 1x1 convolutions (gemm_1x1): persistent
// blocks, one an SM, each walking its share of the tiles with two
// warpgroups whose mainloops take the tensor cores in turn, so an SM runs
// its tiles one after another: each costs |stage_us| plus |column_us| per
// tile column for every 32-channel k step, and |store_us| per tile column
// for its epilogue. The epilogues overlap the mainloops, so the bytes'
// floor is nearer the memory's speed than the other kernels' is. Fitted on
// the same table's rows for ResNet-50's eleven 1x1 convolutions of stride 1
// at batch 1 and 32 (each on 64x64, 64x128 and 64x256 tiles, cold caches)
// where the tile is no wider than the output: a wider one (64x256 for 64 or
// 128 channels) ran well slower than this reckons, so the chooser leaves it
// out. The stage cost was refit on the choices after a least-squares fit
// to the times, which chose slower kernels. The bytes' floor is the
// persistent kernel's below: with a kinder one (4.0e6, first fitted) the
// GEMMs kept ResNet-50's batch-32 1x1 convolutions of 64 -> 256 channels at
// 56x56 and 128 -> 512 and 512 -> 256 at 28x28, which the persistent
// kernel ran faster in the tables of both an H200 and an H100 machine.
struct GemmTerms {
  double launch_us, bytes_per_us, stage_us, column_us, store_us;
};
constexpr GemmTerms kGemm1x1 = {3.7, 3.2e6, 0.042, 0.00087, 0.0071};

double gemm_1x1_us(const CudaConvProblem& p, const CudaConvConfig& c, int sm_count, double bytes) {
  const int64_t per_sm = ceil_div(cuda_conv_tf32_tiles(p, c), sm_count);
  const double tile_us =
      static_cast<double>(ceil_div(p.c, c.tile_k)) * (kGemm1x1.stage_us + kGemm1x1.column_us * c.tile_n) +
      kGemm1x1.store_us * c.tile_n;
  return std::max(static_cast<double>(per_sm) * tile_us, bytes / kGemm1x1.bytes_per_us) + kGemm1x1.launch_us;
}

// Hopper's implicit-GEMM kernel in aotirt's persistent ping-pong kernel
// (CudaConvConfig::persistent): one block an SM walks its tiles, each k
// step of a tile costing tile_m * tile_n * tile_k / |macs_per_us| (one
// warpgroup alone keeps the tensor cores about as busy as two), each tile
// |tile_us| more (the epilogue not hidden), a launch |launch_us|; the
// input's bytes are those its taps read (a quarter of the input for a
// strided 1x1), and all of them pass at |bytes_per_us| at best. Fitted on
// the 128x128 kernel's rows of CudaConvTf32Test.Timing (cold caches), every
// ResNet-50 shape at batch 1 and 32 and their Hopper splits: close at batch
// 32 but for the strided 3x3 at 56x56, somewhat slower than reckoned, and
// the 3x3 of 64 channels, nearly twice as slow: half of each 128-wide tile
// is past its 64 output channels (the 128x64 kernel is faster there), so
// the chooser leaves such problems out.
struct PersistentTerms {
  double launch_us, macs_per_us, tile_us, bytes_per_us;
};
constexpr PersistentTerms kPersistent = {2.0, 1.64e6, 1.5, 3.2e6};

// A block's rate and what the blocks on an SM share, for config |c| under
// |t| (or the Hopper rates).
void rates(const CudaConvConfig& c, const Terms& t, double* block, double* sm) {
  if (c.sm90) {
    const Sm90Rates r = sm90_rates(c);
    *block = r.block;
    *sm = r.sm;
    return;
  }
  *sm = t.sm_macs_per_us;
  for (const Rate& r : t.rates)
    if (r.m > 0 && r.m == c.tile_m && r.n == c.tile_n) {
      *block = r.macs_per_us;
      return;
    }
  // A shape not measured: by its area, from the table's 64x64 rate.
  double base = t.rates[0].macs_per_us * 4096.0 / (t.rates[0].m * t.rates[0].n);
  for (const Rate& r : t.rates)
    if (r.m == 64 && r.n == 64) base = r.macs_per_us;
  *block = std::min(t.sm_macs_per_us, base * c.tile_m * c.tile_n / 4096.0);
}

}  // namespace

uint64_t cuda_conv_tf32_partial_floats(const CudaConvProblem& p, int split) {
  if (split <= 1 || p.n <= 0 || p.p <= 0 || p.q <= 0 || p.k <= 0) return 0;
  return static_cast<uint64_t>(split) * static_cast<uint64_t>(p.n) * static_cast<uint64_t>(p.p) *
         static_cast<uint64_t>(p.q) * static_cast<uint64_t>(p.k);
}

int64_t cuda_conv_tf32_tiles(const CudaConvProblem& p, const CudaConvConfig& c) {
  if (c.tile_m <= 0 || c.tile_n <= 0) return 0;
  return ceil_div(static_cast<int64_t>(p.n) * p.p * p.q, c.tile_m) * ceil_div(p.k, c.tile_n);
}

CudaConvChoice cuda_conv_tf32_choose(const CudaConvProblem& p, int sm_count, const CudaConvConfig* configs,
                                     const int* blocks, const bool* takes, int count, uint64_t max_partial_floats) {
  CudaConvChoice best;
  if (p.n <= 0 || p.p <= 0 || p.q <= 0 || p.k <= 0 || p.c <= 0 || p.r <= 0 || p.s <= 0 || sm_count <= 0)
    return best;
  const int64_t taps = static_cast<int64_t>(p.r) * p.s;
  const double bytes = 4.0 * (static_cast<double>(p.n) * p.h * p.w * p.c + static_cast<double>(p.n) * p.p * p.q * p.k +
                              static_cast<double>(p.k) * taps * p.c);
  // The bytes the taps read: no more than the input, and for a strided
  // 1x1 a part of it (kPersistent).
  const double read_bytes =
      4.0 * (std::min(static_cast<double>(p.n) * p.h * p.w * p.c, static_cast<double>(p.n) * p.p * p.q * taps * p.c) +
             static_cast<double>(p.n) * p.p * p.q * p.k + static_cast<double>(p.k) * taps * p.c);
  // Which terms the candidates are judged by (see above).
  bool any_sm90 = false;
  for (int i = 0; i < count; ++i) any_sm90 |= takes[i] && blocks[i] >= 1 && configs[i].sm90;
  double best_us = 0;
  for (int i = 0; i < count; ++i) {
    const CudaConvConfig& c = configs[i];
    if (!takes[i] || blocks[i] < 1 || c.tile_m <= 0 || c.tile_n <= 0 || c.tile_k <= 0) continue;
    if (c.gemm_1x1) {
      if (c.tile_n > 64 && c.tile_n > p.k) continue;
      const double us = gemm_1x1_us(p, c, sm_count, bytes);
      if (best.config < 0 || us < best_us) {
        best = CudaConvChoice{i, 1, false};
        best_us = us;
      }
      continue;
    }
    // The persistent kernel's tiles must fill most of their width: see
    // kPersistent.
    if (c.persistent && 2 * p.k <= c.tile_n) continue;
    const Terms& t = c.three_pass ? kThreePass : any_sm90 ? kBesideSm90 : kAmpereAlone;
    double block_rate = 0, sm_rate = 0;
    rates(c, t, &block_rate, &sm_rate);
    const int64_t tiles = cuda_conv_tf32_tiles(p, c);
    const int64_t steps = ceil_div(p.c, c.tile_k);  // k steps per filter tap
    const int max_split = c.fixed_channels ? 1 : static_cast<int>(std::min<int64_t>(kMaxSplit, steps));
    const double out_bytes = 4.0 * static_cast<double>(p.n) * p.p * p.q * p.k;
    for (int split = 1; split <= max_split; ++split) {
      // The Hopper kernels' slices are whole k steps, as many each.
      if (c.sm90 && split > 1 && p.c % (c.tile_k * split) != 0) continue;
      // The padded reduction length one block runs.
      const int64_t slice = c.fixed_channels ? ceil_div(taps * p.c, c.tile_k) * c.tile_k
                                             : taps * ceil_div(steps, split) * c.tile_k;
      if (split > 1 && slice < kParallel.min_slice_k) break;
      const int64_t resident = std::min<int64_t>(blocks[i], ceil_div(tiles * split, sm_count));
      const double rate = std::min(block_rate, sm_rate / static_cast<double>(resident));
      const int64_t waves = ceil_div(tiles * split, static_cast<int64_t>(sm_count) * blocks[i]);
      const double compute = static_cast<double>(waves) * c.tile_m * c.tile_n * slice / rate;
      double base = std::max(compute, bytes / t.bytes_per_us) + t.launch_us;
      if (c.persistent) {
        const double per_sm = static_cast<double>(ceil_div(tiles * split, sm_count));
        const double tile = static_cast<double>(c.tile_m) * c.tile_n * slice / kPersistent.macs_per_us +
                            kPersistent.tile_us;
        base = std::min(base, std::max(per_sm * tile, read_bytes / kPersistent.bytes_per_us) + kPersistent.launch_us);
      }
      // Serial slices each wait for the one before; parallel ones pay the
      // second kernel instead.
      auto consider = [&](double us, bool parallel) {
        if (best.config >= 0 && us >= best_us) return;
        best.config = i;
        best.split = split;
        best.parallel = parallel;
        best_us = us;
      };
      // The Hopper kernels' slices are parallel only: launches of their own
      // on forked streams.
      if (split == 1 || (!c.sm90 && slice >= kMinSliceK)) consider(base + (split - 1) * t.slice_us, false);
      const double fork_us = c.sm90 ? (split - 1) * kSm90ForkUs : 0.0;
      if (split > 1 && cuda_conv_tf32_partial_floats(p, split) <= max_partial_floats)
        consider(base + fork_us + kParallel.fixed_us + split * out_bytes / kParallel.bytes_per_us, true);
    }
  }
  return best;
}

}  // namespace aotirt
