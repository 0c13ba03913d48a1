// Scaled-dot-product attention on tensor cores, for float16 and bfloat16 with
// head dims 64 and 128 (a prefill; decode goes elsewhere, see
// cuda_attention_kernel.h), and for float32 with head dim 64 in three TF32
// passes (attention_f32_kernel, below). FlashAttention-2's scheme written with mma.sync
// m16n8k16: each warp owns 16 query rows; scores stay in the mma
// accumulators, where each thread holds two rows (g and g + 8, g = lane / 4),
// so the online softmax needs only shuffles within a group of four lanes, and
// the probabilities are repacked in registers as the A operand of the product
// with V. Accumulation is float32. Two block shapes: with many query tiles, 4
// warps own 64 rows and share each 64-key K/V tile in shared memory; with few
// (a short prefill, where those blocks would leave SMs idle), 4 warps own 16
// rows and split the keys between them, merging at the end. Either way K and
// V tiles are copied with cp.async a step ahead of their use, V's fragments
// come out of shared memory through ldmatrix.trans, and only the tiles that
// cross the causal diagonal, the end of the keys or a mask test each key.
// A mask is first summed up per tile (attention_mask_tiles_kernel): blocks
// stop after the last tile that shows their rows a key, warps skip the tiles
// that hide every key from theirs, and tiles the mask leaves alone take the
// unmasked path, so a causal or padding mask given as a tensor costs about
// what is_causal does; keys hidden with -65504 rather than -inf count as
// hidden too for rows that see another key (kCudaMaskNegligible).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/ops/attention/cuda_attention_kernel.h"

namespace aotirt {
namespace {

constexpr int kKeys = 64;            // keys per tile
constexpr int kPad = 8;              // elements of padding per shared row (bank spread)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <class T>
struct Mma;

template <>
struct Mma<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
    return *reinterpret_cast<uint32_t*>(&v);
  }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};

template <>
struct Mma<__half> {
  static __device__ __forceinline__ void run(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};

__device__ __forceinline__ float mask_value(const CudaAttentionParams& p, int64_t b, int64_t h, int64_t i,
                                            int64_t key) {
  const char* mp = static_cast<const char*>(p.mask);
  const int64_t off =
      b * p.mask_strides[0] + h * p.mask_strides[1] + i * p.mask_strides[2] + key * p.mask_strides[3];
  if (p.mask_kind == kCudaMaskBool) return mp[off] ? 0.f : -INFINITY;
  switch (p.mask_dtype) {
    case 5: return __half2float(reinterpret_cast<const __half*>(mp)[off]) * kLog2e;
    case 15: return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(mp)[off]) * kLog2e;
    default: return reinterpret_cast<const float*>(mp)[off] * kLog2e;
  }
}

// Whether each query row of the map's row tile from |first_row| sees a key
// above kCudaMaskRealAbove (CudaAttentionParams::mask_rows_real), so that
// tiles of negligible values hide their keys from all of them. Rows past
// the queries count as such: nothing is computed for them.
__device__ __forceinline__ bool mask_rows_real(const CudaAttentionParams& p, int64_t b, int64_t h,
                                               int64_t first_row) {
  if (!p.mask_rows_real || first_row >= p.len_q) return false;
  const uint4 w = *reinterpret_cast<const uint4*>(p.mask_rows_real + b * p.mask_row_strides[0] +
                                                  h * p.mask_row_strides[1] + first_row);
  const uint32_t words[4] = {w.x, w.y, w.z, w.w};
  const int64_t rows = min(static_cast<int64_t>(kCudaMaskTileRows), p.len_q - first_row);
#pragma unroll
  for (int r = 0; r < kCudaMaskTileRows; ++r)
    if (r < rows && ((words[r / 4] >> (8 * (r % 4))) & 0xFFu) == 0) return false;
  return true;
}

// What a block of the prefill kernels works on: grid y is (batch, head),
// grid x a tile of |rows| query rows from row0, which see keys before kv_end;
// q, k, v point at the head's rows (k and v at its KV head).
template <class T>
struct BlockRows {
  int64_t b, h, row0, kv_end;
  const T *q, *k, *v;
  __device__ __forceinline__ BlockRows(const CudaAttentionParams& p, int rows) {
    const int64_t bh = blockIdx.y;
    b = bh / p.heads_q;
    h = bh % p.heads_q;
    const int64_t hk = h / (p.heads_q / p.heads_kv);
    // Causal rows near the end see the most keys: their tiles go first (as
    // they do under a mask, usually causal when it is worth a map).
    const bool late_first = p.causal || p.mask_tiles;
    const int64_t tile = late_first ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    row0 = tile * rows;
    kv_end = p.causal ? min(p.len_kv, min(row0 + rows, p.len_q) + p.causal_offset) : p.len_kv;
    if (p.mask_tiles) {
      // The tiles past the last one that shows any of the rows a key.
      int64_t shown = 0;
      for (int64_t r = row0; r < row0 + rows && r < p.len_q; r += kCudaMaskTileRows) {
        const int64_t at = b * p.mask_end_strides[0] + h * p.mask_end_strides[1] +
                           (r / kCudaMaskTileRows) * p.mask_end_strides[2];
        const int32_t* ends = mask_rows_real(p, b, h, r) ? p.mask_tile_end_real : p.mask_tile_end;
        shown = max(shown, static_cast<int64_t>(ends[at]));
      }
      kv_end = min(kv_end, shown * kCudaMaskTileKeys);
    }
    q = static_cast<const T*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
    k = static_cast<const T*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
    v = static_cast<const T*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1];
  }
};

__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  // A source size of 0 fills the 16 bytes with zeros (rows past the end).
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Starts copying rows [first, first + kRows) of a [len, D] matrix (row
// stride |ld|, features contiguous, 16-byte aligned rows) into shared rows of
// D + kPad elements, with threads tid = 0..kThreads-1; rows past |len| become
// zeros. The caller commits the group and waits for it. cp.async rather than
// loads through registers: in the register version's PTX each 16-byte load
// is followed by its store to shared memory, which waits for it, and the
// next load stays behind that store, so a thread's copies of a tile ran one
// after another. With cp.async, and the next tile's copy under this one's
// products (tc_key_loop), GPT-2's prefill attention kernel runs faster
// (bench/notes.md, row 33).
template <class T, int D, int kRows, int kThreads>
__device__ __forceinline__ void copy_tile_async(T* dst, const T* src, int64_t ld, int64_t first, int64_t len,
                                                int tid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  static_assert(kRows * kChunks % kThreads == 0, "the tile does not split evenly over the threads");
#pragma unroll
  for (int it = 0; it < kRows * kChunks / kThreads; ++it) {
    const int idx = tid + it * kThreads;
    const int r = idx / kChunks, c = idx % kChunks;
    const bool ok = first + r < len;
    cp_async16(dst + r * (D + kPad) + c * 8, ok ? src + (first + r) * ld + c * 8 : src, ok);
  }
}

// A warp's 16 query rows as mma A fragments, one per 16 features, from shared
// rows of D + kPad elements.
template <class T, int D>
__device__ __forceinline__ void load_q_fragments(uint32_t (&qf)[D / 16][4], const T* qw, int g, int t) {
  constexpr int kStride = D + kPad;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    const int c = ks * 16 + 2 * t;
    qf[ks][0] = *reinterpret_cast<const uint32_t*>(qw + g * kStride + c);
    qf[ks][1] = *reinterpret_cast<const uint32_t*>(qw + (g + 8) * kStride + c);
    qf[ks][2] = *reinterpret_cast<const uint32_t*>(qw + g * kStride + c + 8);
    qf[ks][3] = *reinterpret_cast<const uint32_t*>(qw + (g + 8) * kStride + c + 8);
  }
}

// Sum over the four lanes of a group, which hold shares of the same two rows.
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Online-softmax state of one warp's 16 query rows: this thread holds rows
// i0 = g and i1 = g + 8 (their running max m in base 2, its share l of the
// row sums, and its slice of the output accumulator).
template <int D>
struct TcRowState {
  float o[D / 8][4];
  float m0, m1, l0, l1;
  __device__ __forceinline__ void init() {
#pragma unroll
    for (int d = 0; d < D / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
    m0 = m1 = -INFINITY;
    l0 = l1 = 0.f;
  }
};

// 2^x on the special-function unit (ex2.approx, relative error near 2^-22,
// below float32 attention's tolerance): exp2f adds range handling around the
// same instruction, which the scores, at most 0 after the max is taken off,
// never need.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The online-softmax step for one tile's scores |s| (mma accumulators: this
// thread's rows i0 and i1, keys j0 + n * 8 + 2t and + 1): scale, and with
// kMasked the causal, length and mask tests of each key; the rows' new
// maxima; |st| rescaled; |s| replaced by the probabilities exp2(s - max).
template <int D, int kKeysT, bool kMasked>
__device__ __forceinline__ void softmax_tile(const CudaAttentionParams& p, float (&s)[kKeysT / 8][4], int j0,
                                             int kv_end, int64_t b, int64_t h, int i0, int i1, float qk_scale, int t,
                                             TcRowState<D>& st) {
  float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
  for (int n = 0; n < kKeysT / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[n][e] * qk_scale;
      if (kMasked) {
        const int key = j0 + n * 8 + 2 * t + (e & 1);
        const int i = e < 2 ? i0 : i1;
        if (key >= kv_end || (p.causal && key > i + static_cast<int>(p.causal_offset))) x = -INFINITY;
        else if (p.mask_kind != kCudaMaskNone && i < p.len_q) x += mask_value(p, b, h, i, key);
      }
      s[n][e] = x;
    }
    mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
    mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
  }
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
  mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
  mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
  const float n0 = fmaxf(st.m0, mx0), n1 = fmaxf(st.m1, mx1);
  // A row with no visible key yet keeps -inf; exp2 of -inf is 0, and the
  // base 0 keeps it from producing NaN.
  const float base0 = n0 == -INFINITY ? 0.f : n0, base1 = n1 == -INFINITY ? 0.f : n1;
  const float c0 = fast_exp2(st.m0 - base0), c1 = fast_exp2(st.m1 - base1);
  st.m0 = n0;
  st.m1 = n1;
  st.l0 *= c0;
  st.l1 *= c1;
#pragma unroll
  for (int d = 0; d < D / 8; ++d) {
    st.o[d][0] *= c0;
    st.o[d][1] *= c0;
    st.o[d][2] *= c1;
    st.o[d][3] *= c1;
  }
#pragma unroll
  for (int n = 0; n < kKeysT / 8; ++n) {
    s[n][0] = fast_exp2(s[n][0] - base0);
    s[n][1] = fast_exp2(s[n][1] - base0);
    s[n][2] = fast_exp2(s[n][2] - base1);
    s[n][3] = fast_exp2(s[n][3] - base1);
    st.l0 += s[n][0] + s[n][1];
    st.l1 += s[n][2] + s[n][3];
  }
}

// softmax_tile for the keys [j0, j0 + kKeysT) of a warp whose rows start at
// |first_row|: a tile every one of whose keys each row sees (all before
// kv_end, none past the first row when causal, no mask) skips the per-key
// tests, which were most of a tile's instructions; the others (the diagonal,
// the last partial tile, masks) take them. Lengths fit in int
// (cuda_attention_tc_eligible).
// |tile| is the mask's CudaMaskTile there (mask_tile).
template <int D, int kKeysT>
__device__ __forceinline__ void softmax_step(const CudaAttentionParams& p, float (&s)[kKeysT / 8][4], int64_t j0,
                                             int64_t kv_end, int64_t b, int64_t h, int64_t i0, int64_t i1,
                                             int64_t first_row, float qk_scale, int t, TcRowState<D>& st,
                                             int tile = kCudaMaskTileMixed) {
  const bool plain =
      (p.mask_kind == kCudaMaskNone || tile == kCudaMaskTileShown) && j0 + kKeysT <= kv_end &&
      (!p.causal || j0 + kKeysT - 1 <= first_row + p.causal_offset);
  if (plain)
    softmax_tile<D, kKeysT, false>(p, s, 0, 0, b, h, 0, 0, qk_scale, t, st);
  else
    softmax_tile<D, kKeysT, true>(p, s, static_cast<int>(j0), static_cast<int>(kv_end), b, h, static_cast<int>(i0),
                                  static_cast<int>(i1), qk_scale, t, st);
}

// The mask's CudaMaskTile (hidden, shown or mixed) for the 16 query rows
// from |first_row| and the keys from |j0| (a tile of kCudaMaskTileKeys keys
// or part of one); mixed without a map. Rows past the queries see nothing
// worth computing. With |rows_real| (mask_rows_real) a tile of negligible
// values hides its keys.
__device__ __forceinline__ int mask_tile(const CudaAttentionParams& p, int64_t b, int64_t h, int64_t first_row,
                                         int64_t j0, bool rows_real) {
  if (!p.mask_tiles) return kCudaMaskTileMixed;
  if (first_row >= p.len_q) return kCudaMaskTileHidden;
  const int v = p.mask_tiles[b * p.mask_tile_strides[0] + h * p.mask_tile_strides[1] +
                             (first_row / kCudaMaskTileRows) * p.mask_tile_strides[2] + j0 / kCudaMaskTileKeys];
  return rows_real && (v & kCudaMaskTileNegligible) ? kCudaMaskTileHidden : v & ~kCudaMaskTileNegligible;
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a)
               : "memory");
}

// Scores S = Q K^T of the keys of one shared K tile, in mma accumulators.
template <class T, int D, int kKeysT>
__device__ __forceinline__ void tc_scores(float (&s)[kKeysT / 8][4], const uint32_t (&qf)[D / 16][4], const T* k_s,
                                          int g, int t) {
  constexpr int kStride = D + kPad;
#pragma unroll
  for (int n = 0; n < kKeysT / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
#pragma unroll
    for (int n = 0; n < kKeysT / 8; ++n) {
      const T* kr = k_s + (n * 8 + g) * kStride + ks * 16 + 2 * t;
      Mma<T>::run(s[n], qf[ks], *reinterpret_cast<const uint32_t*>(kr), *reinterpret_cast<const uint32_t*>(kr + 8));
    }
  }
}

// O += P V for one shared V tile, P (softmax_tile's probabilities) repacked in
// registers: its accumulator layout is the A layout. 16 keys per step. V's
// B fragments (pairs of keys of one feature) come transposed out of its
// [key][feature] rows by ldmatrix, four 8x8 blocks at a time: keys 0-7 and
// 8-15 of the step for two blocks of 8 features. Lane l names row l % 8 of
// block l / 8.
template <class T, int D, int kKeysT>
__device__ __forceinline__ void tc_accumulate(TcRowState<D>& st, const float (&s)[kKeysT / 8][4], const T* v_s, int g,
                                              int t) {
  constexpr int kStride = D + kPad;
  const int lane = 4 * g + t;
  const T* vrow = v_s + (((lane >> 3) & 1) * 8 + (lane & 7)) * kStride + (lane >> 4) * 8;
#pragma unroll
  for (int kk = 0; kk < kKeysT / 16; ++kk) {
    uint32_t a[4];
    a[0] = Mma<T>::pack(s[2 * kk][0], s[2 * kk][1]);
    a[1] = Mma<T>::pack(s[2 * kk][2], s[2 * kk][3]);
    a[2] = Mma<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    a[3] = Mma<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      uint32_t bv[4];
      ldmatrix_x4_trans(bv, vrow + kk * 16 * kStride + dp * 16);
      Mma<T>::run(st.o[2 * dp], a, bv[0], bv[1]);
      Mma<T>::run(st.o[2 * dp + 1], a, bv[2], bv[3]);
    }
  }
}

// The key loop of both prefill kernels, over the tiles j0 = first, first +
// step, ... before kv_end, each of kKeysT keys in the shared tiles k_s and v_s,
// copied by the kThreads threads (tid) that |sync| joins (the block, or one
// warp). The copies run one step ahead of their use: the next K tile is
// copied while this tile's softmax and P V run, the next V tile while the
// next scores run, so one shared K and one V tile hide a copy's latency.
// On entry the first tile's K and V copies are committed, as two groups in
// that order, and no later group.
template <class T, int D, int kKeysT, int kThreads, class Sync>
__device__ __forceinline__ void tc_key_loop(const CudaAttentionParams& p, const uint32_t (&qf)[D / 16][4], T* k_s,
                                            T* v_s, const T* k, const T* v, int64_t first, int64_t step,
                                            int64_t kv_end, int64_t b, int64_t h, int64_t i0, int64_t i1,
                                            int64_t first_row, int tid, int g, int t, Sync sync,
                                            TcRowState<D>& st) {
  const float qk_scale = p.scale * kLog2e;
  static_assert(kCudaMaskTileKeys % kKeysT == 0, "a key tile must lie within one tile of the mask's map");
  const bool rows_real = mask_rows_real(p, b, h, first_row);
  for (int64_t j0 = first; j0 < kv_end; j0 += step) {
    const int64_t next = j0 + step;
    // Warp-uniform: a tile that hides every key from this warp's rows adds
    // nothing to them (the copies and syncs still run for the others).
    const int tile = mask_tile(p, b, h, first_row, j0, rows_real);
    const bool seen = tile != kCudaMaskTileHidden;
    cp_async_wait<1>();  // this tile's K (its V may still be in flight)
    sync();
    float s[kKeysT / 8][4];
    if (seen) tc_scores<T, D, kKeysT>(s, qf, k_s, g, t);
    sync();  // K is read: the next one may land
    if (next < kv_end) copy_tile_async<T, D, kKeysT, kThreads>(k_s, k, p.k_strides[2], next, kv_end, tid);
    cp_async_commit();
    if (seen) softmax_step<D, kKeysT>(p, s, j0, kv_end, b, h, i0, i1, first_row, qk_scale, t, st, tile);
    cp_async_wait<1>();  // this tile's V
    sync();
    if (seen) tc_accumulate<T, D, kKeysT>(st, s, v_s, g, t);
    sync();
    if (next < kv_end) copy_tile_async<T, D, kKeysT, kThreads>(v_s, v, p.v_strides[2], next, kv_end, tid);
    cp_async_commit();
  }
  cp_async_wait<0>();  // no copy outlives the loop (empty groups past the end)
}

struct BlockSync {
  __device__ __forceinline__ void operator()() const { __syncthreads(); }
};
struct WarpSync {
  __device__ __forceinline__ void operator()() const { __syncwarp(); }
};

template <class T, int D, int W>
__global__ void __launch_bounds__(32 * W) attention_tc_kernel(CudaAttentionParams p) {
  constexpr int kThreads = 32 * W;
  constexpr int kRowsQ = 16 * W;  // query rows per block
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int kStride = D + kPad;
  T* q_s = reinterpret_cast<T*>(smem_raw);  // [kRowsQ][kStride]
  T* k_s = q_s + kRowsQ * kStride;          // [kKeys][kStride]
  T* v_s = k_s + kKeys * kStride;           // [kKeys][kStride]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const BlockRows<T> blk(p, kRowsQ);
  const int64_t b = blk.b, h = blk.h, row0 = blk.row0;
  const T *q = blk.q, *k = blk.k, *v = blk.v;

  const int64_t kv_end = blk.kv_end;
  copy_tile_async<T, D, kRowsQ, kThreads>(q_s, q, p.q_strides[2], row0, p.len_q, threadIdx.x);
  cp_async_commit();
  if (kv_end > 0) copy_tile_async<T, D, kKeys, kThreads>(k_s, k, p.k_strides[2], 0, kv_end, threadIdx.x);
  cp_async_commit();
  if (kv_end > 0) copy_tile_async<T, D, kKeys, kThreads>(v_s, v, p.v_strides[2], 0, kv_end, threadIdx.x);
  cp_async_commit();
  cp_async_wait<2>();  // Q
  __syncthreads();
  uint32_t qf[D / 16][4];
  load_q_fragments<T, D>(qf, q_s + warp * 16 * kStride, g, t);

  const int64_t i0 = row0 + warp * 16 + g, i1 = i0 + 8;  // this thread's two query rows
  TcRowState<D> st;
  st.init();
  tc_key_loop<T, D, kKeys, kThreads>(p, qf, k_s, v_s, k, v, 0, kKeys, kv_end, b, h, i0, i1, row0 + warp * 16,
                                     threadIdx.x, g, t, BlockSync{}, st);

  const float l0 = quad_sum(st.l0), l1 = quad_sum(st.l1);
  T* out = static_cast<T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = half ? i1 : i0;
    if (i >= p.len_q) continue;
    const float l = half ? l1 : l0, m = half ? st.m1 : st.m0;
    // A row that saw no key (all masked) gives zeros and lse = -inf.
    const float inv = l > 0.f ? 1.f / l : 0.f;
    T* orow = out + i * p.out_strides[2];
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const int64_t f = d * 8 + 2 * t;
      orow[f * p.out_strides[3]] = Mma<T>::from_float(st.o[d][2 * half] * inv);
      orow[(f + 1) * p.out_strides[3]] = Mma<T>::from_float(st.o[d][2 * half + 1] * inv);
    }
    if (p.lse && t == 0)
      p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] =
          l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
  }
}

template <class T>
__device__ __forceinline__ T out_value(float v) {
  return Mma<T>::from_float(v);
}
template <>
__device__ __forceinline__ float out_value<float>(float v) {
  return v;
}

// Floats of shared memory merge_and_store uses: each warp's 16 rows of D
// partial outputs, padded to D + 8 so that the warp's 8-byte stores of them
// hit distinct banks (rows of D floats put all 8 rows of a store on one
// bank), then each row's max, sum and merge factor per warp.
template <int D, int W>
constexpr size_t merge_floats() {
  return static_cast<size_t>(W) * 16 * (D + 8) + 3 * static_cast<size_t>(W) * 16;
}

// The end of a block whose W warps each hold a softmax state for the same 16
// query rows (from row0) over different keys: the states merge through
// |red_o| (shared memory no warp reads any more, merge_floats<D, W>()) and
// the rows' outputs and log-sum-exps are written. Every thread calls it.
template <class T, int D, int W>
__device__ __forceinline__ void merge_and_store(const CudaAttentionParams& p, const TcRowState<D>& st, float* red_o,
                                                int64_t row0, int64_t b, int64_t h, int warp, int g, int t) {
  constexpr int kS = D + 8;
  const float l0 = quad_sum(st.l0), l1 = quad_sum(st.l1);

  __syncthreads();  // every warp is done with its tiles: their space holds the merge
  // red_o: [W][16][kS]
  float* red_m = red_o + W * 16 * kS;  // [W][16]
  float* red_l = red_m + W * 16;       // [W][16]
  float* red_f = red_l + W * 16;       // [W][16]: exp2(m_w - m) / l, warp w's share of the row
#pragma unroll
  for (int d = 0; d < D / 8; ++d) {
    const int f = d * 8 + 2 * t;
    *reinterpret_cast<float2*>(red_o + (warp * 16 + g) * kS + f) = make_float2(st.o[d][0], st.o[d][1]);
    *reinterpret_cast<float2*>(red_o + (warp * 16 + g + 8) * kS + f) = make_float2(st.o[d][2], st.o[d][3]);
  }
  if (t == 0) {
    red_m[warp * 16 + g] = st.m0;
    red_m[warp * 16 + g + 8] = st.m1;
    red_l[warp * 16 + g] = l0;
    red_l[warp * 16 + g + 8] = l1;
  }
  __syncthreads();
  // One thread a row: the row's max, sum and log-sum-exp, and each warp's
  // factor, so the output pass below is multiply-adds alone.
  if (threadIdx.x < 16) {
    const int r = threadIdx.x;
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < W; ++w) m = fmaxf(m, red_m[w * 16 + r]);
    float l = 0.f;
    float e[W];
#pragma unroll
    for (int w = 0; w < W; ++w) {
      const float mw = red_m[w * 16 + r];
      e[w] = mw == -INFINITY ? 0.f : fast_exp2(mw - m);
      l += red_l[w * 16 + r] * e[w];
    }
    // A row that saw no key (all masked) gives zeros and lse = -inf.
    const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) red_f[w * 16 + r] = e[w] * inv;
    const int64_t i = row0 + r;
    if (p.lse && i < p.len_q)
      p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] =
          l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
  }
  __syncthreads();

  T* out = static_cast<T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1];
  for (int idx = threadIdx.x; idx < 16 * D; idx += 32 * W) {
    const int r = idx / D, f = idx % D;
    const int64_t i = row0 + r;
    if (i >= p.len_q) continue;
    float o = 0.f;
#pragma unroll
    for (int w = 0; w < W; ++w) o += red_o[(w * 16 + r) * kS + f] * red_f[w * 16 + r];
    out[i * p.out_strides[2] + f * p.out_strides[3]] = out_value<T>(o);
  }
}

// Few query tiles (a short prefill): a block owns 16 query rows and its W
// warps take turns over the key tiles (warp w: tiles w, w + W, ...), each
// with its own shared K and V tile of kSplitKeys rows, so W times as many
// warps keep the SMs busy. At the end the warps' softmax states merge through
// shared memory.
constexpr int kSplitKeys = 32;

template <class T, int D, int W>
constexpr size_t split_smem_bytes() {
  return (16 + static_cast<size_t>(W) * 2 * kSplitKeys) * (D + kPad) * sizeof(T);
}

template <class T, int D, int W>
__global__ void __launch_bounds__(32 * W) attention_tc_split_kernel(CudaAttentionParams p) {
  constexpr int kStride = D + kPad;
  // The merge reuses the K/V tiles' space.
  static_assert(merge_floats<D, W>() * sizeof(float) <= static_cast<size_t>(W) * 2 * kSplitKeys * kStride * sizeof(T),
                "merge buffer does not fit");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);  // [16][kStride]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* kv_s = q_s + 16 * kStride;
  T* k_s = kv_s + warp * 2 * kSplitKeys * kStride;  // this warp's [kSplitKeys][kStride]
  T* v_s = k_s + kSplitKeys * kStride;
  const int g = lane / 4, t = lane % 4;
  const BlockRows<T> blk(p, 16);
  const int64_t b = blk.b, h = blk.h, row0 = blk.row0;
  const T *q = blk.q, *k = blk.k, *v = blk.v;

  const int64_t kv_end = blk.kv_end;
  const int64_t first = static_cast<int64_t>(warp) * kSplitKeys;
  copy_tile_async<T, D, 16, 32 * W>(q_s, q, p.q_strides[2], row0, p.len_q, threadIdx.x);
  cp_async_commit();
  if (first < kv_end) copy_tile_async<T, D, kSplitKeys, 32>(k_s, k, p.k_strides[2], first, kv_end, lane);
  cp_async_commit();
  if (first < kv_end) copy_tile_async<T, D, kSplitKeys, 32>(v_s, v, p.v_strides[2], first, kv_end, lane);
  cp_async_commit();
  cp_async_wait<2>();  // Q
  __syncthreads();
  uint32_t qf[D / 16][4];
  load_q_fragments<T, D>(qf, q_s, g, t);

  const int64_t i0 = row0 + g, i1 = i0 + 8;
  TcRowState<D> st;
  st.init();
  tc_key_loop<T, D, kSplitKeys, 32>(p, qf, k_s, v_s, k, v, first, W * kSplitKeys, kv_end, b, h, i0, i1, row0, lane,
                                    g, t, WarpSync{}, st);
  merge_and_store<T, D, W>(p, st, reinterpret_cast<float*>(kv_s), row0, b, h, warp, g, t);
}

// float32 on tensor cores at float32 accuracy, head dim 64: the split
// kernel's scheme with mma.sync m16n8k8 on TF32 operands, each value split
// into a TF32 head and tail and each product taken as three (tail * head,
// head * tail, head * head), so 22 significand bits take part (one pass of
// TF32 keeps 11, too few for float32 attention). Every tile's products go to
// fresh accumulators that are then added in float32: mma.sync rounds its sums
// toward zero, a bias that long sums would pile up. ViT-B/16 (197 tokens)
// and BERT-base (128) ran float32 attention as two cuBLASLt GEMMs around a
// softmax kernel, three launches per call and slower than this one
// (bench/notes.md, row 14).
constexpr int kF32Dim = 64;
constexpr int kF32Stride = kF32Dim + 4;  // floats per shared row: conflict-free fragment loads
constexpr int kF32Keys = 32;             // keys per warp tile

template <int W>
constexpr size_t f32_smem_bytes() {
  return (16 + static_cast<size_t>(W) * 2 * kF32Keys) * kF32Stride * sizeof(float);
}

// x = head + tail: head is x rounded to TF32 in integer arithmetic (half of
// TF32's last place added, the 13 bits below it cleared), tail = x - head,
// exact in float32 and passed as it is: the mma reads a TF32 operand's upper
// 19 bits, so the tail is truncated there, as CUTLASS's 3xTF32 GEMMs rely on.
// Three instructions a value; cvt.rna.tf32.f32, which rounds both, is
// emulated on sm_90 with about ten (bench/notes.md, row 16).
__device__ __forceinline__ void split_tf32(float x, uint32_t& head, uint32_t& tail) {
  head = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  tail = __float_as_uint(x - __uint_as_float(head));
}

__device__ __forceinline__ void mma_tf32(float* c, const uint32_t* a, const uint32_t* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// c += a * b in three TF32 products, the small ones first.
__device__ __forceinline__ void mma_3xtf32(float* c, const uint32_t* ah, const uint32_t* at, const uint32_t* bh,
                                           const uint32_t* bt) {
  mma_tf32(c, at, bh);
  mma_tf32(c, ah, bt);
  mma_tf32(c, ah, bh);
}

template <int W>
__global__ void __launch_bounds__(32 * W) attention_f32_kernel(CudaAttentionParams p) {
  constexpr int D = kF32Dim, kS = kF32Stride;
  static_assert(merge_floats<D, W>() <= static_cast<size_t>(W) * 2 * kF32Keys * kS, "merge buffer does not fit");
  extern __shared__ __align__(16) float fsmem[];
  float* q_s = fsmem;  // [16][kS]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* kv_s = q_s + 16 * kS;
  float* k_s = kv_s + warp * 2 * kF32Keys * kS;  // this warp's [kF32Keys][kS] K tile, then its V tile
  float* v_s = k_s + kF32Keys * kS;
  const int g = lane / 4, t = lane % 4;
  const BlockRows<float> blk(p, 16);
  const int64_t b = blk.b, h = blk.h, row0 = blk.row0;
  const float *q = blk.q, *k = blk.k, *v = blk.v;
  // [rows][D] float32 rows into shared rows of kS, zeros past |len|.
  auto load_rows = [&](float* dst, const float* src, int64_t ld, int64_t first, int rows, int64_t len, int tid,
                       int threads) {
    for (int idx = tid; idx < rows * (D / 4); idx += threads) {
      const int r = idx / (D / 4), c = idx % (D / 4);
      const bool ok = first + r < len;
      cp_async16(dst + r * kS + c * 4, ok ? src + (first + r) * ld + c * 4 : src, ok);
    }
    cp_async_commit();
  };

  load_rows(q_s, q, p.q_strides[2], row0, 16, p.len_q, threadIdx.x, 32 * W);
  cp_async_wait<0>();
  __syncthreads();
  uint32_t qh[D / 8][4], qt[D / 8][4];
#pragma unroll
  for (int ks = 0; ks < D / 8; ++ks) {
    const float* qr = q_s + g * kS + ks * 8 + t;
    split_tf32(qr[0], qh[ks][0], qt[ks][0]);
    split_tf32(qr[8 * kS], qh[ks][1], qt[ks][1]);
    split_tf32(qr[4], qh[ks][2], qt[ks][2]);
    split_tf32(qr[8 * kS + 4], qh[ks][3], qt[ks][3]);
  }

  const int64_t i0 = row0 + g, i1 = i0 + 8;
  const int64_t kv_end = blk.kv_end;
  const float qk_scale = p.scale * kLog2e;

  TcRowState<D> st;
  st.init();
  for (int64_t j0 = static_cast<int64_t>(warp) * kF32Keys; j0 < kv_end; j0 += W * kF32Keys) {
    __syncwarp();  // this warp's previous tile is consumed
    load_rows(k_s, k, p.k_strides[2], j0, kF32Keys, kv_end, lane, 32);
    load_rows(v_s, v, p.v_strides[2], j0, kF32Keys, kv_end, lane, 32);
    cp_async_wait<0>();
    __syncwarp();

    // S = Q K^T: B is K^T (k = feature, n = key).
    float sc[kF32Keys / 8][4];
#pragma unroll
    for (int n = 0; n < kF32Keys / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < D / 8; ++ks) {
#pragma unroll
      for (int n = 0; n < kF32Keys / 8; ++n) {
        const float* kr = k_s + (n * 8 + g) * kS + ks * 8 + t;
        uint32_t kh[2], kt[2];
        split_tf32(kr[0], kh[0], kt[0]);
        split_tf32(kr[4], kh[1], kt[1]);
        mma_3xtf32(sc[n], qh[ks], qt[ks], kh, kt);
      }
    }
    softmax_step<D, kF32Keys>(p, sc, j0, kv_end, b, h, i0, i1, row0, qk_scale, t, st);

    // O += P V, 8 keys per step. The accumulators hold P's keys 2t and 2t + 1,
    // which serve as the mma's k = t and k = t + 4: V's rows are read in the
    // same order, so the sum is unchanged.
    float ot[D / 8][4];
#pragma unroll
    for (int d = 0; d < D / 8; ++d) ot[d][0] = ot[d][1] = ot[d][2] = ot[d][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kF32Keys / 8; ++kk) {
      uint32_t ph[4], pt[4];
      split_tf32(sc[kk][0], ph[0], pt[0]);
      split_tf32(sc[kk][2], ph[1], pt[1]);
      split_tf32(sc[kk][1], ph[2], pt[2]);
      split_tf32(sc[kk][3], ph[3], pt[3]);
      const float* vr = v_s + (kk * 8 + 2 * t) * kS + g;
#pragma unroll
      for (int d = 0; d < D / 8; ++d) {
        uint32_t vh[2], vt[2];
        split_tf32(vr[d * 8], vh[0], vt[0]);
        split_tf32(vr[kS + d * 8], vh[1], vt[1]);
        mma_3xtf32(ot[d], ph, pt, vh, vt);
      }
    }
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
      for (int e = 0; e < 4; ++e) st.o[d][e] += ot[d][e];
  }
  merge_and_store<float, D, W>(p, st, kv_s, row0, b, h, warp, g, t);
}

template <class T, int D, int W>
cudaError_t launch_tc(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  constexpr int kRowsQ = 16 * W;
  const size_t smem = static_cast<size_t>(kRowsQ + 2 * kKeys) * (D + kPad) * sizeof(T);
  if (smem > max_smem) return cudaErrorInvalidConfiguration;
  auto kernel = attention_tc_kernel<T, D, W>;
  if (smem > 48 * 1024) {
    cudaError_t err = cuda_reserve_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
    if (err != cudaSuccess) return err;
  }
  const int64_t tiles = (p.len_q + kRowsQ - 1) / kRowsQ;
  if (p.batch * p.heads_q > 65535) return cudaErrorInvalidConfiguration;
  dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.batch * p.heads_q));
  kernel<<<grid, 32 * W, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class T, int D, int W>
cudaError_t launch_tc_split(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  constexpr size_t smem = split_smem_bytes<T, D, W>();
  if (smem > max_smem) return cudaErrorInvalidConfiguration;
  auto kernel = attention_tc_split_kernel<T, D, W>;
  if (smem > 48 * 1024) {
    cudaError_t err = cuda_reserve_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
    if (err != cudaSuccess) return err;
  }
  const int64_t tiles = (p.len_q + 15) / 16;
  if (p.batch * p.heads_q > 65535) return cudaErrorInvalidConfiguration;
  dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.batch * p.heads_q));
  kernel<<<grid, 32 * W, smem, stream>>>(p);
  return cudaGetLastError();
}

// Blocks of 64 query rows (four warps sharing each K/V tile) while they give
// two blocks per SM; fewer query tiles split the keys over a block's warps.
template <class T, int D>
cudaError_t launch_tc_warps(const CudaAttentionParams& p, int sm_count, size_t max_smem, cudaStream_t stream) {
  const int64_t heads = p.batch * p.heads_q;
  const int64_t want = 2 * static_cast<int64_t>(sm_count);
  if (heads * ((p.len_q + 63) / 64) >= want) return launch_tc<T, D, 4>(p, max_smem, stream);
  return launch_tc_split<T, D, 4>(p, max_smem, stream);
}

// Key and query positions are int in the kernels' masking.
bool lengths_fit_int(const CudaAttentionParams& p) {
  constexpr int64_t kMax = INT32_MAX / 2;
  return p.len_q <= kMax && p.len_kv <= kMax;
}

bool aligned16(const void* ptr, const int64_t* strides) {
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0 || strides[3] != 1) return false;
  for (int i = 0; i < 3; ++i)
    if (strides[i] % 8 != 0) return false;
  return true;
}

}  // namespace

namespace {

// One block a tile of the map: kCudaMaskTileRows x kCudaMaskTileKeys mask
// values, four a thread (a row's are kCudaMaskTileKeys / 4 threads in a
// row). Only queries and keys inside the lengths count.
constexpr int kMaskTileThreads = kCudaMaskTileRows * kCudaMaskTileKeys / 4;

__global__ void __launch_bounds__(kMaskTileThreads)
    attention_mask_tiles_kernel(CudaAttentionParams p, int64_t heads, uint8_t* tiles, int32_t* ends,
                                int32_t* ends_real, uint8_t* rows_real, int64_t padded_rows) {
  const int64_t kt = blockIdx.x, rt = blockIdx.y;
  const int64_t mb = blockIdx.z / heads, mh = blockIdx.z % heads;
  const int64_t i = rt * kCudaMaskTileRows + threadIdx.x / (kCudaMaskTileKeys / 4);
  const int64_t key0 = kt * kCudaMaskTileKeys + (threadIdx.x % (kCudaMaskTileKeys / 4)) * 4;
  bool any = false, all = true, any_real = false, row_real = false;
  if (i < p.len_q) {
    const char* mp = static_cast<const char*>(p.mask);
    const int64_t row = mb * p.mask_strides[0] + mh * p.mask_strides[1] + i * p.mask_strides[2];
    for (int c = 0; c < 4; ++c) {
      const int64_t key = key0 + c;
      if (key >= p.len_kv) break;
      const int64_t off = row + key * p.mask_strides[3];
      bool shown, plain, real;
      if (p.mask_kind == kCudaMaskBool) {
        shown = plain = real = mp[off] != 0;
        row_real |= real;
      } else {
        float x;
        switch (p.mask_dtype) {
          case 5: x = __half2float(reinterpret_cast<const __half*>(mp)[off]); break;
          case 15: x = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(mp)[off]); break;
          default: x = reinterpret_cast<const float*>(mp)[off];
        }
        shown = x != -INFINITY;  // a NaN is shown (and stays NaN)
        plain = x == 0.f;
        real = !(x <= kCudaMaskNegligible);
        row_real |= !(x <= kCudaMaskRealAbove);
      }
      any |= shown;
      all &= plain;
      any_real |= real;
    }
  }
  // Every thread that finds its row real says so; they all write 1.
  if (row_real) rows_real[blockIdx.z * padded_rows + i] = 1;
  any = __syncthreads_or(any);
  all = __syncthreads_and(all);
  any_real = __syncthreads_or(any_real);
  if (threadIdx.x == 0) {
    const int64_t at = (mb * heads + mh) * gridDim.y + rt;
    const int exact = !any ? kCudaMaskTileHidden : (all ? kCudaMaskTileShown : kCudaMaskTileMixed);
    tiles[at * gridDim.x + kt] = static_cast<uint8_t>(exact | (any_real ? 0 : kCudaMaskTileNegligible));
    if (any) atomicMax(ends + at, static_cast<int32_t>(kt + 1));
    if (any_real) atomicMax(ends_real + at, static_cast<int32_t>(kt + 1));
  }
}

// The map's layout in its workspace: the tiles, then (zeroed before the
// kernel) both ends per row tile and the rows' flags, each [batch, head]
// run of flags padded to whole row tiles so that a tile's 16 flags are one
// aligned 16-byte load.
struct MaskMap {
  int64_t batches, heads, row_tiles, key_tiles;
  size_t tile_bytes;  // rounded up to 16
  size_t end_bytes;   // one of the two ends arrays
  size_t row_bytes;
  int64_t padded_rows() const { return row_tiles * kCudaMaskTileRows; }
};

MaskMap mask_map(const CudaAttentionParams& p) {
  MaskMap m;
  m.batches = p.mask_strides[0] != 0 ? p.batch : 1;
  m.heads = p.mask_strides[1] != 0 ? p.heads_q : 1;
  m.row_tiles = (p.len_q + kCudaMaskTileRows - 1) / kCudaMaskTileRows;
  m.key_tiles = (p.len_kv + kCudaMaskTileKeys - 1) / kCudaMaskTileKeys;
  const auto round16 = [](size_t n) { return (n + 15) & ~size_t{15}; };
  m.tile_bytes = round16(static_cast<size_t>(m.batches * m.heads * m.row_tiles * m.key_tiles));
  m.end_bytes = round16(sizeof(int32_t) * static_cast<size_t>(m.batches * m.heads * m.row_tiles));
  m.row_bytes = static_cast<size_t>(m.batches * m.heads * m.padded_rows());
  return m;
}

}  // namespace

size_t cuda_attention_mask_tiles_bytes(const CudaAttentionParams& p) {
  if (p.mask_kind == kCudaMaskNone || !p.mask || p.len_kv <= kCudaMaskTileKeys || p.len_q == 0) return 0;
  const MaskMap m = mask_map(p);
  // Grid y and z limits.
  if (m.row_tiles > 65535 || m.batches * m.heads > 65535) return 0;
  return m.tile_bytes + 2 * m.end_bytes + m.row_bytes;
}

cudaError_t cuda_launch_attention_mask_tiles(CudaAttentionParams& p, void* workspace, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0) return cudaErrorInvalidValue;
  const MaskMap m = mask_map(p);
  uint8_t* tiles = static_cast<uint8_t*>(workspace);
  int32_t* ends = reinterpret_cast<int32_t*>(tiles + m.tile_bytes);
  int32_t* ends_real = reinterpret_cast<int32_t*>(tiles + m.tile_bytes + m.end_bytes);
  uint8_t* rows_real = tiles + m.tile_bytes + 2 * m.end_bytes;
  cudaError_t err = cudaMemsetAsync(ends, 0, 2 * m.end_bytes + m.row_bytes, stream);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(m.key_tiles), static_cast<unsigned>(m.row_tiles),
                  static_cast<unsigned>(m.batches * m.heads));
  attention_mask_tiles_kernel<<<grid, kMaskTileThreads, 0, stream>>>(p, m.heads, tiles, ends, ends_real, rows_real,
                                                                      m.padded_rows());
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  p.mask_tiles = tiles;
  p.mask_tile_strides[0] = p.mask_strides[0] != 0 ? m.heads * m.row_tiles * m.key_tiles : 0;
  p.mask_tile_strides[1] = p.mask_strides[1] != 0 ? m.row_tiles * m.key_tiles : 0;
  p.mask_tile_strides[2] = m.key_tiles;
  p.mask_tile_end = ends;
  p.mask_tile_end_real = ends_real;
  p.mask_end_strides[0] = p.mask_strides[0] != 0 ? m.heads * m.row_tiles : 0;
  p.mask_end_strides[1] = p.mask_strides[1] != 0 ? m.row_tiles : 0;
  p.mask_end_strides[2] = 1;
  p.mask_rows_real = rows_real;
  p.mask_row_strides[0] = p.mask_strides[0] != 0 ? m.heads * m.padded_rows() : 0;
  p.mask_row_strides[1] = p.mask_strides[1] != 0 ? m.padded_rows() : 0;
  p.mask_row_strides[2] = 1;
  return cudaSuccess;
}

bool cuda_attention_tc_eligible(const CudaAttentionParams& p, int compute_major) {
  return compute_major >= 8 && (p.dtype == 5 || p.dtype == 15) && p.head_dim == p.head_dim_v && lengths_fit_int(p) &&
         (p.head_dim == 64 || p.head_dim == 128) && p.len_q >= kCudaAttentionTcMinQueries && p.num_splits == 1 &&
         p.batch * p.heads_q <= 65535 && aligned16(p.q, p.q_strides) && aligned16(p.k, p.k_strides) &&
         aligned16(p.v, p.v_strides);
}

bool cuda_attention_f32_tc_eligible(const CudaAttentionParams& p, int compute_major) {
  const auto rows_ok = [](const void* ptr, const int64_t* st) {
    return reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && st[3] == 1 && st[0] % 4 == 0 && st[1] % 4 == 0 &&
           st[2] % 4 == 0;
  };
  return compute_major >= 8 && p.dtype == 6 && p.head_dim == kF32Dim && p.head_dim_v == kF32Dim && lengths_fit_int(p) &&
         p.len_q >= kCudaAttentionTcMinQueries && p.num_splits == 1 && p.batch * p.heads_q <= 65535 &&
         rows_ok(p.q, p.q_strides) && rows_ok(p.k, p.k_strides) && rows_ok(p.v, p.v_strides);
}

cudaError_t cuda_launch_attention_f32_tc(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  if (p.batch * p.heads_q * p.len_q == 0) return cudaSuccess;
  constexpr int W = 4;
  constexpr size_t smem = f32_smem_bytes<W>();
  if (smem > max_smem) return cudaErrorInvalidConfiguration;
  auto kernel = attention_f32_kernel<W>;
  if (smem > 48 * 1024) {
    cudaError_t err = cuda_reserve_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
    if (err != cudaSuccess) return err;
  }
  const int64_t tiles = (p.len_q + 15) / 16;
  if (p.batch * p.heads_q > 65535 || tiles > INT32_MAX) return cudaErrorInvalidConfiguration;
  dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(p.batch * p.heads_q));
  kernel<<<grid, 32 * W, smem, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t cuda_launch_attention_tc(const CudaAttentionParams& p, int sm_count, size_t max_smem,
                                     cudaStream_t stream) {
  if (p.batch * p.heads_q * p.len_q == 0) return cudaSuccess;
  if (p.dtype == 15) {
    if (p.head_dim == 64) return launch_tc_warps<__nv_bfloat16, 64>(p, sm_count, max_smem, stream);
    if (p.head_dim == 128) return launch_tc_warps<__nv_bfloat16, 128>(p, sm_count, max_smem, stream);
  } else if (p.dtype == 5) {
    if (p.head_dim == 64) return launch_tc_warps<__half, 64>(p, sm_count, max_smem, stream);
    if (p.head_dim == 128) return launch_tc_warps<__half, 128>(p, sm_count, max_smem, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace aotirt
