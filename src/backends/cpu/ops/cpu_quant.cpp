// CPU weight-only quantized GEMMs: _weight_int8pack_mm (int8 weights, one
// scale per output channel) and _weight_int4pack_mm_cpu_tensor (int4
// weights in torch's CPU packing, a scale and a zero per group of K). The
// weights are dequantized to float32 a slab of output channels at a time
// and multiplied with OpenBLAS; results are rounded once to A's dtype. A
// product of few rows (a decode step, a short prompt) reads the weights in
// place instead, on kernels compiled per ISA (int4: up to 64 rows, a block
// of output channels at a time; int8: up to 32 rows, four weight rows at a
// time; fewer on the portable kernels): dequantizing the whole weight to
// float32 for one row wrote and read eight (int4) or four (int8) times its
// bytes, and a decode step of a small int4 model ran several times slower
// than bfloat16's.
//
// The int4 packing (what torch's _convert_weight_to_int4pack_for_cpu writes
// for an [N, K] int32 weight of values 0..15) depends on the kernel set
// torch's ATen runs on this machine (aten_cpu_capability(): the CPU, or
// ATEN_CPU_CAPABILITY), because it is laid out for that set's vector width.
// [N, K / 2] bytes; N is cut into blocks of B rows, B = 4 float vectors:
// 64 for AVX512, 32 for AVX2, DEFAULT on x86 and SVE256, 16 for DEFAULT on
// AArch64 (NEON's 128-bit vectors). Block b starts at byte b * B * K / 2
// and holds its K columns one after the other, each nb / 2 bytes, nb the
// block's rows (B, or fewer in the last block). Within a column:
//  - a full block under AVX512 or AVX2 splits its rows in halves: byte j
//    (j < B / 2) holds row j in its low nibble and row j + B / 2 in its high
//    one (AVX512: rows 0-15 with 32-47, then 16-31 with 48-63);
//  - any other block (every block under DEFAULT or SVE256, and the last,
//    shorter block under AVX512 or AVX2) pairs neighbours: byte j / 2, low
//    nibble for even j.
// torch's kernels read only the layout of the capability they run under,
// so a weight packed under one capability is garbage under another; aotirt
// follows the same choice. A value q means (q - 8) * scale + zero.
//
// _weight_int8pack_mm's int8 weight is a plain [N, K] matrix, and the
// _dyn_quant_* pack below is the same on every x86 capability (torch's
// reference path has no vector-width-dependent layout).
//
// _dyn_quant_pack_4bit_weight and _dyn_quant_matmul_4bit follow torch's
// reference path (its CPU build without KleidiAI, as on x86): the pack is a
// float32 vector of the weight bytes, the scales and the optional bias; the
// matmul quantizes each input row to int8 (asymmetric, over the row's range
// widened to include 0), multiplies in int32 per block of K against the
// signed nibbles (low nibble at even k, value - 8) and accumulates
// block * scale in float32 in block order, then scales by the row's
// reciprocal scale and adds the bias. Each step is float32 as torch's, so
// results agree to the last bit. A bfloat16 input (per-channel blocks only,
// as torch) is widened to float32 and the result truncated to bfloat16.
#include <omp.h>

// The per-ISA kernels' vector arguments never cross a call boundary (their
// helpers are always inlined).
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_options.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/fused_args.h"
#include "ops/linalg_args.h"
#include "shim/abi/aotirt_fused.h"
#include "package/cpu_features.h"
#include "shim/abi/cpu_linalg.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// Output channels dequantized per BLAS call: bounds the float32 copy of the
// weight while keeping each call large.
constexpr int64_t kSlab = 256;

// Where torch's CPU int4 packing puts each weight, for one capability
// (see the top of the file).
struct Int4Layout {
  int64_t block_n = 32;
  // Full blocks pair row j with row j + block_n / 2 in one byte.
  bool split_halves = false;
};

Int4Layout int4_layout(AtenCpuCapability c) {
  switch (c) {
    case AtenCpuCapability::kAvx512:
      return {64, true};
    case AtenCpuCapability::kAvx2:
      return {32, true};
    case AtenCpuCapability::kSve256:
      return {32, false};
    case AtenCpuCapability::kDefault:
      break;
  }
#if defined(__aarch64__)
  return {16, false};
#else
  return {32, false};
#endif
}

// How a slab of dequantized weights is laid out for the BLAS call.
enum class SlabLayout {
  kRows,     // [rows, K]: W's own rows
  kColumns,  // [K, rows]: W^T, which int4's packing writes contiguously
};

// C[M, N] = A[M, K] @ W^T, W [N, K] produced slab by slab by
// dequant(n0, rows, dst) (dst is float32 in |layout|); then scaled per
// column by col_scale (may be null) and stored as |dtype|.
template <class Dequant>
Result<TensorImpl> weight_only_gemm(const ops::WeightOnlyArgs& a, DType dtype, const float* col_scale,
                                    SlabLayout layout, Dequant&& dequant) {
  const int64_t m = a.m, n = a.n, k = a.k;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(DimVector{m, n}, DType::kFloat32, DeviceId{}));
  float* pc = static_cast<float*>(c.data_ptr());
  if (m > 0 && n > 0) {
    if (k == 0) {
      std::fill(pc, pc + m * n, 0.0f);
    } else {
      AOTIRT_RETURN_IF_ERROR(ensure_blas());
      AOTIRT_RETURN_IF_ERROR(check_blas_int(std::max({m, n, k}), "a matrix dim"));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*a.a, DType::kFloat32));
      const float* px = static_cast<const float*>(x.data_ptr());
      std::vector<float> w(static_cast<size_t>(std::min(n, kSlab) * k));
      for (int64_t n0 = 0; n0 < n; n0 += kSlab) {
        const int64_t rows = std::min(kSlab, n - n0);
        dequant(n0, rows, w.data());
        if (layout == SlabLayout::kRows)
          gemm<float>(false, true, m, rows, k, 1.0f, px, k, w.data(), k, 0.0f, pc + n0, n, false);
        else
          gemm<float>(false, false, m, rows, k, 1.0f, px, k, w.data(), rows, 0.0f, pc + n0, n, false);
      }
      if (col_scale)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) pc[i * n + j] *= col_scale[j];
    }
  }
  if (dtype == DType::kFloat32) return c;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(c.sizes(), dtype, DeviceId{}));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, c));
  return out;
}

// Rows of A up to which the int4 and int8 products read the weights in place
// (beyond them, dequantizing for OpenBLAS costs less than the product), with
// the AVX2 or AVX-512 kernels and with the portable ones (which on x86 are
// baseline SSE2, several times slower a row).
constexpr int64_t kInt4FewRows = 64;
constexpr int64_t kInt8FewRows = 32;
constexpr int64_t kInt4FewRowsPortable = 2;
constexpr int64_t kInt8FewRowsPortable = 4;

// The row limit for the kernel set this process picks.
int64_t in_place_rows(int64_t vector_isa_rows, int64_t portable_rows) {
  static const bool vector_isa = cpu_kernel_isa(cpu_options().aten_cpu_capability) != CpuKernelIsa::kPortable;
  return vector_isa ? vector_isa_rows : portable_rows;
}
// Rows of A an int4 block of output channels takes at a time, outside the
// split-halves kernel.
constexpr int64_t kInt4RowTile = 8;
constexpr int64_t kInt4MaxBlock = 64;  // the widest layout's rows a block

// C[m, n] (float32) = A[m, k] @ dequant(W)^T for m <= kInt4FewRows, straight
// from the packed weights: a block of the layout's output channels at a
// time, whose nibbles for one k are contiguous. Within a group of K the
// scale and zero factor out: sum_q x_q ((w_q - 8) s + z) =
// s sum_q x_q (w_q - 8) + z sum_q x_q, so the inner loop is one multiply-add
// a weight and a row. The body is compiled for AVX-512, AVX2 and portably and
// picked for the running CPU, as the bfloat16 few-row kernels are: built for
// the baseline ISA alone, it ran at a fraction of torch's own kernel.
struct Int4RowsProblem {
  Int4Layout layout;
  const uint8_t* packed;
  // [groups, n, 2] (scale, zero), contiguous, in A's dtype: read in place,
  // as widening all of them per call cost more than the product itself.
  const void* sz;
  DType sz_dtype;
  const float* px;  // [m, k]
  float* pc;        // [m, n]
  int64_t m, n, k, group;
};

// The scales and zeros of |rows| output channels from n0 for group g.
void int4_scale_zero(const Int4RowsProblem& p, int64_t g, int64_t n0, int64_t rows, float* sc, float* zr) {
  const int64_t at = (g * p.n + n0) * 2;
  if (p.sz_dtype == DType::kFloat32) {
    const float* f = static_cast<const float*>(p.sz) + at;
    for (int64_t j = 0; j < rows; ++j) {
      sc[j] = f[2 * j];
      zr[j] = f[2 * j + 1];
    }
    return;
  }
  const uint16_t* h = static_cast<const uint16_t*>(p.sz) + at;
  const bool bf16 = p.sz_dtype == DType::kBFloat16;
  for (int64_t j = 0; j < rows; ++j) {
    sc[j] = bf16 ? bf16_to_float(h[2 * j]) : half_to_float(h[2 * j]);
    zr[j] = bf16 ? bf16_to_float(h[2 * j + 1]) : half_to_float(h[2 * j + 1]);
  }
}

#define AOTIRT_QUANT_INLINE inline __attribute__((always_inline))

// The variant of a kernel for the ISA cpu_kernel_isa picks (the portable one
// off x86). AOTIRT_X86_KERNELS passes the x86 variants where they exist.
#if defined(__x86_64__)
#define AOTIRT_X86_KERNELS(avx2, avx512) , avx2, avx512
template <class Fn>
Fn pick_kernel(Fn portable, Fn avx2, Fn avx512) {
  switch (cpu_kernel_isa(cpu_options().aten_cpu_capability)) {
    case CpuKernelIsa::kAvx512:
      return avx512;
    case CpuKernelIsa::kAvx2:
      return avx2;
    case CpuKernelIsa::kPortable:
      break;
  }
  return portable;
}
#else
#define AOTIRT_X86_KERNELS(avx2, avx512)
template <class Fn>
Fn pick_kernel(Fn portable) {
  return portable;
}
#endif

// One block of kB output channels starting at n0 (kB = rows, a full block
// when kFull; otherwise |rows| of the last, shorter block).
template <int64_t kB, bool kSplit, bool kFull>
AOTIRT_QUANT_INLINE void int4_rows_block(const Int4RowsProblem& p, int64_t n0, int64_t rows, int64_t i0,
                                         int64_t m) {
  const int64_t nb = kFull ? kB : rows;
  const int64_t k = p.k;
  const float* px = p.px + i0 * k;
  float* pc = p.pc + i0 * p.n;
  float acc[kInt4RowTile][kInt4MaxBlock] = {};
  float part[kInt4RowTile][kInt4MaxBlock];
  float w[kInt4MaxBlock];
  const uint8_t* base = p.packed + n0 * (k / 2);
  for (int64_t g0 = 0; g0 < k; g0 += p.group) {
    const int64_t g1 = std::min(k, g0 + p.group);
    float xsum[kInt4RowTile] = {};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nb; ++j) part[i][j] = 0.0f;
    for (int64_t q = g0; q < g1; ++q) {
      const uint8_t* col = base + q * (nb / 2);
      if (kSplit && kFull) {
        constexpr int64_t kHalf = kB / 2;
        for (int64_t j = 0; j < kHalf; ++j) {
          w[j] = static_cast<float>(static_cast<int32_t>(col[j] & 0xf) - 8);
          w[j + kHalf] = static_cast<float>(static_cast<int32_t>(col[j] >> 4) - 8);
        }
      } else {
        for (int64_t j = 0; j < nb / 2; ++j) {
          w[2 * j] = static_cast<float>(static_cast<int32_t>(col[j] & 0xf) - 8);
          w[2 * j + 1] = static_cast<float>(static_cast<int32_t>(col[j] >> 4) - 8);
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        const float xv = px[i * k + q];
        xsum[i] += xv;
        for (int64_t j = 0; j < nb; ++j) part[i][j] += xv * w[j];
      }
    }
    float sc[kInt4MaxBlock], zr[kInt4MaxBlock];
    int4_scale_zero(p, g0 / p.group, n0, nb, sc, zr);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nb; ++j) acc[i][j] += part[i][j] * sc[j] + xsum[i] * zr[j];
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < nb; ++j) pc[i * p.n + n0 + j] = acc[i][j];
}

// 16 float lanes, and the 16 bytes and 16 int32s that widen packed nibbles
// (GCC splits them into the ISA's own vectors).
typedef float V16F __attribute__((vector_size(64)));
typedef uint8_t V16B __attribute__((vector_size(16)));
typedef int32_t V16I __attribute__((vector_size(64)));

// A full block for kM rows from i0, with the running sums in vector
// registers: the array form above kept them in memory and ran at a fraction
// of the load bandwidth. Lane slot s of the sums holds the block's channel
// row_of(s). Split halves (AVX512's and AVX2's packing): byte j of a column
// holds channel j (low nibble) and j + kB / 2 (high), so slots are channels.
// Neighbour pairs in 32-row blocks (DEFAULT on x86, SVE256): byte j holds
// channels 2j and 2j + 1, so the low nibbles fill slots 0-15 with the even
// channels and the high ones slots 16-31 with the odd; scales and results
// are permuted to match, once a group and once a block.
template <int64_t kB, bool kSplit>
constexpr int64_t int4_row_of(int64_t s) {
  return kSplit ? s : s < kB / 2 ? 2 * s : 2 * (s - kB / 2) + 1;
}

template <int64_t kB, bool kSplit, int kM>
AOTIRT_QUANT_INLINE void int4_vector_tile(const Int4RowsProblem& p, int64_t n0, int64_t i0) {
  static_assert(kSplit || kB == 32, "neighbour pairs fill two vectors per column only in 32-row blocks");
  constexpr int kV = static_cast<int>(kB / 16), kHalfV = kV / 2;
  const int64_t k = p.k;
  float acc[kM][kB] = {};
  const uint8_t* base = p.packed + n0 * (k / 2);
  const float* x = p.px + i0 * k;
  for (int64_t g0 = 0; g0 < k; g0 += p.group) {
    const int64_t g1 = std::min(k, g0 + p.group);
    V16F part[kM][kV] = {};
    float xsum[kM] = {};
    for (int64_t q = g0; q < g1; ++q) {
      const uint8_t* col = base + q * (kB / 2);
      V16F w[kV];
      for (int v = 0; v < kHalfV; ++v) {
        V16B bytes;
        std::memcpy(&bytes, col + 16 * v, sizeof(bytes));
        w[v] = __builtin_convertvector(__builtin_convertvector(bytes & 0xf, V16I) - 8, V16F);
        w[v + kHalfV] = __builtin_convertvector(__builtin_convertvector(bytes >> 4, V16I) - 8, V16F);
      }
      for (int i = 0; i < kM; ++i) {
        const float xv = x[i * k + q];
        xsum[i] += xv;
        for (int v = 0; v < kV; ++v) part[i][v] += xv * w[v];
      }
    }
    float sc[kB], zr[kB];
    int4_scale_zero(p, g0 / p.group, n0, kB, sc, zr);
    if (!kSplit) {
      float scs[kB], zrs[kB];
      for (int64_t t = 0; t < kB; ++t) {
        scs[t] = sc[int4_row_of<kB, kSplit>(t)];
        zrs[t] = zr[int4_row_of<kB, kSplit>(t)];
      }
      std::memcpy(sc, scs, sizeof(sc));
      std::memcpy(zr, zrs, sizeof(zr));
    }
    for (int i = 0; i < kM; ++i)
      for (int v = 0; v < kV; ++v) {
        V16F a, s, z;
        std::memcpy(&a, acc[i] + 16 * v, sizeof(a));
        std::memcpy(&s, sc + 16 * v, sizeof(s));
        std::memcpy(&z, zr + 16 * v, sizeof(z));
        a += part[i][v] * s + xsum[i] * z;
        std::memcpy(acc[i] + 16 * v, &a, sizeof(a));
      }
  }
  for (int i = 0; i < kM; ++i) {
    float* out = p.pc + (i0 + i) * p.n + n0;
    if (kSplit)
      std::memcpy(out, acc[i], sizeof(acc[i]));
    else
      for (int64_t t = 0; t < kB; ++t) out[int4_row_of<kB, kSplit>(t)] = acc[i][t];
  }
}

// A full block for every row of A, four at a time.
template <int64_t kB, bool kSplit>
AOTIRT_QUANT_INLINE void int4_vector_tiles(const Int4RowsProblem& p, int64_t n0) {
  int64_t i0 = 0;
  for (; i0 + 4 <= p.m; i0 += 4) int4_vector_tile<kB, kSplit, 4>(p, n0, i0);
  switch (p.m - i0) {
    case 3:
      int4_vector_tile<kB, kSplit, 3>(p, n0, i0);
      break;
    case 2:
      int4_vector_tile<kB, kSplit, 2>(p, n0, i0);
      break;
    case 1:
      int4_vector_tile<kB, kSplit, 1>(p, n0, i0);
      break;
    default:
      break;
  }
}

// Blocks [begin, end) of the layout's blocks: full ones in vector registers
// where the packing allows, the rest (a shorter last block, 16-row
// neighbour pairs) in the array form, kInt4RowTile rows of A at a time.
template <int64_t kB, bool kSplit>
AOTIRT_QUANT_INLINE void int4_rows_blocks(const Int4RowsProblem& p, int64_t begin, int64_t end) {
  for (int64_t b = begin; b < end; ++b) {
    const int64_t n0 = b * kB, rows = std::min(kB, p.n - n0);
    if constexpr (kSplit || kB == 32) {
      if (rows == kB) {
        int4_vector_tiles<kB, kSplit>(p, n0);
        continue;
      }
    }
    for (int64_t i0 = 0; i0 < p.m; i0 += kInt4RowTile) {
      const int64_t mt = std::min(kInt4RowTile, p.m - i0);
      if (rows == kB)
        int4_rows_block<kB, kSplit, true>(p, n0, rows, i0, mt);
      else
        int4_rows_block<kB, kSplit, false>(p, n0, rows, i0, mt);
    }
  }
}

// The layout's block shape as template arguments.
AOTIRT_QUANT_INLINE void int4_rows_dispatch(const Int4RowsProblem& p, int64_t begin, int64_t end) {
  const Int4Layout& l = p.layout;
  if (l.block_n == 64 && l.split_halves)
    int4_rows_blocks<64, true>(p, begin, end);
  else if (l.block_n == 32 && l.split_halves)
    int4_rows_blocks<32, true>(p, begin, end);
  else if (l.block_n == 32)
    int4_rows_blocks<32, false>(p, begin, end);
  else
    int4_rows_blocks<16, false>(p, begin, end);
}

using Int4RowsFn = void (*)(const Int4RowsProblem&, int64_t, int64_t);

void int4_rows_portable(const Int4RowsProblem& p, int64_t begin, int64_t end) { int4_rows_dispatch(p, begin, end); }

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void int4_rows_avx2(const Int4RowsProblem& p, int64_t begin, int64_t end) {
  int4_rows_dispatch(p, begin, end);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma"))) void int4_rows_avx512(const Int4RowsProblem& p,
                                                                                     int64_t begin, int64_t end) {
  int4_rows_dispatch(p, begin, end);
}
#endif

// Threads for |items| ranges of a product of an n x k weight: one below
// 64 Ki weights, where starting a team costs more than it saves.
int few_rows_threads(int64_t n, int64_t k, int64_t items) {
  return n * k >= (int64_t{1} << 16) ? static_cast<int>(std::min<int64_t>(omp_get_max_threads(), items)) : 1;
}

void int4_few_rows(const Int4RowsProblem& p) {
  static const Int4RowsFn fn = pick_kernel(int4_rows_portable AOTIRT_X86_KERNELS(int4_rows_avx2, int4_rows_avx512));
  const int64_t blocks = (p.n + p.layout.block_n - 1) / p.layout.block_n;
  parallel_ranges(blocks, few_rows_threads(p.n, p.k, blocks),
                  [&](int64_t begin, int64_t end) { fn(p, begin, end); });
}

// Output channels [n0, n0 + rows) of the int4 weight dequantized as W^T,
// dst [k, rows] float32; n0 is a multiple of the layout's block. Each
// packed column's nibbles land side by side, and the K range is split over
// the threads: the per-element walk this replaced ran on one thread and
// took longer than the BLAS call it fed.
void int4_dequant_columns(const Int4Layout& l, const uint8_t* packed, const float* psz, int64_t n, int64_t k,
                          int64_t group, int64_t n0, int64_t rows, float* dst) {
  const int64_t half = l.block_n / 2;
#pragma omp parallel for schedule(static) if (rows * k >= (int64_t{1} << 16) && omp_get_max_threads() > 1)
  for (int64_t q = 0; q < k; ++q) {
    float* out = dst + q * rows;
    const float* gsz = psz + (q / group) * n * 2;
    for (int64_t b0 = n0; b0 < n0 + rows; b0 += l.block_n) {
      const int64_t nb = std::min(l.block_n, n - b0);
      const uint8_t* col = packed + b0 * (k / 2) + q * (nb / 2);
      const float* sz = gsz + b0 * 2;
      float* o = out + (b0 - n0);
      if (l.split_halves && nb == l.block_n) {
        for (int64_t j = 0; j < half; ++j) {
          o[j] = static_cast<float>((col[j] & 0xf) - 8) * sz[2 * j] + sz[2 * j + 1];
          o[j + half] = static_cast<float>((col[j] >> 4) - 8) * sz[2 * (j + half)] + sz[2 * (j + half) + 1];
        }
      } else {
        for (int64_t j = 0; j < nb; ++j) {
          const uint8_t byte = col[j / 2];
          o[j] = static_cast<float>(((j & 1) ? byte >> 4 : byte & 0xf) - 8) * sz[2 * j] + sz[2 * j + 1];
        }
      }
    }
  }
}

// C[m, n] (float32) = (A[m, k] @ W[n, k]^T) * scale[n] for m <= kInt8FewRows
// int8 weights read in place, a row of W at a time against up to four rows
// of A, 16 lanes of running sums each. Compiled per ISA like the int4
// kernel: the baseline build widened the bytes a few at a time and ran
// several times slower than torch's own kernel.
struct Int8RowsProblem {
  const int8_t* pw;     // [n, k]
  const float* scale;   // [n]
  const float* px;      // [m, k]
  float* pc;            // [m, n]
  int64_t m, n, k;
};


// kJ weight rows from j against kM rows of A from i0: each widened weight
// vector serves kM products and each loaded A vector kJ, and the kJ * kM
// chains of multiply-adds are independent (one chain alone is bound by
// their latency).
template <int kJ, int kM>
AOTIRT_QUANT_INLINE void int8_rows_tile(const Int8RowsProblem& p, int64_t j, int64_t i0) {
  const int64_t k = p.k;
  const int8_t* w = p.pw + j * k;
  const float* x = p.px + i0 * k;
  V16F acc[kJ][kM] = {};
  int64_t q = 0;
  for (; q + 16 <= k; q += 16) {
    V16F wv[kJ];
    for (int r = 0; r < kJ; ++r) {
      // Biased to unsigned and widened with a zero extension: GCC 12 lowers
      // the signed int8 -> int32 conversion inside this loop to per-byte
      // extracts.
      V16B b;
      std::memcpy(&b, w + r * k + q, sizeof(b));
      wv[r] = __builtin_convertvector(__builtin_convertvector(b ^ 0x80, V16I) - 128, V16F);
    }
    for (int i = 0; i < kM; ++i) {
      V16F xv;
      std::memcpy(&xv, x + i * k + q, sizeof(xv));
      for (int r = 0; r < kJ; ++r) acc[r][i] += xv * wv[r];
    }
  }
  for (int r = 0; r < kJ; ++r)
    for (int i = 0; i < kM; ++i) {
      float sum = 0.0f;
      for (int l = 0; l < 16; ++l) sum += acc[r][i][l];
      for (int64_t t = q; t < k; ++t) sum += x[i * k + t] * static_cast<float>(w[r * k + t]);
      p.pc[(i0 + i) * p.n + j + r] = sum * p.scale[j + r];
    }
}

// Weight rows [j, j + kJ) against every row of A, four at a time.
template <int kJ>
AOTIRT_QUANT_INLINE void int8_rows_all(const Int8RowsProblem& p, int64_t j) {
  int64_t i0 = 0;
  for (; i0 + 4 <= p.m; i0 += 4) int8_rows_tile<kJ, 4>(p, j, i0);
  switch (p.m - i0) {
    case 3:
      int8_rows_tile<kJ, 3>(p, j, i0);
      break;
    case 2:
      int8_rows_tile<kJ, 2>(p, j, i0);
      break;
    case 1:
      int8_rows_tile<kJ, 1>(p, j, i0);
      break;
    default:
      break;
  }
}

AOTIRT_QUANT_INLINE void int8_rows_range(const Int8RowsProblem& p, int64_t begin, int64_t end) {
  int64_t j = begin;
  // Four weight rows a pass for one or two rows of A, two for more.
  if (p.m <= 2) {
    for (; j + 4 <= end; j += 4) int8_rows_all<4>(p, j);
  } else {
    for (; j + 2 <= end; j += 2) int8_rows_all<2>(p, j);
  }
  for (; j < end; ++j) int8_rows_all<1>(p, j);
}

using Int8RowsFn = void (*)(const Int8RowsProblem&, int64_t, int64_t);

void int8_rows_portable(const Int8RowsProblem& p, int64_t begin, int64_t end) { int8_rows_range(p, begin, end); }

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void int8_rows_avx2(const Int8RowsProblem& p, int64_t begin, int64_t end) {
  int8_rows_range(p, begin, end);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma"))) void int8_rows_avx512(const Int8RowsProblem& p,
                                                                                     int64_t begin, int64_t end) {
  int8_rows_range(p, begin, end);
}
#endif

void int8_few_rows(const Int8RowsProblem& p) {
  static const Int8RowsFn fn = pick_kernel(int8_rows_portable AOTIRT_X86_KERNELS(int8_rows_avx2, int8_rows_avx512));
  parallel_ranges(p.n, few_rows_threads(p.n, p.k, p.n), [&](int64_t begin, int64_t end) { fn(p, begin, end); });
}

// Float32 |c| as |dtype| (itself when float32).
Result<TensorImpl> as_dtype(TensorImpl c, DType dtype) {
  if (dtype == DType::kFloat32) return c;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(c.sizes(), dtype, DeviceId{}));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, c));
  return out;
}

// One input row quantized to int8 as torch's reference kernel does.
struct QuantRow {
  float recip_scale = 0;
  int32_t zero_point = 0;
};

QuantRow quantize_row(const float* x, int64_t k, int8_t* q) {
  float lo = 0.0f, hi = 0.0f;  // the range always includes 0
  for (int64_t i = 0; i < k; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  constexpr float kQMin = -128.0f, kQMax = 127.0f;
  const float scale = lo == hi ? 1.0f : (kQMax - kQMin) / (hi - lo);
  QuantRow row;
  row.recip_scale = scale != 0.0f ? 1.0f / scale : 0.0f;
  const float scaled_lo = lo * scale, scaled_hi = hi * scale;
  // The zero point from whichever end has the smaller error, clamped, then
  // rounded half to even (lrintf in the default rounding mode).
  float zp = kQMin + scaled_lo + kQMax + scaled_hi > 0.0f ? kQMin - scaled_lo : kQMax - scaled_hi;
  zp = std::min(std::max(zp, kQMin), kQMax);
  row.zero_point = static_cast<int32_t>(std::nearbyint(zp));
  for (int64_t i = 0; i < k; ++i) {
    // std::round: halves away from zero, as torch's kernel.
    const int32_t v = static_cast<int32_t>(std::round(x[i] * scale)) + row.zero_point;
    q[i] = static_cast<int8_t>(std::min(std::max(v, int32_t{-128}), int32_t{127}));
  }
  return row;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                  AtenTensorHandle scales, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a, ops::weight_int8pack_mm_args(self, mat2, scales));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.a, "self"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.b, "mat2"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.scales, "scales"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl s, contiguous_as(*a.scales, DType::kFloat32));
    const int8_t* pw = static_cast<const int8_t*>(a.b->data_ptr());
    const int64_t k = a.k;
    if (a.m > 0 && a.m <= in_place_rows(kInt8FewRows, kInt8FewRowsPortable) && a.n > 0 && k > 0) {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*a.a, DType::kFloat32));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(DimVector{a.m, a.n}, DType::kFloat32, DeviceId{}));
      int8_few_rows(Int8RowsProblem{pw, static_cast<const float*>(s.data_ptr()),
                                    static_cast<const float*>(x.data_ptr()), static_cast<float*>(c.data_ptr()), a.m,
                                    a.n, k});
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, as_dtype(std::move(c), a.a->dtype()));
      *ret0 = new_handle(std::move(out));
      return Status();
    }
    auto dequant = [&](int64_t n0, int64_t rows, float* dst) {
      const int8_t* src = pw + n0 * k;
      const int64_t total = rows * k;
#pragma omp parallel for schedule(static) if (total >= (int64_t{1} << 16) && omp_get_max_threads() > 1)
      for (int64_t i = 0; i < total; ++i) dst[i] = static_cast<float>(src[i]);
    };
    Result<TensorImpl> r =
        weight_only_gemm(a, a.a->dtype(), static_cast<const float*>(s.data_ptr()), SlabLayout::kRows, dequant);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, std::move(r));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

namespace {

Status check_int4_devices(const ops::WeightOnlyArgs& a, const char* x_name, const char* w_name) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.a, x_name));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.b, w_name));
  return check_cpu(*a.scales, "qScaleAndZeros");
}

// _weight_int4pack_mm_cpu_tensor of checked arguments and group size.
Result<TensorImpl> int4pack_mm(const ops::WeightOnlyArgs& a, int64_t group) {
  const uint8_t* pw = static_cast<const uint8_t*>(a.b->data_ptr());
  const int64_t n = a.n, k = a.k;
  const Int4Layout layout = int4_layout(aten_cpu_capability(cpu_options().aten_cpu_capability));
  if (a.m > 0 && a.m <= in_place_rows(kInt4FewRows, kInt4FewRowsPortable) && n > 0 && k > 0 &&
      layout.block_n <= kInt4MaxBlock) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl sz, contiguous_as(*a.scales, a.scales->dtype()));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*a.a, DType::kFloat32));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(DimVector{a.m, n}, DType::kFloat32, DeviceId{}));
    int4_few_rows(Int4RowsProblem{layout, pw, sz.data_ptr(), sz.dtype(), static_cast<const float*>(x.data_ptr()),
                                  static_cast<float*>(c.data_ptr()), a.m, n, k, group});
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, as_dtype(std::move(c), a.a->dtype()));
    return out;
  }
  // [groups, N, 2] as float32, contiguous.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl sz, contiguous_as(*a.scales, DType::kFloat32));
  const float* psz = static_cast<const float*>(sz.data_ptr());
  auto dequant = [&](int64_t n0, int64_t rows, float* dst) {
    int4_dequant_columns(layout, pw, psz, n, k, group, n0, rows, dst);
  };
  return weight_only_gemm(a, a.a->dtype(), nullptr, SlabLayout::kColumns, dequant);
}

// out[m, n / 2] = silu(gate) * up of |prod| [m, n] (gate the first half of
// each row), rounded to prod's dtype after silu and after the multiply, as
// transformers' MLP rounds.
Result<TensorImpl> silu_mul_halves(const TensorImpl& prod, int64_t m, int64_t n) {
  const DType dtype = prod.dtype();
  const int64_t half = n / 2;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl pf, contiguous_as(prod, DType::kFloat32));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl of, empty_contiguous(DimVector{m, half}, DType::kFloat32, DeviceId{}));
  const float* pp = static_cast<const float*>(pf.data_ptr());
  float* po = static_cast<float*>(of.data_ptr());
  auto round_to = [dtype](float v) {
    if (dtype == DType::kBFloat16) return bf16_to_float(float_to_bf16(v));
    if (dtype == DType::kFloat16) return half_to_float(float_to_half(v));
    return v;
  };
  for (int64_t r = 0; r < m; ++r) {
    const float* gate = pp + r * n;
    const float* up = gate + half;
    for (int64_t i = 0; i < half; ++i) po[r * half + i] = round_to(round_to(gate[i] / (1.0f + std::exp(-gate[i]))) * up[i]);
  }
  return as_dtype(std::move(of), dtype);
}

}  // namespace

AOTITorchError aoti_torch_cpu__weight_int4pack_mm_cpu_tensor(AtenTensorHandle X, AtenTensorHandle w,
                                                             AtenTensorHandle qGroupSize,
                                                             AtenTensorHandle qScaleAndZeros,
                                                             AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a, ops::weight_int4pack_mm_args(X, w, qGroupSize, qScaleAndZeros));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*impl_of(qGroupSize), "qGroupSize"));
    AOTIRT_RETURN_IF_ERROR(check_int4_devices(a, "X", "w"));
    const int64_t group = *static_cast<const int64_t*>(impl_of(qGroupSize)->data_ptr());
    AOTIRT_RETURN_IF_ERROR(ops::check_int4_group(a, group));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, int4pack_mm(a, group));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_aotirt_int4pack_mm_silu_mul(AtenTensorHandle x, AtenTensorHandle qdata,
                                                          int64_t group_size, AtenTensorHandle scale_and_zero,
                                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a,
                            ops::int4pack_mm_silu_mul_args(x, qdata, group_size, scale_and_zero, /*cuda=*/false));
    AOTIRT_RETURN_IF_ERROR(check_int4_devices(a, "x", "qdata"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl prod, int4pack_mm(a, group_size));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, silu_mul_halves(prod, a.m, a.n));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__dyn_quant_pack_4bit_weight(AtenTensorHandle weights, AtenTensorHandle scales_zeros,
                                                          AtenTensorHandle* bias, int64_t block_size,
                                                          int64_t in_features, int64_t out_features,
                                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    Result<ops::DynQuantArgs> args =
        ops::dyn_quant_pack_args(weights, scales_zeros, bias, block_size, in_features, out_features);
    AOTIRT_ASSIGN_OR_RETURN(ops::DynQuantArgs d, std::move(args));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*d.weights, "weights"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*d.scales, "scales_zeros"));
    if (d.bias) AOTIRT_RETURN_IF_ERROR(check_cpu(*d.bias, "bias"));
    const int64_t nw = d.weights->numel(), ns = d.scales->numel(), nb = d.bias ? d.bias->numel() : 0;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{nw + ns + nb}, DType::kFloat32, DeviceId{}));
    float* dst = static_cast<float*>(out.data_ptr());
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, contiguous_as(*d.weights, DType::kUInt8));
    const uint8_t* pw = static_cast<const uint8_t*>(w.data_ptr());
    for (int64_t i = 0; i < nw; ++i) dst[i] = static_cast<float>(pw[i]);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl s, contiguous_as(*d.scales, DType::kFloat32));
    if (ns > 0) std::memcpy(dst + nw, s.data_ptr(), static_cast<size_t>(ns) * sizeof(float));
    if (nb > 0) {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl b, contiguous_as(*d.bias, DType::kFloat32));
      std::memcpy(dst + nw + ns, b.data_ptr(), static_cast<size_t>(nb) * sizeof(float));
    }
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__dyn_quant_matmul_4bit(AtenTensorHandle inp, AtenTensorHandle packed_weights,
                                                     int64_t block_size, int64_t in_features, int64_t out_features,
                                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    Result<ops::DynQuantArgs> args =
        ops::dyn_quant_matmul_args(inp, packed_weights, block_size, in_features, out_features);
    AOTIRT_ASSIGN_OR_RETURN(ops::DynQuantArgs d, std::move(args));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*d.input, "inp"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*d.packed, "packed_weights"));
    const int64_t m = d.m, n = d.n, k = d.k, blocks = k / d.block;
    const bool bf16 = d.input->dtype() == DType::kBFloat16;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{m, n}, d.input->dtype(), DeviceId{}));
    if (m > 0 && n > 0) {
      // bfloat16 widens to float32 exactly.
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*d.input, DType::kFloat32));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl pk, contiguous_as(*d.packed, DType::kFloat32));
      const float* px = static_cast<const float*>(x.data_ptr());
      const float* pp = static_cast<const float*>(pk.data_ptr());
      const float* scales = pp + n * k / 2;
      const float* bias = d.has_bias ? scales + n * blocks : nullptr;
      // The signed nibbles, [N, K]; each pack entry is a byte stored as float
      // (converted back by truncation, as torch's to(uint8)).
      std::vector<int8_t> w(static_cast<size_t>(n * k));
      for (int64_t i = 0; i < n * k / 2; ++i) {
        const uint8_t byte = static_cast<uint8_t>(static_cast<int32_t>(pp[i]));
        w[2 * i] = static_cast<int8_t>((byte & 0xf) - 8);
        w[2 * i + 1] = static_cast<int8_t>((byte >> 4) - 8);
      }
      std::vector<int8_t> q(static_cast<size_t>(m * k));
      std::vector<QuantRow> rows(static_cast<size_t>(m));
      for (int64_t r = 0; r < m; ++r) rows[r] = quantize_row(px + r * k, k, q.data() + r * k);
      float* po = static_cast<float*>(out.data_ptr());
      uint16_t* pb = static_cast<uint16_t*>(out.data_ptr());
      constexpr float kBf16Max = 3.38953139e38f;
      const bool parallel = n > 1 && m * n * k >= (int64_t{1} << 16);
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t c = 0; c < n; ++c) {
        const int8_t* wc = w.data() + c * k;
        for (int64_t r = 0; r < m; ++r) {
          const int8_t* qr = q.data() + r * k;
          const int32_t zp = rows[r].zero_point;
          float acc = 0.0f;
          for (int64_t b = 0; b < blocks; ++b) {
            int32_t iacc = 0;
            for (int64_t i = b * d.block; i < (b + 1) * d.block; ++i) iacc += (qr[i] - zp) * wc[i];
            acc += static_cast<float>(iacc) * scales[c * blocks + b];
          }
          acc *= rows[r].recip_scale;
          if (bias) acc += bias[c];
          if (bf16) {
            // torch's bfloat16 kernel clamps to bfloat16's range and
            // truncates (no rounding) to bfloat16.
            acc = std::min(std::max(acc, -kBf16Max), kBf16Max);
            uint32_t bits;
            std::memcpy(&bits, &acc, 4);
            pb[r * n + c] = static_cast<uint16_t>(bits >> 16);
          } else {
            po[r * n + c] = acc;
          }
        }
      }
    }
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

}  // extern "C"
