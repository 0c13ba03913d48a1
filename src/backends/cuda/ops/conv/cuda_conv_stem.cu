// The stem convolution kernel (cuda_conv_stem.h).
//
// A tile is |rows| output rows by |cols| output columns of one image and 64
// output channels, an implicit GEMM of (pixels) x (64 channels) over the
// reduction (taps x channels, in the filters' own r, s, c order, padded to
// whole k steps of 8). Persistent blocks, two an SM, each keep 64 channels'
// filters and walk their tiles, the next tile's window copied under this
// one's k steps. A block copies into shared memory, then rounds there to
// TF32 once (each operand is read by two warps):
//   - the input window those outputs read: |in_rows| rows of
//     |in_row_floats| floats (columns times channels, channels innermost),
//     zeros where the window leaves the image (the padding);
//   - each reduction index's offset into that window (a table);
//   - the 64 channels' filters, transposed: a row of kFilterRow floats for
//     each reduction index, so that a k step's B operands sit at fixed
//     offsets from one address and hit 32 banks.
// Four warps then run the k steps: warp (wm, wn) takes up to seven 16-pixel
// fragments (fragment f of the block's rows * frags_per_row, from wm * 7)
// and 32 of the channels (wn), and a fragment's A operand is read straight
// from the window through the offset table, so no copy of the input is
// made. The fragment and operand layouts are those of PTX's
// mma.m16n8k8.tf32 (row g = lane / 4, column t = lane % 4).
//
// RGB stems of stride 2 (ResNet's, most CNNs') take a faster path
// (kFastColStep: 6 floats from one output pixel's window to the next): a warp
// holds one output row's 7 fragments, at fixed offsets from one address,
// and fragment row g is pixel (6 g) mod 16, row g + 8 the pixel after it,
// so the 32 lanes' A loads hit 32 banks; the general path reads each
// fragment's own offsets in pixel order.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "backends/cuda/ops/conv/cuda_conv_stem.h"
#include "backends/cuda/launch/cuda_kernel_occupancy.h"

namespace aotirt {
namespace {

constexpr int kThreads = 128;       // four warps
constexpr int kFragsPerWarp = 7;    // 16-pixel fragments a warp holds
constexpr int kBlockChannels = 64;  // output channels a block computes
constexpr int kWarpChannels = 32;
constexpr int kFilterRow = kBlockChannels + 8;  // 72: rows t and t + 1 are 8 banks apart
constexpr int kFastColStep = 6;     // 3 channels, stride 2

struct StemArgs {
  const float* x;
  const float* filter;
  const float* bias;
  float* y;
  int n, h, w, c, k, r, s, p, q;
  int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
  int frags_per_row, rows, cols, row_groups, col_windows;
  int in_rows, in_row_floats, input_words;
  int reduction, padded_reduction;
};

// float32 to TF32, rounded to nearest (ties away), kept in a float.
__device__ __forceinline__ float round_tf32(float v) {
  uint32_t u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(v));
  return __uint_as_float(u);
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], float a0, float a1, float a2, float a3, float b0, float b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

using Acc = float[kFragsPerWarp][kWarpChannels / 8][4];

// A k step's B operands for a warp's 32 channels: |fb| is row kb + t of the
// transposed filters, at the warp's channel g.
__device__ __forceinline__ void load_b(const float* fb, float (&b)[kWarpChannels / 8][2]) {
#pragma unroll
  for (int j = 0; j < kWarpChannels / 8; ++j) {
    b[j][0] = fb[8 * j];
    b[j][1] = fb[4 * kFilterRow + 8 * j];
  }
}

// One k step of 8 on the fast path: the warp's 7 fragments lie 16 pixels
// (16 * kFastColStep floats) apart from |base|, rows g + 8 one pixel after
// rows g. The last step, if the reduction is not whole k steps, reads zeros
// past it rather than input values the zero filters would multiply (inf *
// 0 is NaN).
template <bool kTail>
__device__ __forceinline__ void fast_step(const float* xs, const int* koff, const float* fs, int base, int kb,
                                          int t, int n_off, int reduction, Acc& acc) {
  const int o0 = koff[kb + t], o1 = koff[kb + t + 4];
  const bool in0 = !kTail || kb + t < reduction, in1 = !kTail || kb + t + 4 < reduction;
  float b[kWarpChannels / 8][2];
  load_b(fs + (kb + t) * kFilterRow + n_off, b);
  const float* xa = xs + base + o0;
  const float* xb = xs + base + o1;
#pragma unroll
  for (int f = 0; f < kFragsPerWarp; ++f) {
    const int at = f * 16 * kFastColStep;
    const float a0 = in0 ? xa[at] : 0.f, a1 = in0 ? xa[at + kFastColStep] : 0.f;
    const float a2 = in1 ? xb[at] : 0.f, a3 = in1 ? xb[at + kFastColStep] : 0.f;
#pragma unroll
    for (int j = 0; j < kWarpChannels / 8; ++j) mma_tf32(acc[f][j], a0, a1, a2, a3, b[j][0], b[j][1]);
  }
}

// The same on the general path: each fragment's own offsets for rows g and
// g + 8 (|base0|, |base1|), |frags| of them.
template <bool kTail>
__device__ __forceinline__ void general_step(const float* xs, const int* koff, const float* fs,
                                             const int (&base0)[kFragsPerWarp], const int (&base1)[kFragsPerWarp],
                                             int frags, int kb, int t, int n_off, int reduction, Acc& acc) {
  const int o0 = koff[kb + t], o1 = koff[kb + t + 4];
  const bool in0 = !kTail || kb + t < reduction, in1 = !kTail || kb + t + 4 < reduction;
  float b[kWarpChannels / 8][2];
  load_b(fs + (kb + t) * kFilterRow + n_off, b);
#pragma unroll
  for (int f = 0; f < kFragsPerWarp; ++f) {
    if (f < frags) {
      const float a0 = in0 ? xs[base0[f] + o0] : 0.f, a1 = in0 ? xs[base1[f] + o0] : 0.f;
      const float a2 = in1 ? xs[base0[f] + o1] : 0.f, a3 = in1 ? xs[base1[f] + o1] : 0.f;
#pragma unroll
      for (int j = 0; j < kWarpChannels / 8; ++j) mma_tf32(acc[f][j], a0, a1, a2, a3, b[j][0], b[j][1]);
    }
  }
}

// A 4-byte asynchronous copy to shared memory; zeros there where |in| is
// false (|src| must still be a valid address).
__device__ __forceinline__ void copy_async4(float* dst, const float* src, bool in) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(in ? 4 : 0) : "memory");
}

// Where a tile (one block's outputs) starts.
struct Tile {
  int n, p0, q0;
};
__device__ __forceinline__ Tile tile_at(const StemArgs& a, int tile) {
  const int cw = tile % a.col_windows, rest = tile / a.col_windows;
  return Tile{rest / a.row_groups, (rest % a.row_groups) * a.rows, cw * a.cols};
}

// Queues the copies of tile |t|'s input window into |xs|: a row of it is
// one contiguous run of the image's row (channels-last), so the copies are
// coalesced; zeros where the window leaves the image.
__device__ __forceinline__ void copy_window(const StemArgs& a, const Tile& t, float* xs) {
  const int ih0 = t.p0 * a.stride_h - a.pad_h;
  const int flat0 = (t.q0 * a.stride_w - a.pad_w) * a.c;
  const int row_floats = a.w * a.c;
  const float* image = a.x + static_cast<int64_t>(t.n) * a.h * row_floats;
  for (int i = 0; i < a.in_rows; ++i) {
    const int ih = ih0 + i;
    const bool row_in = ih >= 0 && ih < a.h;
    const float* src = image + static_cast<int64_t>(row_in ? ih : 0) * row_floats;
    float* dst = xs + i * a.in_row_floats;
    for (int e = threadIdx.x; e < a.in_row_floats; e += kThreads) {
      const int f = flat0 + e;
      const bool in = row_in && f >= 0 && f < row_floats;
      copy_async4(dst + e, in ? src + f : image, in);
    }
  }
}

// Rounds to TF32 in place what this thread's copy_window copied (its own
// copies are complete once it has waited for them).
__device__ __forceinline__ void round_window(const StemArgs& a, float* xs) {
  for (int i = 0; i < a.in_rows; ++i)
    for (int e = threadIdx.x; e < a.in_row_floats; e += kThreads) {
      float* v = xs + i * a.in_row_floats + e;
      *v = round_tf32(*v);
    }
}

// The filters, transposed: warp w takes channels 16 w .. 16 w + 15, lane
// (c8, k4) channel c8 of a group of 8 at reduction index k4 of a group of
// 4, so a warp's 32 stores hit 32 banks (rows of kFilterRow are 8 banks
// apart) and its loads are 8 runs of 4 floats. With |round|, rounds in
// place what the same call copied before.
__device__ __forceinline__ void filters(const StemArgs& a, int k0, float* fs, bool round) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int c8 = lane & 7, k4 = lane >> 3;
  for (int half = 0; half < 2; ++half) {
    const int nl = 16 * warp + 8 * half + c8;
    const bool ch_in = k0 + nl < a.k;
    const float* src = a.filter + static_cast<int64_t>(ch_in ? k0 + nl : 0) * a.reduction;
    for (int kk = k4; kk < a.padded_reduction; kk += 4) {
      float* dst = fs + kk * kFilterRow + nl;
      if (round) {
        *dst = round_tf32(*dst);
      } else {
        const bool in = ch_in && kk < a.reduction;
        copy_async4(dst, in ? src + kk : a.filter, in);
      }
    }
  }
}

// One tile's k steps and stores, from its rounded window |xs|.
template <bool kFast>
__device__ __forceinline__ void compute_tile(const StemArgs& a, const Tile& tile, int k0, const float* xs,
                                             const int* koff, const float* fs) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const int wm = warp & 1, wn = warp >> 1;
  const int valid_rows = min(a.rows, a.p - tile.p0);
  const int valid_cols = min(a.cols, a.q - tile.q0);
  const int first = wm * kFragsPerWarp;
  int frags = min(kFragsPerWarp, max(0, valid_rows * a.frags_per_row - first));
  if (k0 + wn * kWarpChannels >= a.k) frags = 0;  // k % 64 == 32: the last block's upper half
  if (frags == 0) return;

  Acc acc;
#pragma unroll
  for (int f = 0; f < kFragsPerWarp; ++f)
#pragma unroll
    for (int j = 0; j < kWarpChannels / 8; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[f][j][v] = 0.f;

  const int n_off = wn * kWarpChannels + g;
  const int whole = a.reduction / 8 * 8;
  // Fragment row g's pixel (within its 16) and row g + 8's.
  int pix0[kFragsPerWarp], pix1[kFragsPerWarp], out_row[kFragsPerWarp];
  if constexpr (kFast) {
    // One output row (wm) a warp, its 7 fragments in column order.
    const int pg = (kFastColStep * g) & 15;
    const int base = wm * a.stride_h * a.in_row_floats + pg * kFastColStep;
#pragma unroll 2
    for (int kb = 0; kb < whole; kb += 8) fast_step<false>(xs, koff, fs, base, kb, t, n_off, a.reduction, acc);
    if (whole < a.reduction) fast_step<true>(xs, koff, fs, base, whole, t, n_off, a.reduction, acc);
#pragma unroll
    for (int f = 0; f < kFragsPerWarp; ++f) {
      pix0[f] = 16 * f + pg;
      pix1[f] = 16 * f + pg + 1;
      out_row[f] = wm;
    }
  } else {
    // Each fragment's window offsets for pixel rows g and g + 8 (columns
    // past the output read the last one's and are not written).
    int base0[kFragsPerWarp], base1[kFragsPerWarp];
#pragma unroll
    for (int f = 0; f < kFragsPerWarp; ++f) {
      const int fi = first + min(f, frags - 1);
      const int row = fi / a.frags_per_row, col0 = (fi % a.frags_per_row) * 16;
      const int qa = min(col0 + g, valid_cols - 1), qb = min(col0 + g + 8, valid_cols - 1);
      base0[f] = row * a.stride_h * a.in_row_floats + qa * a.stride_w * a.c;
      base1[f] = row * a.stride_h * a.in_row_floats + qb * a.stride_w * a.c;
      pix0[f] = col0 + g;
      pix1[f] = col0 + g + 8;
      out_row[f] = row;
    }
#pragma unroll 2
    for (int kb = 0; kb < whole; kb += 8)
      general_step<false>(xs, koff, fs, base0, base1, frags, kb, t, n_off, a.reduction, acc);
    if (whole < a.reduction)
      general_step<true>(xs, koff, fs, base0, base1, frags, whole, t, n_off, a.reduction, acc);
  }

  const int ch0 = k0 + wn * kWarpChannels + 2 * t;
  float bias[kWarpChannels / 8][2];
#pragma unroll
  for (int j = 0; j < kWarpChannels / 8; ++j) {
    bias[j][0] = a.bias ? __ldg(a.bias + ch0 + 8 * j) : 0.f;
    bias[j][1] = a.bias ? __ldg(a.bias + ch0 + 8 * j + 1) : 0.f;
  }
#pragma unroll
  for (int f = 0; f < kFragsPerWarp; ++f) {
    if (f >= frags) break;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = half ? pix1[f] : pix0[f];
      if (col >= valid_cols) continue;
      float* out =
          a.y + ((static_cast<int64_t>(tile.n) * a.p + tile.p0 + out_row[f]) * a.q + tile.q0 + col) * a.k + ch0;
#pragma unroll
      for (int j = 0; j < kWarpChannels / 8; ++j)
        *reinterpret_cast<float2*>(out + 8 * j) =
            make_float2(acc[f][j][2 * half] + bias[j][0], acc[f][j][2 * half + 1] + bias[j][1]);
    }
  }
}

// Persistent blocks, two an SM (ResNet-50's stem takes 92 KiB of shared
// memory a block: two windows and the filters): blockIdx.y picks 64 output
// channels, whose filters a block loads once; it then walks the tiles
// blockIdx.x, + gridDim.x, ..., copying the next tile's window into its
// second buffer while it computes this one, so it waits on memory once.
template <bool kFast>
__global__ void __launch_bounds__(kThreads, 2) conv_stem_kernel(StemArgs a) {
  extern __shared__ float smem[];
  int* koff = reinterpret_cast<int*>(smem + 2 * a.input_words);
  float* fs = smem + 2 * a.input_words + a.padded_reduction;
  const int k0 = blockIdx.y * kBlockChannels;
  const int tiles = a.n * a.row_groups * a.col_windows;
  int tile = blockIdx.x;
  if (tile >= tiles) return;

  filters(a, k0, fs, false);
  copy_window(a, tile_at(a, tile), smem);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int kk = threadIdx.x; kk < a.padded_reduction; kk += kThreads) {
    int off = 0;  // past the reduction: not read (the tail steps)
    if (kk < a.reduction) {
      const int ch = kk % a.c, tap = kk / a.c;
      off = (tap / a.s) * a.dil_h * a.in_row_floats + (tap % a.s) * a.dil_w * a.c + ch;
    }
    koff[kk] = off;
  }
  for (int it = 0; tile < tiles; ++it, tile += gridDim.x) {
    const int next = tile + gridDim.x;
    float* const window = smem + (it & 1) * a.input_words;
    if (next < tiles) copy_window(a, tile_at(a, next), smem + ((it + 1) & 1) * a.input_words);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    // This tile's copies (all but the group just committed) are done.
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    if (it == 0) filters(a, k0, fs, true);
    round_window(a, window);
    __syncthreads();
    compute_tile<kFast>(a, tile_at(a, tile), k0, window, koff, fs);
    // Every warp is done with this window before the next turn's copies
    // refill it.
    __syncthreads();
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What a device allows, asked once per device (a plan is checked per call).
struct DeviceLimits {
  std::atomic<int> state{0};  // 0: not asked, 1: usable, 2: not usable
  std::atomic<int64_t> max_smem{0};
  std::atomic<int> sm_count{0};
  std::atomic<bool> carveout[2] = {{false}, {false}};  // set for each kernel (fast or not)
};
constexpr int kMaxDevices = 64;
DeviceLimits g_limits[kMaxDevices];

// The current device's limits (|max_smem|, |sm_count| where not null), and
// its entry in g_limits (|limits| where not null).
cudaError_t device_limits(int64_t* max_smem, int* sm_count, DeviceLimits** limits = nullptr) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidValue;
  DeviceLimits& l = g_limits[device];
  if (l.state.load(std::memory_order_acquire) == 0) {
    int major = 0, smem = 0, sms = 0;
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
    cudaFuncAttributes attr;
    // No image for this GPU (older than the build's architectures).
    const bool image = cudaFuncGetAttributes(&attr, conv_stem_kernel<false>) == cudaSuccess;
    if (!image) (void)cudaGetLastError();
    l.max_smem.store(smem, std::memory_order_relaxed);
    l.sm_count.store(std::max(1, sms), std::memory_order_relaxed);
    l.state.store(major >= 8 && image ? 1 : 2, std::memory_order_release);
  }
  if (l.state.load(std::memory_order_acquire) != 1) return cudaErrorInvalidValue;
  *max_smem = l.max_smem.load(std::memory_order_relaxed);
  if (sm_count) *sm_count = l.sm_count.load(std::memory_order_relaxed);
  if (limits) *limits = &l;
  return cudaSuccess;
}

bool aligned(const void* ptr, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

}  // namespace

bool cuda_conv_stem_geometry(const CudaConvProblem& p, CudaConvStemGeometry* g) {
  if (p.n <= 0 || p.h <= 0 || p.w <= 0 || p.c < 1 || p.c > 4 || p.k <= 0 || p.k % kWarpChannels != 0 || p.r <= 0 ||
      p.s <= 0 || p.p <= 0 || p.q <= 0 || p.pad_h < 0 || p.pad_w < 0 || p.stride_h <= 0 || p.stride_w <= 0 ||
      p.dil_h <= 0 || p.dil_w <= 0)
    return false;
  const int64_t reduction = static_cast<int64_t>(p.r) * p.s * p.c;
  if (reduction > kCudaConvStemMaxReduction) return false;
  CudaConvStemGeometry r;
  r.frags_per_row = static_cast<int>(std::min<int64_t>(kFragsPerWarp, ceil_div(p.q, 16)));
  r.rows = std::min(p.p, std::max(1, 2 * kFragsPerWarp / r.frags_per_row));
  r.cols = 16 * r.frags_per_row;
  const int64_t in_rows = static_cast<int64_t>(r.rows - 1) * p.stride_h + static_cast<int64_t>(p.r - 1) * p.dil_h + 1;
  const int64_t in_cols = static_cast<int64_t>(r.cols - 1) * p.stride_w + static_cast<int64_t>(p.s - 1) * p.dil_w + 1;
  const int64_t window = in_rows * in_cols * p.c;
  if (window > (int64_t{1} << 20)) return false;  // far past any GPU's shared memory
  r.in_rows = static_cast<int>(in_rows);
  r.in_row_floats = static_cast<int>(in_cols * p.c);
  r.reduction = static_cast<int>(reduction);
  r.padded_reduction = static_cast<int>(ceil_div(reduction, 8) * 8);
  r.filter_row = kFilterRow;
  r.fast = p.stride_w * p.c == kFastColStep && r.frags_per_row == kFragsPerWarp;
  r.window_words = ceil_div(window, 4) * 4;  // a 16-byte multiple
  // Two windows (this tile's and the next one's), the offsets, the filters.
  r.smem_bytes =
      4 * (2 * r.window_words + r.padded_reduction + static_cast<int64_t>(r.padded_reduction) * kFilterRow);
  r.channel_blocks = ceil_div(p.k, kBlockChannels);
  r.tiles = ceil_div(p.p, r.rows) * ceil_div(p.q, r.cols) * p.n;
  if (r.tiles > INT32_MAX || r.channel_blocks > 65535) return false;
  *g = r;
  return true;
}

namespace {

// cuda_conv_stem_check, also giving what the launch needs: |p|'s geometry,
// the device's multiprocessors and its entry in g_limits.
cudaError_t check_stem(const CudaConvProblem& p, CudaConvStemGeometry* g, int* sms, DeviceLimits** limits) {
  if (!cuda_conv_stem_geometry(p, g)) return cudaErrorInvalidValue;
  if (!p.x || !p.filter || !p.y || !aligned(p.x, 4) || !aligned(p.filter, 4) || !aligned(p.y, 8) ||
      (p.bias && !aligned(p.bias, 4)))
    return cudaErrorInvalidValue;
  int64_t max_smem = 0;
  const cudaError_t err = device_limits(&max_smem, sms, limits);
  if (err != cudaSuccess) return err;
  return g->smem_bytes <= max_smem ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

cudaError_t cuda_conv_stem_check(const CudaConvProblem& p) {
  CudaConvStemGeometry g;
  return check_stem(p, &g, nullptr, nullptr);
}

cudaError_t cuda_conv_stem_launch(const CudaConvProblem& p, cudaStream_t stream) {
  CudaConvStemGeometry g;
  int sms = 1;
  DeviceLimits* limits = nullptr;
  cudaError_t err = check_stem(p, &g, &sms, &limits);
  if (err != cudaSuccess) return err;
  const void* kernel =
      g.fast ? reinterpret_cast<const void*>(conv_stem_kernel<true>) : reinterpret_cast<const void*>(conv_stem_kernel<false>);
  err = cuda_reserve_dynamic_smem(kernel, static_cast<size_t>(g.smem_bytes));
  if (err != cudaSuccess) return err;
  if (!limits->carveout[g.fast].exchange(true)) {
    // All of L1 as shared memory, so two blocks fit (a hint; the driver
    // may otherwise leave less).
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
    if (err != cudaSuccess) return err;
  }
  StemArgs a;
  a.x = p.x;
  a.filter = p.filter;
  a.bias = p.bias;
  a.y = p.y;
  a.n = p.n;
  a.h = p.h;
  a.w = p.w;
  a.c = p.c;
  a.k = p.k;
  a.r = p.r;
  a.s = p.s;
  a.p = p.p;
  a.q = p.q;
  a.pad_h = p.pad_h;
  a.pad_w = p.pad_w;
  a.stride_h = p.stride_h;
  a.stride_w = p.stride_w;
  a.dil_h = p.dil_h;
  a.dil_w = p.dil_w;
  a.frags_per_row = g.frags_per_row;
  a.rows = g.rows;
  a.cols = g.cols;
  a.row_groups = static_cast<int>(ceil_div(p.p, g.rows));
  a.col_windows = static_cast<int>(ceil_div(p.q, g.cols));
  a.in_rows = g.in_rows;
  a.in_row_floats = g.in_row_floats;
  a.input_words = static_cast<int>(g.window_words);
  a.reduction = g.reduction;
  a.padded_reduction = g.padded_reduction;
  // Two persistent blocks an SM over all the channel blocks.
  const int64_t per_channel_block = std::max<int64_t>(1, ceil_div(2 * int64_t{sms}, g.channel_blocks));
  const dim3 grid(static_cast<unsigned>(std::min(g.tiles, per_channel_block)), static_cast<unsigned>(g.channel_blocks));
  if (g.fast)
    conv_stem_kernel<true><<<grid, kThreads, static_cast<size_t>(g.smem_bytes), stream>>>(a);
  else
    conv_stem_kernel<false><<<grid, kThreads, static_cast<size_t>(g.smem_bytes), stream>>>(a);
  return cudaGetLastError();
}

}  // namespace aotirt
